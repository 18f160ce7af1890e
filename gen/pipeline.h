// verisub-gen end to end: config -> enumerate -> prove -> prune -> rules database.
// This sits above the generator library (it links verify/), so it is its own library,
// verisub_gen_pipeline, used only by the verisub-gen program.
#pragma once

#include <string>

#include "gen/generator.h"
#include "ruledb/prune.h"
#include "verify/prover.h"

namespace verisub::gen {

struct PipelineOptions {
  std::string config_path;
  std::string out_path;  // protobuf database; the text form goes to ruledb::TextPathFor(out_path)
  int threads = -1;      // -1: the config's; 0: one per core
  bool progress = true;
  uint64_t memory_budget_bytes = kDefaultGenMemoryBudget;  // GenOptions::memory_budget_bytes
  verify::ProverOptions prover;
  // Proof times vary from run to run; by default they are left out of the file (recorded as 0)
  // so that regenerating gives the same bytes. Outcomes themselves are reproducible because
  // proofs are bounded by Z3's deterministic rlimit, not only by the wall clock.
  bool record_proof_times = false;
  ruledb::PruneOptions prune;
  // When set, every candidate that was not proved is written there, one per line with its
  // status and reason (`rule  # status reason`).
  std::string unproved_path;
  // When set, the pipeline stops after the syntactic pruning and writes the candidates the
  // prover would be given there, one per line (what `make bench-verify` proves); out_path is
  // then not needed.
  std::string prepruned_path;
};

struct PipelineReport {
  GenReport gen;
  int64_t candidates = 0;
  ruledb::PruneReport preprune;  // syntactic pruning of the candidates before proofs
  verify::VerifyReport verify;
  int64_t oracle_queries = 0, oracle_proved = 0;
  ruledb::PruneReport prune;
  int64_t rules_written = 0;
  int64_t file_bytes = 0, text_file_bytes = 0;
  double seconds = 0;
  std::string Summary() const;
};

// The default prover budget of the pipeline: a Z3 rlimit large enough for every proof of
// TASO's search space with a wide margin, and a wall-clock backstop.
verify::ProverOptions DefaultPipelineProver();

StatusOr<PipelineReport> RunPipeline(const PipelineOptions& options);

}  // namespace verisub::gen
