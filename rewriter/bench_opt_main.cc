// verisub-bench-opt: optimizes every .onnx model in a folder with default settings and prints
// one table row per model (cost before/after, ratio, rules applied, graphs explored, wall time,
// peak memory).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/flags.h"
#include "base/process_stats.h"
#include "rewriter/optimize.h"
#include "rewriter/rule_source.h"
#include "rewriter/search.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/onnx_import.h"

namespace {

constexpr const char* kEpilog =
    "MODEL_DIR defaults to build/models (written by verisub-models --out DIR). Each model runs\n"
    "in its own process (--one PATH), so peak memory is per model. Each model is optimized\n"
    "again with F times the budget and no time limit (--check-factor, 0 to skip): the table\n"
    "says whether that larger search found a cheaper graph.";

}  // namespace

int main(int argc, char** argv) {
  using namespace verisub;  // NOLINT
  std::string dir = "build/models", rules_path = rewriter::FindDefaultRules(), one;
  bool allow_unproved = false, no_reverse = false;
  int check_factor = 10;
  OptimizeOptions options;
  base::Flags flags("verisub-bench-opt", "[MODEL_DIR] [flags]", kEpilog);
  flags.Positional("MODEL_DIR", &dir, "folder of .onnx models", /*required=*/false)
      .Path("--rules", &rules_path, "rules database or plain rule list")
      .Path("--one", &one, "optimize this one model and print its table row")
      .Bool("--allow-unproved", &allow_unproved, "use rules without a proof record")
      .Bool("--no-reverse", &no_reverse,
            "apply rules only as the database states them, not also right to left")
      .Int("--budget", &options.search.budget, 0, 1000000000, "graphs the search may expand")
      .Int("--patience", &options.search.patience, 0, 1000000000,
           "stop after this many expanded graphs without a cheaper one (0: never)")
      .String("--device", &options.device, "NAME",
              "analytic cost model preset: v100, cpu-2core or h100")
      .Int("--check-factor", &check_factor, 0, 1000,
           "optimize again with this many times the budget, 0 to skip");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  if (Status st = runtime::DevicePreset(options.device).status(); !st.ok())
    return flags.UsageError("--device: " + st.message());
  if (one.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      std::printf(
          "bench-opt: no model folder '%s' (build the benchmark models with "
          "`verisub-models --out %s`); skipping\n",
          dir.c_str(), dir.c_str());
      return 0;
    }
    std::vector<std::string> models;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().extension() == ".onnx") models.push_back(e.path().string());
    std::sort(models.begin(), models.end());
    if (models.empty()) {
      std::printf("bench-opt: no .onnx files in '%s'; skipping\n", dir.c_str());
      return 0;
    }
    std::string flags =
        "--rules '" + rules_path + "' --budget " + std::to_string(options.search.budget) +
        " --device " + options.device + " --check-factor " + std::to_string(check_factor) +
        (allow_unproved ? " --allow-unproved" : "") + (no_reverse ? " --no-reverse" : "");
    std::printf("rules: %s%s, device %s, alpha %.2f, budget %d, time limit %.0f s\n\n",
                rules_path.c_str(), no_reverse ? " (as stated only)" : " (and right to left)",
                options.device.c_str(), options.search.alpha, options.search.budget,
                options.search.time_limit_s);
    std::printf(
        "peak_MB is the process's high-water mark after import and search (one process\n"
        "per model), weights_MB the model's weights (part of it); x%d: the same search\n"
        "with %d times the budget\n"
        "and no time limit, its final cost and time.\n\n",
        check_factor, check_factor);
    std::printf("%-18s %6s %11s %11s %6s %6s %9s %8s %8s %10s %-11s %11s %8s\n", "model", "nodes",
                "before_us", "after_us", "ratio", "steps", "explored", "time_s", "peak_MB",
                "weights_MB", "stop", "check_after", "check_s");
    int failures = 0;
    std::string rules_text;
    for (const std::string& path : models) {
      std::string cmd = std::string("'") + argv[0] + "' --one '" + path + "' " + flags + " 2>&1";
      FILE* p = popen(cmd.c_str(), "r");
      if (!p) return std::fprintf(stderr, "error: cannot run %s\n", argv[0]), 1;
      char line[8192];
      while (std::fgets(line, sizeof line, p)) {
        if (std::strncmp(line, "rule ", 5) == 0) {
          rules_text += line + 5;
        } else {
          std::fputs(line, stdout);
        }
      }
      failures += pclose(p) != 0;
      std::fflush(stdout);
    }
    std::printf("\n* marks a model where the larger search found a cheaper graph.\n");
    std::printf("\nrules applied per model (count, rule), at most 5 each:\n%s", rules_text.c_str());
    return failures ? 1 : 0;
  }

  auto rules = rewriter::LoadRules(rules_path);
  if (!rules.ok()) {
    std::fprintf(stderr, "error: %s\n", rules.status().message().c_str());
    return 1;
  }
  rewriter::RuleSetOptions rule_options;
  rule_options.proved_only = !allow_unproved;
  rule_options.reverse = !no_reverse;
  auto set = rewriter::RuleSet::Compile(std::move(rules).value(), rule_options);
  if (!set.ok()) {
    std::fprintf(stderr, "error: %s\n", set.status().message().c_str());
    return 1;
  }
  std::string name = std::filesystem::path(one).stem().string();
  auto g = runtime::ImportOnnxFile(one);
  if (!g.ok()) {
    std::printf("%-18s import failed: %s\n", name.c_str(), g.status().message().c_str());
    return 1;
  }
  int64_t weight_bytes = 0;
  for (int v = 0; v < g->num_values(); ++v)
    if (const auto& t = g->value(v).constant)
      weight_bytes +=
          static_cast<int64_t>(t->f32.size() * sizeof(float) + t->f64.size() * sizeof(double) +
                               t->ints.size() * sizeof(int64_t));
  runtime::Graph out;
  OptimizeReport report;
  auto t0 = std::chrono::steady_clock::now();
  // As verisub-opt does: the optimizer consumes the model (weights it replaces are freed).
  Status st = Optimize(std::move(g).value(), **set, options, &out, &report);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!st.ok()) {
    std::printf("%-18s optimize failed: %s\n", name.c_str(), st.message().c_str());
    return 1;
  }
  const double peak_mb = base::PeakRssBytes() / 1048576.0;
  const rewriter::SearchReport& s = report.search;
  // The same search with a larger budget: does the default budget leave a cheaper graph behind?
  std::string check = "-";
  std::string check_time = "-";
  if (check_factor > 0) {
    OptimizeOptions larger = options;
    larger.search.patience = 0;  // the whole larger budget is explored
    larger.search.budget = static_cast<int>(std::min<int64_t>(
        int64_t{options.search.budget} * check_factor, std::numeric_limits<int>::max()));
    larger.search.time_limit_s = 0;
    runtime::Graph out_larger;
    OptimizeReport report_larger;
    auto again = runtime::ImportOnnxFile(one);
    if (!again.ok()) {
      std::printf("%-18s import failed: %s\n", name.c_str(), again.status().message().c_str());
      return 1;
    }
    auto t1 = std::chrono::steady_clock::now();
    Status st_larger =
        Optimize(std::move(again).value(), **set, larger, &out_larger, &report_larger);
    double wall_larger =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    if (!st_larger.ok()) {
      std::printf("%-18s optimize (x%d budget) failed: %s\n", name.c_str(), check_factor,
                  st_larger.message().c_str());
      return 1;
    }
    char buf[64];
    double c = report_larger.search.cost_after_us;
    std::snprintf(buf, sizeof buf, "%.1f%s", c, c < s.cost_after_us - 1e-9 ? "*" : "");
    check = buf;
    std::snprintf(buf, sizeof buf, "%.3f", wall_larger);
    check_time = buf;
  }
  std::printf("%-18s %6d %11.1f %11.1f %6.3f %6d %9lld %8.3f %8.1f %10.1f %-11s %11s %8s\n",
              name.c_str(), report.nodes_before, s.cost_before_us, s.cost_after_us,
              s.cost_after_us > 0 ? s.cost_before_us / s.cost_after_us : 0.0, s.rewrite_steps,
              static_cast<long long>(s.graphs_explored), wall, peak_mb, weight_bytes / 1048576.0,
              rewriter::StopReasonName(s.stop), check.c_str(), check_time.c_str());
  if (!s.rules_applied.empty()) std::printf("rule   %s\n", name.c_str());
  for (size_t k = 0; k < s.rules_applied.size() && k < 5; ++k)
    std::printf("rule     %4d  %s\n", s.rules_applied[k].count, s.rules_applied[k].text.c_str());
  return 0;
}
