// verisub-gen: the offline half. Lists the operator set, or generates candidate rules or the
// rules database (gen/commands.h); the verifier's modes are verisub-verify's (verify/cli.h).
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "base/file_io.h"
#include "base/flags.h"
#include "gen/commands.h"
#include "gen/pipeline.h"
#include "verify/cli.h"

namespace {

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

int Print(int code, const std::string& out, const std::string& err) {
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fwrite(err.data(), 1, err.size(), stderr);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  namespace gen = verisub::gen;
  verisub::base::InstallTempFileCleanup();  // an interrupted write leaves no temporary
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verify" || a == "--validate-axioms" || a == "--redundant-axioms")
      return verisub::verify::RunCli(argc, argv);
  }
  gen::PipelineOptions pipeline;
  pipeline.prover = gen::DefaultPipelineProver();
  gen::CandidatesCommand candidates;
  std::string config;
  int threads = -1;
  int64_t rlimit = pipeline.prover.resource_limit;
  int64_t max_memory_mb = static_cast<int64_t>(gen::kDefaultGenMemoryBudget >> 20);
  bool quiet = false, list_ops = false;
  verisub::base::Flags flags("verisub-gen", kSynopsis, kEpilog);
  flags.Bool("--list-ops", &list_ops, "list the operator set, its axioms and fingerprint")
      .Path("--config", &config, "generator config (data/gen/*.cfg)")
      .Path("--out", &pipeline.out_path, "write the proved, pruned rules database here")
      .Path("--prepruned", &pipeline.prepruned_path,
            "write the candidates left after syntactic pruning here and stop")
      .Path("--candidates", &candidates.out_path, "write every candidate rule here and stop")
      .Path("--reference", &candidates.reference_path,
            "with --candidates: rules that must be among them")
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
  std::string out, err;
  if (list_ops) {
    if (argc != 2) return flags.UsageError("--list-ops takes no other flag");
    return Print(gen::ListOpSet(&out, &err), out, err);
  }
  const int outputs =
      !candidates.out_path.empty() + !pipeline.out_path.empty() + !pipeline.prepruned_path.empty();
  if (config.empty()) return flags.UsageError("--config is required (or --list-ops)");
  if (outputs != 1) return flags.UsageError("give exactly one of --out, --prepruned, --candidates");
  if (!candidates.reference_path.empty() && candidates.out_path.empty())
    return flags.UsageError("--reference goes with --candidates");
  // An output that cannot be written is said before the run, not after it.
  for (const std::string* path : {&candidates.out_path, &pipeline.out_path,
                                  &pipeline.prepruned_path, &pipeline.unproved_path}) {
    verisub::Status st = verisub::base::CheckOutputPath(*path);
    if (!st.ok()) return Print(gen::kExitUsage, "", "verisub-gen: " + st.message() + "\n");
  }
  const uint64_t memory_budget_bytes = static_cast<uint64_t>(max_memory_mb) << 20;
  if (!candidates.out_path.empty()) {
    candidates.memory_budget_bytes = memory_budget_bytes;
    candidates.config_path = config;
    candidates.threads = threads;
    candidates.progress = !quiet;
    return Print(gen::WriteCandidatesCommand(candidates, &out, &err), out, err);
  }
  pipeline.memory_budget_bytes = memory_budget_bytes;
  pipeline.config_path = config;
  pipeline.threads = threads;
  pipeline.progress = !quiet;
  return Print(gen::GenerateDatabaseCommand(pipeline, &out, &err), out, err);
}
