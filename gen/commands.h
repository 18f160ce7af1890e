// verisub-gen's modes as library calls: each returns the program's exit code (kExit*) and
// appends what the program prints to `out` (standard output) and `err` (standard error).
#pragma once

#include <string>

#include "gen/pipeline.h"

namespace verisub::gen {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;         // usage or config error
inline constexpr int kExitMissingRules = 3;  // a reference rule is not among the candidates

// --list-ops: the operator set (inputs, outputs, layouts, parameter domains), then the counts
// of operators and axioms and the op-set fingerprint.
int ListOpSet(std::string* out, std::string* err);

struct CandidatesCommand {
  std::string config_path;
  std::string out_path;        // the candidate rules, one per line
  std::string reference_path;  // rules that must be among the candidates (empty: none)
  int threads = -1;            // -1: the config's
  bool progress = true;
  uint64_t memory_budget_bytes = kDefaultGenMemoryBudget;  // GenOptions::memory_budget_bytes
};

// --candidates: enumerates only and writes the candidate rules; with a reference list, reports
// the listed rules that are not candidates (kExitMissingRules if any).
int WriteCandidatesCommand(const CandidatesCommand& command, std::string* out, std::string* err);

// --out / --prepruned: the pipeline (enumerate, prune, prove, prune, write) and its report.
int GenerateDatabaseCommand(const PipelineOptions& options, std::string* out, std::string* err);

}  // namespace verisub::gen
