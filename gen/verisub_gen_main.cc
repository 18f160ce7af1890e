// verisub-gen: the offline half. Lists the operator set, or generates candidate rules.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/file_io.h"
#include "gen/config.h"
#include "gen/generator.h"
#include "gen/pipeline.h"
#include "gen/rule_coverage.h"
#include "ruledb/database.h"
#include "specs/axiom.h"
#include "specs/registry.h"
#include "verify/cli.h"

namespace {

int ListOps() {
  using namespace verisub::specs;  // NOLINT
  auto axioms = AllAxioms();
  if (!axioms.ok()) {
    std::fprintf(stderr, "verisub-gen: %s\n", axioms.status().message().c_str());
    return 1;
  }
  std::printf("%-14s %-3s %-3s %s\n", "operator", "in", "out", "parameters {generator domain}");
  for (const OpSpec& op : AllOps()) {
    std::string params;
    for (const ParamDesc& d : op.params) {
      params += d.name + "{";
      for (size_t i = 0; i < d.domain.size(); ++i) {
        Params p;
        p[d.slot] = d.domain[i];
        params += (i ? "," : "") + FormatParamValue(d, p);
      }
      params += "} ";
    }
    std::printf("%-14s %-3d %-3d %s\n", op.name.c_str(), op.num_inputs, op.num_outputs,
                params.c_str());
  }
  std::printf("\n%zu operators, %zu axioms, op-set fingerprint %s\n", AllOps().size(),
              axioms->size(), OpSetFingerprintHex().c_str());
  return 0;
}

constexpr const char* kUsage =
    "usage: verisub-gen --list-ops\n"
    "       verisub-gen --config FILE --out RULES.pb [--threads N] [--quiet]\n"
    "                   [--rlimit N] [--timeout-ms N] [--record-proof-times] [--unproved FILE]\n"
    "           enumerate, prove, prune and write the rules database (and RULES.txt)\n"
    "       verisub-gen --config FILE --prepruned OUT.txt [--threads N] [--quiet]\n"
    "           enumerate and prune syntactically; write the candidates the prover would get\n"
    "       verisub-gen --config FILE --candidates OUT.txt [--threads N] [--quiet]\n"
    "                   [--reference RULES.txt]\n"
    "           enumerate only and write the candidate rules, one per line; with --reference,\n"
    "           report the listed rules that are not candidates (exit code 3 if any)\n"
    "       verisub-gen --verify CANDIDATES.txt [--out PROVED.txt] [verifier options]\n"
    "       verisub-gen --validate-axioms | --redundant-axioms [verifier options]\n"
    "           (see verisub-verify --help)\n";

// Exit codes: 0 success, 1 failed, 2 usage or config error.
int GenerateDatabase(const verisub::gen::PipelineOptions& options) {
  auto report = verisub::gen::RunPipeline(options);
  if (!report.ok()) {
    std::fprintf(stderr, "verisub-gen: %s\n", report.status().message().c_str());
    return 1;
  }
  std::printf("%s", verisub::gen::FormatReport(report->gen).c_str());
  std::printf("pruning before proofs:\n%s", report->preprune.ToString().c_str());
  if (!options.prepruned_path.empty()) {
    std::printf("%lld candidates for the prover written to %s\n",
                static_cast<long long>(report->preprune.output), options.prepruned_path.c_str());
    return 0;
  }
  std::printf("%s\n", report->verify.Summary().c_str());
  std::printf("pruning after proofs:\n");
  std::printf("%s", report->prune.ToString().c_str());
  std::printf("%s", report->Summary().c_str());
  std::printf("rules written to %s and %s\n", options.out_path.c_str(),
              verisub::ruledb::TextPathFor(options.out_path).c_str());
  return 0;
}

// Exit codes: 0 success, 1 generation failed, 2 usage or config error, 3 a reference rule is
// not among the candidates.
int Generate(const std::string& config_path, const std::string& out_path,
             const std::string& reference_path, int threads, bool quiet) {
  auto config = verisub::gen::LoadConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "verisub-gen: %s\n", config.status().message().c_str());
    return 2;
  }
  std::vector<verisub::gen::ReferenceRule> reference;
  if (!reference_path.empty()) {
    auto text = verisub::base::ReadFile(reference_path);
    auto rules = text.ok()
                     ? verisub::gen::ParseReferenceRules(*text, reference_path)
                     : verisub::StatusOr<std::vector<verisub::gen::ReferenceRule>>(text.status());
    if (!rules.ok()) {
      std::fprintf(stderr, "verisub-gen: %s\n", rules.status().message().c_str());
      return 2;
    }
    reference = std::move(*rules);
  }
  verisub::gen::GenOptions options;
  options.threads = threads;
  options.progress = !quiet;
  options.rules = false;  // the dump is text
  auto result = verisub::gen::RunGenerator(*config, options);
  if (!result.ok()) {
    std::fprintf(stderr, "verisub-gen: %s\n", result.status().message().c_str());
    return 2;
  }
  verisub::Status st = verisub::gen::WriteCandidates(result->texts, out_path);
  if (!st.ok()) {
    std::fprintf(stderr, "verisub-gen: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("%s", verisub::gen::FormatReport(result->report).c_str());
  std::printf("candidates written to %s\n", out_path.c_str());
  if (reference_path.empty()) return 0;
  verisub::gen::CoverageReport cov =
      verisub::gen::CheckCoverage(verisub::gen::RuleIndex(result->texts), reference);
  std::printf(
      "reference rules (%s): %zu; candidates %d, through a smaller equal graph %zu, missing %zu\n",
      reference_path.c_str(), reference.size(), cov.candidates, cov.via.size(), cov.missing.size());
  for (const std::string& m : cov.via)
    std::printf("through a smaller equal graph: %s\n", m.c_str());
  for (const std::string& m : cov.missing) std::printf("missing: %s\n", m.c_str());
  return cov.missing.empty() ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  verisub::base::InstallTempFileCleanup();  // an interrupted write leaves no temporary
  if (argc == 2 && std::strcmp(argv[1], "--list-ops") == 0) return ListOps();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verify" || a == "--validate-axioms" || a == "--redundant-axioms")
      return verisub::verify::RunCli(argc, argv);
  }
  verisub::gen::PipelineOptions pipeline;
  pipeline.prover = verisub::gen::DefaultPipelineProver();
  std::string config, out, reference;
  int threads = -1;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--config" && has_value) {
      config = argv[++i];
    } else if (a == "--candidates" && has_value) {
      out = argv[++i];
    } else if (a == "--reference" && has_value) {
      reference = argv[++i];
    } else if (a == "--threads" && has_value) {
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 0 || v > 1024) {
        std::fprintf(stderr, "verisub-gen: bad --threads value '%s'\n%s", argv[i], kUsage);
        return 2;
      }
      threads = static_cast<int>(v);
    } else if (a == "--quiet") {
      quiet = true;
    } else if (a == "--out" && has_value) {
      pipeline.out_path = argv[++i];
    } else if ((a == "--rlimit" || a == "--timeout-ms") && has_value) {
      char* end = nullptr;
      long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || v < 0) {
        std::fprintf(stderr, "verisub-gen: bad %s value '%s'\n%s", a.c_str(), argv[i], kUsage);
        return 2;
      }
      if (a == "--rlimit")
        pipeline.prover.resource_limit = static_cast<unsigned>(v);
      else
        pipeline.prover.timeout_ms = static_cast<int>(v);
    } else if (a == "--prepruned" && has_value) {
      pipeline.prepruned_path = argv[++i];
    } else if (a == "--unproved" && has_value) {
      pipeline.unproved_path = argv[++i];
    } else if (a == "--record-proof-times") {
      pipeline.record_proof_times = true;
    } else {
      std::fprintf(stderr, "verisub-gen: unknown or incomplete argument '%s'\n%s", a.c_str(),
                   kUsage);
      return 2;
    }
  }
  const int outputs = !out.empty() + !pipeline.out_path.empty() + !pipeline.prepruned_path.empty();
  if (config.empty() || outputs != 1) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  if (!reference.empty() && out.empty()) {
    std::fprintf(stderr, "verisub-gen: --reference goes with --candidates\n%s", kUsage);
    return 2;
  }
  // An output that cannot be written is said before the run, not after it.
  for (const std::string* path :
       {&out, &pipeline.out_path, &pipeline.prepruned_path, &pipeline.unproved_path}) {
    verisub::Status st = verisub::base::CheckOutputPath(*path);
    if (!st.ok()) {
      std::fprintf(stderr, "verisub-gen: %s\n", st.message().c_str());
      return 2;
    }
  }
  if (!out.empty()) return Generate(config, out, reference, threads, quiet);
  pipeline.config_path = config;
  pipeline.threads = threads;
  pipeline.progress = !quiet;
  return GenerateDatabase(pipeline);
}
