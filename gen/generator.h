// The generator's entry point: config in, candidate rules and a report out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gen/config.h"
#include "gen/enumerator.h"
#include "gen/estimate.h"
#include "gen/pair_tester.h"
#include "ruledb/rule.h"

namespace verisub::gen {

struct GenOptions {
  int threads = -1;       // -1: the config's `threads`; 0: one per core
  bool progress = false;  // progress line on stderr
  bool rules = true;      // also parse the candidates into GenResult::rules (the pipeline's input)
  // Evaluation and the enumerated graphs must fit it: a config that cannot is refused before
  // the run (EstimateGeneration), one that outgrows it stops with an error naming the count.
  uint64_t memory_budget_bytes = kDefaultGenMemoryBudget;
};

struct StageTime {
  double wall = 0;
  double cpu = 0;  // user + system, whole process
};

struct GenReport {
  int threads = 0;
  EnumerationStats enumeration;
  PairStats pairs;
  int64_t config_candidates = 0;  // `candidate` lines not among the generated candidates
  StageTime setup_time, enumerate_time, pairs_time, rules_time;
  double wall_seconds = 0;
  double cpu_seconds = 0;    // user + system, whole process
  uint64_t peak_rss_kb = 0;  // getrusage ru_maxrss, whole process
  std::string stop_reason;   // "complete" or why the enumeration stopped early
  GenEstimate estimate;
};

struct GenResult {
  std::vector<std::string> texts;   // the candidates' canonical text, sorted, unique
  std::vector<ruledb::Rule> rules;  // the same parsed (GenOptions::rules), proof unchecked
  GenReport report;
};

StatusOr<GenResult> RunGenerator(const GenConfig& config, const GenOptions& options);

// Human-readable report, one `key: value` per line.
std::string FormatReport(const GenReport& r);

// The candidates dump: one Rule::ToText() per line (ruledb::ParseRule reads each back).
std::string CandidatesText(const std::vector<ruledb::Rule>& rules);
// Writes GenResult::texts, one per line, to `path` through a temporary file and a rename.
Status WriteCandidates(const std::vector<std::string>& texts, const std::string& path);

}  // namespace verisub::gen
