// verisub-bench-opt: optimizes every .onnx model in a folder with default settings and prints
// one table row per model (cost before/after, ratio, rules applied, graphs explored, wall time,
// peak memory).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "rewriter/optimize.h"
#include "rewriter/rule_source.h"
#include "runtime/onnx_import.h"

namespace {

constexpr const char* kUsage =
    "usage: verisub-bench-opt [MODEL_DIR] [--rules FILE] [--allow-unproved] [--budget N]\n"
    "                         [--device NAME]\n"
    "  MODEL_DIR defaults to build/models (written by verisub-models --out DIR)\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace verisub;  // NOLINT
  std::string dir = "build/models", rules_path = rewriter::kDefaultRulesPath;
  bool allow_unproved = false;
  OptimizeOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--rules" && i + 1 < argc) {
      rules_path = next();
    } else if (a == "--allow-unproved") {
      allow_unproved = true;
    } else if (a == "--budget" && i + 1 < argc) {
      options.search.budget = std::atoi(next());
    } else if (a == "--device" && i + 1 < argc) {
      options.device = next();
    } else if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (!a.empty() && a[0] != '-') {
      dir = a;
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
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
  auto rules = rewriter::LoadRules(rules_path);
  if (!rules.ok()) {
    std::fprintf(stderr, "error: %s\n", rules.status().message().c_str());
    return 1;
  }
  rewriter::RuleSetOptions rule_options;
  rule_options.proved_only = !allow_unproved;
  auto set = rewriter::RuleSet::Compile(std::move(rules).value(), rule_options);
  if (!set.ok()) {
    std::fprintf(stderr, "error: %s\n", set.status().message().c_str());
    return 1;
  }
  std::printf("rules: %s (%d used), device %s, alpha %.2f, budget %d\n\n", rules_path.c_str(),
              (*set)->size(), options.device.c_str(), options.search.alpha, options.search.budget);
  std::printf("%-24s %7s %12s %12s %7s %6s %9s %8s %9s %s\n", "model", "nodes", "before_us",
              "after_us", "ratio", "steps", "explored", "time_s", "peak_MB", "stop");
  int failures = 0;
  std::map<std::string, std::vector<std::pair<int, std::string>>> top;
  for (const std::string& path : models) {
    std::string name = std::filesystem::path(path).stem().string();
    auto g = runtime::ImportOnnxFile(path);
    if (!g.ok()) {
      std::printf("%-24s import failed: %s\n", name.c_str(), g.status().message().c_str());
      ++failures;
      continue;
    }
    runtime::Graph out;
    OptimizeReport report;
    auto t0 = std::chrono::steady_clock::now();
    Status st = Optimize(*g, **set, options, &out, &report);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!st.ok()) {
      std::printf("%-24s optimize failed: %s\n", name.c_str(), st.message().c_str());
      ++failures;
      continue;
    }
    const rewriter::SearchReport& s = report.search;
    std::printf("%-24s %7d %12.1f %12.1f %7.3f %6d %9lld %8.3f %9.1f %s\n", name.c_str(),
                report.nodes_before, s.cost_before_us, s.cost_after_us,
                s.cost_after_us > 0 ? s.cost_before_us / s.cost_after_us : 0.0, s.rewrite_steps,
                static_cast<long long>(s.graphs_explored), wall, s.peak_rss_bytes / 1048576.0,
                rewriter::StopReasonName(s.stop));
    for (const auto& u : s.rules_applied) top[name].push_back({u.count, u.text});
  }
  std::printf("\nrules applied per model (count, rule):\n");
  for (const auto& [name, uses] : top) {
    std::printf("  %s\n", name.c_str());
    for (size_t k = 0; k < uses.size() && k < 5; ++k)
      std::printf("    %4d  %s\n", uses[k].first, uses[k].second.c_str());
  }
  return failures ? 1 : 0;
}
