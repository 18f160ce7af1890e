// verisub-gen: the offline half. Lists the operator set, or generates candidate rules.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "base/file_io.h"
#include "base/flags.h"
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
  std::printf("%-14s %-3s %-3s %-34s %s\n", "operator", "in", "out", "layouts",
              "parameters {generator domain}");
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
    std::string layouts = op.layouts.layout_agnostic ? "any (elementwise)" : "";
    for (Layout l : op.layouts.layouts)
      layouts += (layouts.empty() ? "" : ",") + std::string(LayoutName(l));
    if (layouts.empty()) layouts = "plain";
    std::printf("%-14s %-3d %-3d %-34s %s\n", op.name.c_str(), op.num_inputs, op.num_outputs,
                layouts.c_str(), params.c_str());
  }
  std::printf("\n%zu operators, %zu axioms, op-set fingerprint %s\n", AllOps().size(),
              axioms->size(), OpSetFingerprintHex().c_str());
  return 0;
}

constexpr const char* kSynopsis =
    "--list-ops\n"
    "       verisub-gen --config FILE --out RULES.pb [flags]\n"
    "           enumerate, prove, prune and write the rules database (and RULES.txt)\n"
    "       verisub-gen --config FILE --prepruned OUT.txt [flags]\n"
    "           enumerate and prune syntactically; write the candidates the prover would get\n"
    "       verisub-gen --config FILE --candidates OUT.txt [--reference RULES.txt] [flags]\n"
    "           enumerate only and write the candidate rules, one per line; with --reference,\n"
    "           report the listed rules that are not candidates (exit code 3 if any)\n"
    "       verisub-gen --verify CANDIDATES.txt [--out PROVED.txt] [verifier flags]\n"
    "       verisub-gen --validate-axioms | --redundant-axioms [verifier flags]\n"
    "           (the verifier's modes: see verisub-verify --help)";

constexpr const char* kEpilog =
    "Exit codes: 0 success, 1 generation failed, 2 usage or config error, 3 a reference rule is\n"
    "not among the candidates.";

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
             const std::string& reference_path, int threads, bool quiet,
             uint64_t memory_budget_bytes) {
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
  options.memory_budget_bytes = memory_budget_bytes;
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
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verify" || a == "--validate-axioms" || a == "--redundant-axioms")
      return verisub::verify::RunCli(argc, argv);
  }
  verisub::gen::PipelineOptions pipeline;
  pipeline.prover = verisub::gen::DefaultPipelineProver();
  std::string config, out, reference;
  int threads = -1;
  int64_t rlimit = pipeline.prover.resource_limit;
  int64_t max_memory_mb = static_cast<int64_t>(verisub::gen::kDefaultGenMemoryBudget >> 20);
  bool quiet = false, list_ops = false;
  verisub::base::Flags flags("verisub-gen", kSynopsis, kEpilog);
  flags.Bool("--list-ops", &list_ops, "list the operator set, its axioms and fingerprint")
      .Path("--config", &config, "generator config (data/gen/*.cfg)")
      .Path("--out", &pipeline.out_path, "write the proved, pruned rules database here")
      .Path("--prepruned", &pipeline.prepruned_path,
            "write the candidates left after syntactic pruning here and stop")
      .Path("--candidates", &out, "write every candidate rule here and stop")
      .Path("--reference", &reference, "with --candidates: rules that must be among them")
      .Path("--unproved", &pipeline.unproved_path, "with --out: write the unproved rules here")
      .Threads("--threads", &threads, 0, "worker threads, 0 for one per core")
      .ShowDefault("--threads", "the config's")
      .Bool("--quiet", &quiet, "no progress lines")
      .Int64("--max-memory-mb", &max_memory_mb, 1, int64_t{1} << 40,
             "memory budget in MiB of the enumeration and evaluation: a config estimated over "
             "it is refused before the run, one that outgrows it stops naming the count")
      .Int64("--rlimit", &rlimit, 0, UINT32_MAX, "Z3 resource limit per query, 0 for none")
      .Int("--timeout-ms", &pipeline.prover.timeout_ms, 0, 1000000000, "Z3 time limit per query")
      .Bool("--record-proof-times", &pipeline.record_proof_times,
            "keep each rule's proof time in the database");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  pipeline.prover.resource_limit = static_cast<unsigned>(rlimit);
  if (list_ops) {
    if (argc != 2) return flags.UsageError("--list-ops takes no other flag");
    return ListOps();
  }
  const int outputs = !out.empty() + !pipeline.out_path.empty() + !pipeline.prepruned_path.empty();
  if (config.empty()) return flags.UsageError("--config is required (or --list-ops)");
  if (outputs != 1) return flags.UsageError("give exactly one of --out, --prepruned, --candidates");
  if (!reference.empty() && out.empty())
    return flags.UsageError("--reference goes with --candidates");
  // An output that cannot be written is said before the run, not after it.
  for (const std::string* path :
       {&out, &pipeline.out_path, &pipeline.prepruned_path, &pipeline.unproved_path}) {
    verisub::Status st = verisub::base::CheckOutputPath(*path);
    if (!st.ok()) {
      std::fprintf(stderr, "verisub-gen: %s\n", st.message().c_str());
      return 2;
    }
  }
  const uint64_t memory_budget_bytes = static_cast<uint64_t>(max_memory_mb) << 20;
  if (!out.empty()) return Generate(config, out, reference, threads, quiet, memory_budget_bytes);
  pipeline.memory_budget_bytes = memory_budget_bytes;
  pipeline.config_path = config;
  pipeline.threads = threads;
  pipeline.progress = !quiet;
  return GenerateDatabase(pipeline);
}
