// verisub-gen end to end.
#include "gen/pipeline.h"

#include <z3++.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "base/file_io.h"
#include "gen/config.h"
#include "ruledb/database.h"
#include "specs/axiom.h"
#include "specs/registry.h"

namespace verisub::gen {
namespace {

constexpr const char* kToolVersion = "verisub 0.1.0";

std::string Z3Version() {
  unsigned major, minor, build, rev;
  Z3_get_version(&major, &minor, &build, &rev);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(build);
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

verify::ProverOptions DefaultPipelineProver() {
  verify::ProverOptions p;
  p.resource_limit = verify::kDefaultResourceLimit;
  p.timeout_ms = 30'000;
  return p;
}

std::string PipelineReport::Summary() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "candidates %lld, proved %d, not proved %d (refuted by evaluation %d, unknown %d, "
                "timeout %d, countermodel %d, error %d), oracle proofs %lld/%lld, rules written "
                "%lld, %lld bytes (text %lld), %.1f s\n",
                static_cast<long long>(candidates), verify.proved, verify.total - verify.proved,
                verify.refuted, verify.unknown, verify.timeout, verify.not_proved - verify.refuted,
                verify.error, static_cast<long long>(oracle_proved),
                static_cast<long long>(oracle_queries), static_cast<long long>(rules_written),
                static_cast<long long>(file_bytes), static_cast<long long>(text_file_bytes),
                seconds);
  return buf;
}

StatusOr<PipelineReport> RunPipeline(const PipelineOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  PipelineReport report;
  auto config_text = base::ReadFile(options.config_path);
  if (!config_text.ok()) return config_text.status();
  auto config = LoadConfig(options.config_path);
  if (!config.ok()) return config.status();

  GenOptions gen_options;
  gen_options.threads = options.threads;
  gen_options.progress = options.progress;
  gen_options.memory_budget_bytes = options.memory_budget_bytes;
  auto generated = RunGenerator(*config, gen_options);
  if (!generated.ok()) return generated.status();
  report.gen = generated->report;
  report.candidates = static_cast<int64_t>(generated->rules.size());

  // Most candidates are renamings, symmetric variants or instances of more general candidates;
  // dropping them before proving (a generalization counts as valid here when it is itself a
  // candidate, and is proved below like every survivor) cuts the prover's work several-fold.
  ruledb::PruneOptions pre = options.prune;
  pre.proved_only = false;
  auto prepruned = ruledb::PruneRules(std::move(generated->rules), pre, nullptr);
  if (!prepruned.ok()) return prepruned.status();
  report.preprune = prepruned->report;
  std::vector<ruledb::Rule> rules = std::move(prepruned->rules);
  if (options.progress)
    std::fprintf(stderr, "verisub-gen: %lld candidates, %zu after pruning before proofs\n",
                 static_cast<long long>(report.candidates), rules.size());
  if (!options.prepruned_path.empty()) {
    std::string text;
    for (const ruledb::Rule& r : rules) text += r.ToText() + "\n";
    VERISUB_RETURN_IF_ERROR(base::WriteFileAtomically(options.prepruned_path, text));
    report.seconds = Since(t0);
    return report;
  }

  verify::VerifyOptions verify_options;
  verify_options.prover = options.prover;
  verify_options.prover.index_level = options.prover.index_level && config->index_level_proofs;
  // Refutation by evaluation starts from the shapes the candidates were found at.
  if (verify_options.prover.refute.base_shapes.empty())
    for (const InputDecl& in : config->inputs)
      verify_options.prover.refute.base_shapes.push_back(in.shape);
  verify_options.threads = options.threads < 0 ? config->threads : options.threads;
  verify_options.progress = options.progress;
  auto verified = verify::VerifyRules(rules, verify_options);
  if (!verified.ok()) return verified.status();
  report.verify = *verified;
  if (!options.unproved_path.empty()) {
    // No paths in the file: it is committed beside the database and must regenerate identically.
    std::string text = "# candidates that were not proved: rule  # status reason\n";
    for (const ruledb::Rule& r : rules) {
      if (r.proof.status == ruledb::ProofStatus::kProved) continue;
      text += r.ToText() + "  # " + ruledb::ProofStatusName(r.proof.status) + " " + r.proof.reason +
              "\n";
    }
    VERISUB_RETURN_IF_ERROR(base::WriteFileAtomically(options.unproved_path, text));
  }

  // Generalizations that pruning proposes are proved by the same prover, one at a time.
  auto axioms = specs::AllAxioms();
  if (!axioms.ok()) return axioms.status();
  auto base = verify::MakeAxiomBase(*axioms);
  if (!base.ok()) return base.status();
  ruledb::ValidityOracle oracle = [&](const ruledb::Rule& r) {
    ++report.oracle_queries;
    // A fresh prover (Z3 context) per query, as in VerifyRules: the outcome is the rule's own.
    verify::Prover prover(*base, verify_options.prover);
    // Valid means proved as asked: a rule without ranks that holds at some ranks only is not.
    verify::RuleVerdict verdict =
        prover.ProveRule(r, "oracle-" + std::to_string(report.oracle_queries));
    bool ok = verdict.proof.status == ruledb::ProofStatus::kProved &&
              verdict.input_ranks == r.input_ranks;
    report.oracle_proved += ok;
    return ok;
  };
  auto pruned = ruledb::PruneRules(std::move(rules), options.prune, oracle);
  if (!pruned.ok()) return pruned.status();
  report.prune = pruned->report;
  if (!options.record_proof_times)
    for (ruledb::Rule& r : pruned->rules) r.proof.seconds = 0;

  ruledb::DatabaseHeader header;
  header.op_set_fingerprint = specs::OpSetFingerprintHex();
  header.generator_config = *config_text;
  header.max_ops = static_cast<uint32_t>(config->max_ops);
  header.tool_version = kToolVersion;
  header.z3_version = Z3Version();
  header.counts = {{"candidates", report.candidates},
                   {"proved", report.verify.proved},
                   {"not_proved", report.verify.total - report.verify.proved}};
  for (const auto& kv : report.prune.Counts())
    header.counts.emplace_back("prune." + kv.first, kv.second);
  report.rules_written = static_cast<int64_t>(pruned->rules.size());
  VERISUB_RETURN_IF_ERROR(
      ruledb::WriteRuleDatabase(options.out_path, header, std::move(pruned->rules)));
  auto bytes = base::ReadFile(options.out_path);
  auto text = base::ReadFile(ruledb::TextPathFor(options.out_path));
  if (bytes.ok()) report.file_bytes = static_cast<int64_t>(bytes->size());
  if (text.ok()) report.text_file_bytes = static_cast<int64_t>(text->size());
  report.seconds = Since(t0);
  return report;
}

}  // namespace verisub::gen
