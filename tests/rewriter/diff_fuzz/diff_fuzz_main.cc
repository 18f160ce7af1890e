// Differential fuzzing of the rewriter at scale (`make fuzz`): random graphs
// (tests/rewriter/random_graphs.h) optimized with the shipped rules at default and aggressive
// settings must keep their interface (input and output names, order, shapes) and compute the
// same outputs in the reference executor. A failing graph is written as an ONNX model that
// `verisub-opt FAILURE.onnx -o /dev/null --verify-outputs` replays.
//
//   rewriter_diff_fuzz [--graphs N] [--first-seed S] [--rules FILE] [--failures DIR]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/file_io.h"
#include "rewriter/optimize.h"
#include "rewriter/rule_source.h"
#include "rewriter/verify_outputs.h"
#include "runtime/onnx_export.h"
#include "tests/rewriter/random_graphs.h"

namespace {

using namespace verisub;  // NOLINT

struct Setting {
  const char* name;
  OptimizeOptions options;
};

bool ParseCount(const char* s, long long* out) {
  char* end = nullptr;
  *out = std::strtoll(s, &end, 10);
  return end != s && *end == '\0' && *out >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  base::InstallTempFileCleanup();
  long long graphs = 10000, first_seed = 1;
  std::string rules_path = rewriter::FindDefaultRules(), failures_dir = ".";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--graphs" && v && ParseCount(v, &graphs)) {
      ++i;
    } else if (a == "--first-seed" && v && ParseCount(v, &first_seed)) {
      ++i;
    } else if (a == "--rules" && v) {
      rules_path = argv[++i];
    } else if (a == "--failures" && v) {
      failures_dir = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: rewriter_diff_fuzz [--graphs N] [--first-seed S] [--rules FILE] "
                   "[--failures DIR]\n");
      return 2;
    }
  }
  if (Status st = base::CheckOutputDirectory(failures_dir); !st.ok()) {
    std::fprintf(stderr, "rewriter_diff_fuzz: --failures: %s\n", st.message().c_str());
    return 2;
  }
  auto loaded = rewriter::LoadRules(rules_path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "rewriter_diff_fuzz: %s\n", loaded.status().message().c_str());
    return 2;
  }
  auto rules = rewriter::RuleSet::Compile(std::move(loaded).value());
  if (!rules.ok()) {
    std::fprintf(stderr, "rewriter_diff_fuzz: %s\n", rules.status().message().c_str());
    return 2;
  }
  // Deterministic budgets (no time limit): the same seed gives the same graph and search.
  Setting settings[2] = {{"default", {}}, {"aggressive", {}}};
  settings[0].options.search.time_limit_s = 0;
  settings[1].options.search.time_limit_s = 0;
  settings[1].options.search.alpha = 1.2;
  settings[1].options.search.budget = settings[0].options.search.budget * 10;
  long long optimized = 0, improved = 0, failures = 0, compared = 0;
  for (long long seed = first_seed; seed < first_seed + graphs; ++seed) {
    runtime::Graph g = rewriter::testing::RandomGraph(static_cast<uint64_t>(seed));
    if (g.outputs().empty()) continue;
    for (const Setting& s : settings) {
      runtime::Graph out;
      OptimizeReport report;
      Status st = Optimize(g, **rules, s.options, &out, &report);
      std::string why;
      if (!st.ok()) {
        why = "optimize: " + st.message();
      } else {
        ++optimized;
        improved += report.search.cost_after_us < report.search.cost_before_us;
        rewriter::VerifyOptions vo;
        vo.seed = static_cast<uint64_t>(seed);
        rewriter::VerifyReport vr;
        Status v = rewriter::CompareOutputs(g, out, vo, &vr);
        compared += v.ok();
        if (!v.ok()) why = "compare: " + v.message();
      }
      if (why.empty()) continue;
      ++failures;
      std::string path =
          failures_dir + "/diff_fuzz_seed" + std::to_string(seed) + "_" + s.name + ".onnx";
      Status written = runtime::ExportOnnxFile(g, path);
      std::fprintf(stderr, "FAILURE seed %lld (%s): %s\n  replay: %s\n", seed, s.name, why.c_str(),
                   written.ok() ? path.c_str() : written.message().c_str());
    }
    if ((seed - first_seed + 1) % 1000 == 0)
      std::fprintf(stderr, "rewriter_diff_fuzz: %lld graphs, %lld failures\n",
                   seed - first_seed + 1, failures);
  }
  std::printf(
      "rewriter_diff_fuzz: %lld graphs x 2 settings (default, aggressive): %lld optimized, %lld "
      "cheaper, %lld compared equal (names, shapes, values), %lld failures\n",
      graphs, optimized, improved, compared, failures);
  return failures == 0 ? 0 : 1;
}
