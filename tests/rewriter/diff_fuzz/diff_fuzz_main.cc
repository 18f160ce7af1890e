// Differential fuzzing of the rewriter at scale (`make fuzz`; diff_fuzz.h): random graphs
// optimized with the shipped rules at default and aggressive settings must keep their interface
// and compute the same outputs in the reference executor. A failing graph is written as an ONNX
// model that `verisub-opt FAILURE.onnx -o /dev/null --verify-outputs` replays, and its seed
// alone rebuilds it: `rewriter_diff_fuzz --first-seed S --graphs 1`.
#include <cstdio>
#include <optional>
#include <string>

#include "base/file_io.h"
#include "base/flags.h"
#include "base/process_stats.h"
#include "base/progress.h"
#include "rewriter/rule_source.h"
#include "tests/rewriter/diff_fuzz/diff_fuzz.h"

int main(int argc, char** argv) {
  using namespace verisub;  // NOLINT
  base::InstallTempFileCleanup();
  rewriter::testing::DiffFuzzOptions options;
  std::string rules_path = rewriter::FindDefaultRules();
  int aggressive_budget = 300;
  bool allow_unproved = false;
  base::Flags flags("rewriter_diff_fuzz", "[flags]",
                    "Exit codes: 0 no failure, 1 failures (each printed with its replay file), "
                    "2 bad usage or rules.");
  flags.Int64("--graphs", &options.graphs, 0, int64_t{1} << 40, "random graphs to run")
      .Uint64("--first-seed", &options.first_seed, "seed of the first graph (graph i: seed + i)")
      .Path("--rules", &rules_path, "rules file (default: the shipped data/rules/taso.pb)")
      .ShowDefault("--rules", "")
      .Bool("--allow-unproved", &allow_unproved,
            "use rules without a proof record (hand-written text rules), as verisub-opt does")
      .Path("--failures", &options.failures_dir, "directory for the failing graphs' ONNX models")
      .ShowDefault("--failures", "the working directory")
      .Threads("--threads", &options.threads, 0, "worker threads, 0 for one per core")
      .Int("--aggressive-budget", &aggressive_budget, 1, 1000000,
           "graphs the aggressive setting's search may expand (alpha 1.2)");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  if (options.failures_dir.empty()) options.failures_dir = ".";
  if (Status st = base::CheckOutputDirectory(options.failures_dir); !st.ok())
    return flags.UsageError("--failures: " + st.message());
  options.settings = rewriter::testing::DefaultAndAggressiveSettings(aggressive_budget);

  auto loaded = rewriter::LoadRules(rules_path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "rewriter_diff_fuzz: %s\n", loaded.status().message().c_str());
    return 2;
  }
  rewriter::RuleSetOptions rule_options;
  rule_options.proved_only = !allow_unproved;
  auto rules = rewriter::RuleSet::Compile(std::move(loaded).value(), rule_options);
  if (!rules.ok()) {
    std::fprintf(stderr, "rewriter_diff_fuzz: %s\n", rules.status().message().c_str());
    return 2;
  }
  std::printf("rewriter_diff_fuzz: %d rules from %s; %lld graphs from seed %llu; settings",
              (*rules)->size(), rules_path.c_str(), static_cast<long long>(options.graphs),
              static_cast<unsigned long long>(options.first_seed));
  for (const auto& s : options.settings)
    std::printf(" %s (alpha %.2f, budget %d)", s.name.c_str(), s.options.search.alpha,
                s.options.search.budget);
  std::printf("\n");
  std::fflush(stdout);

  rewriter::testing::DiffFuzzReport report;
  int64_t failures_printed = 0;
  auto progress = [&](const rewriter::testing::DiffFuzzReport& r) {
    for (; failures_printed < static_cast<int64_t>(r.failures.size()); ++failures_printed) {
      const auto& f = r.failures[failures_printed];
      std::fprintf(stderr, "FAILURE seed %llu (%s): %s\n  replay: %s\n",
                   static_cast<unsigned long long>(f.seed), f.setting.c_str(), f.why.c_str(),
                   f.replay.c_str());
    }
    std::fprintf(stderr,
                 "rewriter_diff_fuzz: %lld/%lld graphs, %lld rewritten, %lld failures, %s\n",
                 static_cast<long long>(r.seeds), static_cast<long long>(options.graphs),
                 static_cast<long long>(r.rewritten), static_cast<long long>(r.failures.size()),
                 base::CountWithRate("graphs", r.seeds, r.wall_s).c_str());
  };
  if (Status st = rewriter::testing::RunDiffFuzz(**rules, options, &report, progress); !st.ok()) {
    std::fprintf(stderr, "rewriter_diff_fuzz: %s\n", st.message().c_str());
    return 2;
  }
  int64_t uses = 0;
  for (const auto& [id, n] : report.rule_uses) uses += n;
  std::printf(
      "rewriter_diff_fuzz: %lld graphs x %zu settings in %.1f s (%.1f graphs/s): %lld optimized, "
      "%lld compared equal (names, shapes, values); %lld graphs rewritten (%.1f%%",
      static_cast<long long>(report.graphs), options.settings.size(), report.wall_s,
      report.wall_s > 0 ? report.seeds / report.wall_s : 0.0,
      static_cast<long long>(report.optimized), static_cast<long long>(report.compared),
      static_cast<long long>(report.rewritten),
      report.graphs ? 100.0 * report.rewritten / report.graphs : 0.0);
  for (const auto& s : options.settings)
    std::printf("; %s %lld", s.name.c_str(),
                static_cast<long long>(report.rewritten_by_setting[s.name]));
  std::printf(
      "), %lld cheaper; %zu distinct rules applied, %lld applications; thread time: optimize "
      "%.1f s (",
      static_cast<long long>(report.cheaper), report.rule_uses.size(), static_cast<long long>(uses),
      report.optimize_cpu_s);
  for (size_t k = 0; k < options.settings.size(); ++k)
    std::printf("%s%s %.1f s", k ? ", " : "", options.settings[k].name.c_str(),
                report.optimize_cpu_s_by_setting[options.settings[k].name]);
  std::printf("), compare %.1f s; process CPU %.1f s; %zu failures\n", report.compare_cpu_s,
              base::ProcessCpuSeconds(), report.failures.size());
  return report.failures.empty() ? 0 : 1;
}
