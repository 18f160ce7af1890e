// verisub-bench-layout: the layout DP on every .onnx model of a folder (and DenseNet-121, built
// in process) with the analytic layout costs. One row per model: nodes, cut widths, states,
// DP time and pruned counts with the default prunings, cost all-plain vs DP, and the exact
// optimum (inexact prunings off, a large state budget) where it fits, with the gap.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/flags.h"
#include "rewriter/layout_assign.h"
#include "rewriter/layout_costs.h"
#include "rewriter/precision_costs.h"
#include "runtime/models/models.h"
#include "runtime/onnx_import.h"

namespace {

constexpr const char* kEpilog =
    "MODEL_DIR holds the models (written by verisub-models --out DIR); DenseNet-121 (224x224) is\n"
    "built in process. DP times are the best of --repeat runs. --precision bf16: values may also\n"
    "be stored in bfloat16, priced by the synthetic table (rewriter/precision_costs.h: float32\n"
    "time x factor, casts by bytes moved). Exit codes: 0 done, 1 failed, 2 bad usage.";

using namespace verisub;  // NOLINT

struct Settings {
  std::string device = "cpu-2core";
  rewriter::LayoutDpOptions pruned;
  rewriter::LayoutDpOptions exact;
  int repeat = 5;
  // The exact run is skipped above this cut width (its states grow as 4^width).
  int exact_max_width = 16;
  // Precision as a layout: the synthetic bf16 table over the analytic source.
  bool bf16 = false;
  rewriter::PrecisionFactors factors;
};

// Best-of-N DP wall time into r->time_ms and best-of-N process CPU time into *cpu_ms (CPU time
// is less sensitive to other processes sharing the cores); the report and solution of the last
// run (`solution` may be null).
Status RunDp(const rewriter::LayoutProblem& p, const rewriter::LayoutDpOptions& o, int repeat,
             rewriter::LayoutDpReport* r, double* cpu_ms,
             rewriter::LayoutSolution* solution = nullptr) {
  double best = 1e300, best_cpu = 1e300;
  for (int k = 0; k < repeat; ++k) {
    std::clock_t c0 = std::clock();
    auto s = rewriter::SolveLayoutProblem(p, o, r);
    std::clock_t c1 = std::clock();
    if (!s.ok()) return s.status();
    if (solution) *solution = std::move(s).value();
    best = std::min(best, r->time_ms);
    best_cpu = std::min(best_cpu, 1000.0 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC);
  }
  r->time_ms = best;
  *cpu_ms = best_cpu;
  return Status();
}

void PrintHeader() {
  std::printf(
      "| model | nodes | build ms | width given | width used | states peak | states mean | bf16 "
      "values "
      "| DP ms | DP cpu ms | pruned dom/thr/par/beam | plain us | DP us | speedup | proven exact "
      "| exact cpu ms | exact peak | exact us | gap %% | bound gap %% |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

int Row(const std::string& name, const runtime::Graph& g, const Settings& s) {
  auto device = runtime::DevicePreset(s.device);
  if (!device.ok()) {
    std::fprintf(stderr, "%s\n", device.status().message().c_str());
    return 2;
  }
  runtime::AnalyticCostModel model(*device);
  rewriter::AnalyticLayoutCosts analytic(&model, *device);
  rewriter::ReducedPrecisionCosts bf16(&analytic, s.factors);
  const rewriter::LayoutCostSource& costs =
      s.bf16 ? static_cast<const rewriter::LayoutCostSource&>(bf16) : analytic;
  rewriter::LayoutSpaceOptions space;
  if (s.bf16) space.precisions = {rewriter::Precision::kBf16};
  auto start = std::chrono::steady_clock::now();
  auto p = rewriter::BuildLayoutProblem(g, costs, space);
  const double build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!p.ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), p.status().message().c_str());
    return 1;
  }
  rewriter::LayoutDpReport rp, re;
  double cpu_ms = 0, exact_cpu_ms = 0;
  rewriter::LayoutSolution solution;
  Status st = RunDp(*p, s.pruned, s.repeat, &rp, &cpu_ms, &solution);
  int reduced = 0;
  if (st.ok())
    for (rewriter::Format f : rewriter::StoredLayouts(*p, solution.choice))
      reduced += f.precision != rewriter::Precision::kF32;
  const bool try_exact = rp.max_cut_width <= s.exact_max_width;
  if (st.ok() && try_exact) st = RunDp(*p, s.exact, 1, &re, &exact_cpu_ms);
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), st.message().c_str());
    return 1;
  }
  char exact[160] = "- | - | - | -";
  if (!try_exact) {
    std::snprintf(exact, sizeof exact, "width > %d | - | - | -", s.exact_max_width);
  } else if (re.exact)
    std::snprintf(exact, sizeof exact, "%.2f | %d | %.1f | %.3f", exact_cpu_ms, re.peak_states,
                  re.cost_us, 100 * (rp.cost_us / re.cost_us - 1));
  else
    std::snprintf(exact, sizeof exact, "%.2f | %d (budget) | - | -", exact_cpu_ms, re.peak_states);
  std::printf(
      "| %s | %d | %.1f | %d | %d | %d | %.1f | %d | %.2f | %.2f | %lld/%lld/%lld/%lld | %.1f | "
      "%.1f | "
      "%.3f | "
      "%s | %s | %.3f |\n",
      name.c_str(), rp.nodes, build_ms, rp.given_max_cut_width, rp.max_cut_width, rp.peak_states,
      rp.mean_states, reduced, rp.time_ms, cpu_ms, static_cast<long long>(rp.pruned_dominated),
      static_cast<long long>(rp.pruned_threshold), static_cast<long long>(rp.pruned_pareto),
      static_cast<long long>(rp.pruned_beam), rp.cost_plain_us, rp.cost_us,
      rp.cost_plain_us / rp.cost_us, rp.exact ? "yes" : "no", exact,
      100 * (rp.cost_us / rp.lower_bound_us - 1));
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "build/models";
  bool densenet = true;
  std::string only;
  Settings s;
  s.exact.threshold = 0;
  s.exact.pareto = false;
  s.exact.max_states = 1 << 16;
  bool no_densenet = false, no_pareto = false, no_dominated = false;
  std::string precision_flag = "f32", factors;
  base::Flags flags("verisub-bench-layout", "[MODEL_DIR] [flags]", kEpilog);
  flags
      .Positional("MODEL_DIR", &dir, "the folder of .onnx models (default build/models)",
                  /*required=*/false)
      .String("--device", &s.device, "NAME", "analytic cost preset: v100, cpu-2core or h100")
      .Double("--threshold", &s.pruned.threshold, 0, 1e9,
              "the pruned DP drops states costlier than this times the cut's best (0: off)")
      .Int("--max-states", &s.pruned.max_states, 1, 1 << 30, "the pruned DP's beam width")
      .Int("--exact-max-states", &s.exact.max_states, 1, 1 << 30, "the exact DP's state cap")
      .Int("--exact-max-width", &s.exact_max_width, 0, 64,
           "skip the exact run above this cut width (its states grow as 4^width)")
      .Bool("--no-pareto", &no_pareto, "no Pareto pruning in the pruned DP")
      .Bool("--no-dominated", &no_dominated, "no dominance pruning in the pruned DP")
      .Int("--repeat", &s.repeat, 1, 1000, "DP runs per model (the best time is kept)")
      .String("--only", &only, "MODEL", "only the model named MODEL (its file name without .onnx)")
      .Bool("--no-densenet", &no_densenet, "leave DenseNet-121 out")
      .Enum("--precision", &precision_flag, {"f32", "bf16"},
            "bf16: values may be stored in bfloat16")
      .String("--precision-factors", &factors, "compute=F,memory=F,...",
              "the synthetic bfloat16 table's factors");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  densenet = !no_densenet;
  s.pruned.pareto = !no_pareto;
  s.pruned.prune_dominated = !no_dominated;
  s.bf16 = precision_flag == "bf16";
  if (!factors.empty()) {
    auto f = rewriter::ParsePrecisionFactors(factors);
    if (!f.ok()) return flags.UsageError("--precision-factors: " + f.status().message());
    s.factors = *f;
  }
  std::vector<std::string> models;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".onnx") models.push_back(e.path().string());
  std::sort(models.begin(), models.end());
  if (models.empty())
    std::printf(
        "bench-layout: no .onnx files in '%s' (write them with `verisub-models --out %s`)\n",
        dir.c_str(), dir.c_str());
  char precision[200] = "";
  if (s.bf16)
    std::snprintf(precision, sizeof precision,
                  ", bf16 allowed (synthetic: compute x%g, memory x%g, casts at %g GB/s + %g us)",
                  s.factors.compute_factor, s.factors.memory_factor, s.factors.cast_gbps,
                  s.factors.cast_launch_us);
  std::printf(
      "layout DP, analytic layout costs on %s%s; pruned: threshold %g, pareto %s, beam %d; "
      "exact: threshold and pareto off, beam %d\n",
      s.device.c_str(), precision, s.pruned.threshold, s.pruned.pareto ? "on" : "off",
      s.pruned.max_states, s.exact.max_states);
  PrintHeader();
  int rc = 0;
  for (const std::string& path : models) {
    if (!only.empty() && std::filesystem::path(path).stem().string() != only) continue;
    auto g = runtime::ImportOnnxFile(path);
    if (!g.ok()) {
      std::fprintf(stderr, "%s\n", g.status().message().c_str());
      rc = 1;
      continue;
    }
    rc = std::max(rc, Row(std::filesystem::path(path).stem().string(), *g, s));
  }
  if (densenet && (only.empty() || only == "densenet121")) {
    auto g = runtime::ImportOnnxModel(runtime::models::BuildDenseNet121({}), "densenet121");
    if (!g.ok()) {
      std::fprintf(stderr, "%s\n", g.status().message().c_str());
      return 1;
    }
    rc = std::max(rc, Row("densenet121", *g, s));
  }
  return rc;
}
