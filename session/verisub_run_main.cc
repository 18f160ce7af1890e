// verisub-run: the command-line face of a Session. Loads an ONNX model, optionally optimizes
// it, prepares it (oneDNN on the CPU), runs it --warmup + --runs times and prints the stage
// times and the median and minimum latency; --check compares the outputs with the reference
// backend. The last stdout line is `verisub-run: median_ms=<f> min_ms=<f> runs=<n>`.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "base/flags.h"
#include "rewriter/report_html.h"
#include "rewriter/verify_outputs.h"
#include "runtime/input_shapes.h"
#include "runtime/onnx_import.h"
#include "session/session.h"
#include "session/tensor_files.h"

namespace {

using verisub::Status;
using verisub::runtime::HostTensor;

constexpr const char* kEpilog =
    "Exit codes: 0 ran, 1 failed, 2 bad usage, 3 --check found outputs beyond the tolerance.";

struct RunFlags {
  std::string model;
  verisub::SessionOptions session;
  int runs = 20, warmup = 3;
  std::vector<std::string> input_files;
  std::string output_dir;
  std::string report_html;
  bool check = false;
  std::string check_against;  // recorded outputs to --check against instead of the reference
  bool compare_unoptimized = false;
  bool compare_unoptimized_first = false;
  bool serve = false;
  int profile = 0;
  int profile_top = 15;
};

// The steps of a profile grouped by kind, costliest first, then the `top` costliest steps (all
// of them when `top` is 0). "in run" is each step timed in its place in whole runs, "alone" the
// step repeated by itself: where "in run" is larger, the step pays for the caches its
// predecessors left it.
void PrintProfile(const std::vector<verisub::runtime::StepProfile>& steps, int top) {
  struct Kind {
    double seconds = 0, alone = 0;
    int steps = 0, nodes = 0, reference = 0;
  };
  std::map<std::string, Kind> kinds;
  double total = 0, total_alone = 0;
  for (const auto& p : steps) {
    Kind& k = kinds[p.kind];
    k.seconds += p.seconds;
    k.alone += p.alone_seconds;
    ++k.steps;
    k.nodes += p.nodes;
    k.reference += p.reference;
    total += p.seconds;
    total_alone += p.alone_seconds;
  }
  std::vector<std::pair<std::string, Kind>> sorted(kinds.begin(), kinds.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.seconds != b.second.seconds ? a.second.seconds > b.second.seconds
                                                : a.first < b.first;
  });
  std::printf("profile:  %zu steps, %.3f ms timed in the run, %.3f ms each timed alone\n",
              steps.size(), total * 1e3, total_alone * 1e3);
  std::printf("  %-28s %8s %8s %6s %6s %6s\n", "kind", "in run", "alone", "share", "steps",
              "nodes");
  for (const auto& [name, k] : sorted)
    std::printf("  %-28s %8.3f %8.3f %5.1f%% %6d %6d%s\n", name.c_str(), k.seconds * 1e3,
                k.alone * 1e3, total > 0 ? 100 * k.seconds / total : 0.0, k.steps, k.nodes,
                k.reference ? " (reference kernels)" : "");
  std::vector<const verisub::runtime::StepProfile*> by_time;
  for (const auto& p : steps) by_time.push_back(&p);
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const auto* a, const auto* b) { return a->seconds > b->seconds; });
  const size_t shown = top > 0 ? std::min<size_t>(top, by_time.size()) : by_time.size();
  std::printf("  %s (ms in run, ms alone):\n",
              shown == by_time.size() ? "every step" : "costliest steps");
  for (size_t i = 0; i < shown; ++i)
    std::printf("  %8.3f %8.3f  %-12s %s\n", by_time[i]->seconds * 1e3,
                by_time[i]->alone_seconds * 1e3, by_time[i]->kind.c_str(),
                by_time[i]->name.c_str());
}

// Deterministic inputs: floats uniform in [-1, 1), integers 0 and 1 (valid token ids).
HostTensor SyntheticInput(const verisub::runtime::Value& v, uint64_t seed) {
  int64_t n = verisub::runtime::CountElements(v.dims);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  if (verisub::runtime::IsFloatType(v.elem_type)) {
    std::vector<double> x(n);
    for (auto& e : x) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      e = static_cast<double>(s >> 11) / 9007199254740992.0 * 2 - 1;
    }
    return HostTensor::FromDoubles(v.elem_type, v.dims, x);
  }
  std::vector<int64_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = i % 2;
  return HostTensor::FromInts(v.elem_type, v.dims, x);
}

int Fail(const Status& st) {
  std::fprintf(stderr, "error: %s\n", st.message().c_str());
  return 1;
}

// Whether `g` quantizes a value computed at run time (a quantizer of a constant is folded).
bool QuantizesAtRunTime(const verisub::runtime::Graph& g) {
  for (const auto& n : g.nodes())
    if (n->opaque() && !n->inputs.empty() && n->inputs[0] != verisub::runtime::kNoValue &&
        !g.value(n->inputs[0]).constant &&
        (n->op_type == "DynamicQuantizeLinear" || n->op_type == "QuantizeLinear" ||
         n->op_type == "DynamicQuantizeMatMul"))
      return true;
  return false;
}

// What --check compares with: the outputs recorded in --check-against, else the reference
// backend's on the model as imported. An optimized session's graph is the rewritten one, so the
// model is imported again: the check covers the rewrites too, not only the backend.
verisub::StatusOr<std::vector<HostTensor>> ExpectedOutputs(const RunFlags& flags,
                                                           const verisub::Session& s,
                                                           const std::vector<HostTensor>& inputs) {
  if (!flags.check_against.empty()) return verisub::ReadOutputs(flags.check_against, s.graph());
  std::optional<verisub::runtime::Graph> imported;
  if (s.optimize_report()) {
    verisub::runtime::ImportOptions import;
    import.input_shapes = flags.session.input_shapes;
    import.float16_as_float32 = true;  // as the session imported it
    import.require_static_shapes = !flags.session.dynamic_shapes;
    auto g = verisub::runtime::ImportOnnxFile(flags.model, import);
    if (!g.ok()) return g.status();
    imported = std::move(g).value();
  }
  auto ref = verisub::MakeBackend("reference")->Prepare(imported ? *imported : s.graph(), {});
  if (!ref.ok()) return ref.status();
  return (*ref)->Run(inputs);
}

// --serve: per 'run [W]' line on stdin, W untimed runs and one timed run, its time on one line,
// until the end of stdin.
Status Serve(verisub::Session& s, const std::vector<HostTensor>& inputs) {
  std::printf("serve: ready\n");
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    int warm = 0;
    if (char rest = 0; line != "run" && (std::sscanf(line.c_str(), "run %d%c", &warm, &rest) != 1 ||
                                         warm < 0 || warm > 1000))
      return verisub::InvalidArgument("--serve: unknown command '" + line + "' (only 'run [W]')");
    for (int w = 0; w < warm; ++w)
      if (auto out = s.Run(inputs); !out.ok()) return out.status();
    auto start = std::chrono::steady_clock::now();
    auto out = s.Run(inputs);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!out.ok()) return out.status();
    std::printf("serve: ms=%.3f\n", ms);
    std::fflush(stdout);
  }
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace verisub;  // NOLINT
  RunFlags flags;
  std::vector<std::string> input_shapes;
  std::string device;
  rewriter::CostOptions& cost = flags.session.cost;
  base::Flags parser("verisub-run", "MODEL.onnx [flags]", kEpilog);
  parser.Positional("MODEL.onnx", &flags.model, "the model to run")
      .Bool("--optimize", &flags.session.optimize, "optimize the model with the rules first")
      .Path("--rules", &flags.session.rules_path,
            "rules for --optimize (default: the shipped data/rules/taso.pb)")
      .Bool("--allow-unproved", &flags.session.allow_unproved_rules,
            "use rules without a proof record")
      .Enum("--cost", &cost.cost, {"auto", "analytic", "cpu-measured", "gpu-measured"},
            "--optimize: cost model (auto: kernels timed with the backend's libraries on this "
            "machine's CPU or GPU, cached; analytic: the --device preset)")
      .String("--device", &device, "NAME",
              "where to run: cpu (oneDNN) or cuda (the GPU backend); v100, cpu-2core or h100 "
              "name the --cost analytic preset instead")
      .Path("--cost-table", &cost.table_path,
            "--optimize: read costs from this table and add new measurements to it")
      .Enum("--cost-missing", &cost.missing, {"measure", "analytic", "error"},
            "--optimize: an instance no table has is timed, estimated, or an error")
      .Path("--cost-cache", &cost.cache_dir, "per-user cost cache folder ('none': no cache)")
      .Threads("--threads", &flags.session.num_threads, 0,
               "kernel threads (0: one per core); measured costs are timed with as many")
      .Int("--runs", &flags.runs, 1, 1000000, "timed runs")
      .Int("--warmup", &flags.warmup, 0, 1000000, "untimed runs first")
      .Repeated("--input-shape", &input_shapes, "NAME=D0,D1,...",
                "fixes a graph input's symbolic dimensions, e.g. input=1,3,224,224")
      .Bool("--dynamic-shapes", &flags.session.dynamic_shapes,
            "keep the model's symbolic input dimensions symbolic: prepared once, it runs at any "
            "input shape (as a decoder's growing past needs), the shapes of the --input files "
            "included, instead of being prepared for those shapes (faster kernels)")
      .Repeated("--input", &flags.input_files, "FILE",
                "an input tensor, an ONNX TensorProto (.pb) or a NumPy array (.npy), one per "
                "graph input, matched by the tensor's name or the file's (else in order; "
                "default: deterministic synthetic inputs); an input the model declares with "
                "symbolic dimensions takes the file's shape unless --input-shape gives one")
      .Path("--output", &flags.output_dir,
            "write every output into this existing folder as NAME.pb (ONNX TensorProto)")
      .Path("--report-html", &flags.report_html,
            "write a page of the model as it runs: the graph with every value's layout, "
            "coloured by step times with --profile, and the steps")
      .Enum("--backend", &flags.session.backend, {"onednn", "cuda", "reference"},
            "the backend to run on")
      .Enum("--layout", &flags.session.layout, {"auto", "backend", "dp", "joint", "plain"},
            "value layouts: the layout DP (auto: falling back to the backend's own policy where "
            "the DP cannot lay the model out), the backend's own policy, the layout DP, the "
            "substitution search and the DP jointly (implies --optimize), or all plain")
      .Enum("--precision", &flags.session.precision, {"f32", "fp16", "bf16"},
            "on the CPU with --layout auto|dp|joint: bf16 lets the DP store values in bfloat16 "
            "where its kernels are faster (needs avx512_core_bf16); on the GPU: fp16 or bf16 "
            "stores every activation in 16 bits; either within --precision-budget")
      .Double("--precision-budget", &flags.session.precision_budget, 0, 1e9,
              "largest relative output error ||bf16 - f32|| / ||f32|| allowed by --precision "
              "bf16, checked on the backend's own outputs against its float32 ones")
      .Enum("--fusion", &flags.session.fusion, {"none", "library", "subop", "auto"},
            "kernels of the memory-bound operators outside convolutions and matmuls: the "
            "library's, one per node or library pattern (library); chains of them generated as "
            "one kernel each with Halide, cached on disk (subop); each generated kernel timed "
            "at prepare against the library's steps and kept where faster (auto); or nothing "
            "fused at all, not even a convolution's bias and activation (none)")
      .Path("--subop-rules", &flags.session.subop_rules,
            "rules at the sub-operator level that rewrite each generated kernel before it is "
            "compiled (default: the shipped data/rules/subop.pb; 'none': none)")
      .Path("--decisions", &flags.session.decisions,
            "the folder where the choices timed at prepare (layouts, rewrites, precision, "
            "--fusion auto) are remembered per graph, so a second load times nothing and "
            "chooses the same ('none': time every load; default: decisions/ in the per-user "
            "cache)")
      .Bool("--check", &flags.check,
            "compare the outputs with the reference backend's on the model as imported (before "
            "any rewrite)")
      .Path("--check-against", &flags.check_against,
            "--check against outputs recorded earlier in this folder, NAME.pb per output as "
            "--output writes them (e.g. by --backend reference --output DIR on the same inputs), "
            "instead of running the reference backend")
      .Bool("--compare-unoptimized", &flags.compare_unoptimized,
            "with --optimize: also prepare the model without it and time the two side by side "
            "in this process (warm runs alternating in pairs of rounds A B, B A: at least --runs "
            "rounds and 8, more until 2 s of runs, at most 200), printing both medians and the "
            "paired ratio")
      .Bool("--compare-unoptimized-first", &flags.compare_unoptimized_first,
            "with --compare-unoptimized: prepare the model without --optimize first, before the "
            "optimized session (two prepared copies of a large model in one process can run "
            "a few per cent apart for where each lies in memory: a bench alternates the order "
            "from process to process)")
      .Bool("--serve", &flags.serve,
            "after everything else, print 'serve: ready' and answer each 'run [W]' line on stdin "
            "with W untimed runs and one timed run, 'serve: ms=<float>', until the end of stdin "
            "(a bench keeps the model prepared beside another engine and alternates between them)")
      .Int("--profile", &flags.profile, 0, 1000000,
           "after the runs, time every step this many times, in whole runs and alone, and "
           "print where the time goes (0: no profile)")
      .Int("--profile-top", &flags.profile_top, 0, 1000000,
           "with --profile: list this many of the costliest steps (0: every step)");
  if (std::optional<int> code = parser.ParseMain(argc, argv)) return *code;
  if (flags.compare_unoptimized_first) flags.compare_unoptimized = true;
  if (flags.compare_unoptimized && !flags.session.optimize && flags.session.layout != "joint")
    return parser.UsageError("--compare-unoptimized needs --optimize (or --layout joint)");
  if (!flags.check_against.empty()) flags.check = true;
  if (device == "cuda") {
    flags.session.backend = "cuda";
  } else if (device == "cpu") {
    flags.session.backend = "onednn";
  } else if (!device.empty()) {
    cost.device = device;
  }
  for (const std::string& spec : input_shapes)
    if (Status st = runtime::ParseInputShapeFlag(spec, &flags.session.input_shapes); !st.ok())
      return parser.UsageError(st.message());

  // Said before the work, not after it.
  if (!flags.output_dir.empty())
    if (Status st = base::CheckOutputDirectory(flags.output_dir); !st.ok()) return Fail(st);
  if (!flags.report_html.empty())
    if (Status st = base::CheckOutputPath(flags.report_html); !st.ok()) return Fail(st);
  if (std::error_code ec;
      !flags.check_against.empty() && !std::filesystem::is_directory(flags.check_against, ec))
    return Fail(
        verisub::InvalidArgument("--check-against " + flags.check_against + ": not a folder"));
  // A dynamic-axes export runs at the shapes of the input files given, where no --input-shape
  // says otherwise.
  if (!flags.input_files.empty() && !flags.session.dynamic_shapes)
    if (Status st =
            ShapesFromInputFiles(flags.model, flags.input_files, &flags.session.input_shapes);
        !st.ok())
      return Fail(st);
  // The same options without the optimizer, for --compare-unoptimized: what the user would run
  // otherwise.
  SessionOptions plain = flags.session;
  plain.optimize = false;
  if (plain.layout == "joint") plain.layout = "auto";
  StatusOr<std::unique_ptr<Session>> other = verisub::InvalidArgument("not prepared");
  if (flags.compare_unoptimized_first) {
    other = Session::Create(flags.model, plain);
    if (!other.ok()) return Fail(other.status().WithContext("the model without --optimize"));
  }
  auto session = Session::Create(flags.model, flags.session);
  if (!session.ok()) return Fail(session.status());
  Session& s = **session;
  const runtime::Graph& g = s.graph();
  std::printf("load:     %.1f ms\n", s.times().load_s * 1e3);
  if (s.optimize_report()) {
    const OptimizeReport& r = *s.optimize_report();
    std::printf("optimize: %.1f ms (%d -> %d nodes, %d rewrite steps, cost %.1f -> %.1f us)\n",
                s.times().optimize_s * 1e3, r.nodes_before, r.nodes_after, r.search.rewrite_steps,
                r.search.cost_before_us, r.search.cost_after_us);
  }
  if (const auto& j = s.joint_choice())
    std::printf(
        "joint:    layout-DP cost %.1f us (joint search) vs %.1f us (rewrites only): kept %s\n",
        j->joint_cost_us, j->sequential_cost_us, j->kept_sequential ? "rewrites only" : "joint");
  if (const auto& l = s.layout_report())
    std::printf(
        "layouts:  DP cost %.1f us (all plain %.1f us), %d nodes, peak %d states, %.1f ms%s\n",
        l->cost_us, l->cost_plain_us, l->nodes, l->peak_states, l->build_ms + l->time_ms,
        l->exact ? ", exact" : "");
  if (!s.layout_note().empty()) std::printf("layouts:  %s\n", s.layout_note().c_str());
  if (const auto& p = s.precision_report())
    std::printf(
        "precision: %d values in %s (%d kept float32 by the budget, %d as indices or "
        "comparisons are made of them, %d rounds), output error %.2e (%s), DP cost %.1f us vs "
        "%.1f us all float32\n",
        p->reduced_values, flags.session.precision.c_str(), p->reverted_values, p->exact_values,
        p->rounds, p->error, p->measured_on_backend ? "the backend's own outputs" : "emulated",
        p->cost_us, p->float32_cost_us);
  if (const auto& p = s.precision_report(); p && !p->refused.empty())
    std::printf("precision: float32 kept: %s\n", p->refused.c_str());
  if (const auto& p = s.precision_report(); p && p->backend_error >= 0 && !p->measured_on_backend)
    std::printf("precision: the backend's own outputs: error %.2e%s\n", p->backend_error,
                p->kept_float32_by_check ? ", over the budget: float32 kept"
                : p->tightened           ? " (solved again with a tighter budget)"
                                         : "");
  constexpr const char* kRemembered = " (the choice remembered for this graph: nothing timed)";
  if (const auto& p = s.precision_report(); p && p->timing_from_cache)
    std::printf("precision: kept %s%s\n",
                p->kept_float32_by_timing ? "float32" : flags.session.precision.c_str(),
                kRemembered);
  else if (p && p->measured_bf16_ms > 0)
    std::printf("precision: timed %.3f ms with %s, %.3f ms float32: kept %s\n", p->measured_bf16_ms,
                flags.session.precision.c_str(), p->measured_f32_ms,
                !p->kept_float32_by_timing ? flags.session.precision.c_str()
                : p->measured_bf16_ms < p->measured_f32_ms
                    ? "float32 (in the backend's own layouts, faster still: below)"
                    : "float32");
  if (const auto& t = s.layout_timing(); t && t->from_cache)
    std::printf("layouts:  kept %s%s\n", t->kept_backend ? "the backend's" : "the DP's",
                kRemembered);
  else if (t)
    std::printf(
        "layouts:  timed %.3f ms in the DP's layouts, %.3f ms in the backend's own: kept "
        "%s\n",
        t->dp_ms, t->backend_ms, t->kept_backend ? "the backend's" : "the DP's");
  if (const auto& t = s.rewrite_timing(); t && t->from_cache)
    std::printf("rewrites: kept %s%s\n", t->kept_original ? "the original" : "the rewritten graph",
                kRemembered);
  else if (t)
    std::printf("rewrites: timed %.3f ms rewritten, %.3f ms original: kept %s\n", t->optimized_ms,
                t->original_ms, t->kept_original ? "the original" : "the rewritten graph");
  if (!s.cost_summary().empty()) std::printf("costs:    %s\n", s.cost_summary().c_str());
  runtime::PrepareStats st = s.stats();
  std::printf(
      "prepare:  %.1f ms (backend %s, threads %d: %d steps, %d nodes fused, %d on reference "
      "kernels, %d reorders, %d in place, %.1f MB activations, %.1f MB weights%s, %.1f MB "
      "through kernels per run)\n",
      s.times().prepare_s * 1e3, s.backend_name().c_str(), flags.session.num_threads, st.steps,
      st.fused_nodes, st.fallback_nodes, st.reorders, st.in_place, st.activation_bytes / 1048576.0,
      st.weight_bytes / 1048576.0,
      st.shared_weight_bytes > 0 ? (" (" + std::to_string(st.shared_weight_bytes / 1048576) +
                                    " MB of them shared with another model of this process)")
                                       .c_str()
                                 : "",
      st.step_io_bytes / 1048576.0);

  if (st.generated_kernels > 0 || flags.session.fusion == "subop" || flags.session.fusion == "auto")
    std::printf(
        "fusion:   %s: %d generated kernels for %d nodes (%d compiled, %d from the cache; "
        "partitioned in %.1f ms; %d sub-operator rule rewrites)\n",
        flags.session.fusion.c_str(), st.generated_kernels, st.generated_nodes, st.kernels_compiled,
        st.kernel_cache_hits, st.generator_plan_seconds * 1e3, st.subop_rule_rewrites);
  if (!st.generator_error.empty())
    std::printf("fusion:   some clusters run on the library's kernels: %s\n",
                st.generator_error.c_str());
  if (const auto& t = s.fusion_timing(); t && t->from_cache) {
    std::printf("fusion:   kept %s%s\n",
                t->kept_library
                    ? "the library's kernels"
                    : (std::to_string(t->generated_kernels) + " generated kernels").c_str(),
                kRemembered);
  } else if (const auto& t = s.fusion_timing()) {
    std::printf(
        "fusion:   profiled %.3f ms with %d generated kernels, %.3f ms with the library's; %d "
        "of the kernels faster than the library's steps for their nodes\n",
        t->generated_ms, t->clusters, t->library_ms, t->kept_clusters);
    if (t->selected_ms > 0)
      std::printf("fusion:   timed side by side %.3f ms with those, %.3f ms with the library's\n",
                  t->selected_ms, t->selected_library_ms);
    std::printf("fusion:   kept %s\n",
                t->kept_library
                    ? "the library's kernels"
                    : (std::to_string(t->generated_kernels) + " generated kernels").c_str());
  }
  if (!st.kernel_variants.empty()) {
    std::printf("kernels: ");
    for (const auto& [name, count] : st.kernel_variants)
      std::printf(" %s x%d", name.c_str(), count);
    std::printf(" (in place of oneDNN's default kernels for those nodes)\n");
  }
  if (!st.fallback_kinds.empty()) {
    std::printf("reference kernels:");
    for (const auto& [kind, count] : st.fallback_kinds) std::printf(" %s x%d", kind.c_str(), count);
    std::printf("\n");
  }

  std::vector<HostTensor> inputs;
  if (!flags.input_files.empty()) {
    auto read = ReadInputs(flags.input_files, g);
    if (!read.ok()) return Fail(read.status());
    inputs = std::move(read).value();
  } else {
    for (size_t k = 0; k < g.inputs().size(); ++k) {
      const verisub::runtime::Value& v = g.value(g.inputs()[k]);
      for (int64_t d : v.dims)
        if (d < 0)
          return Fail(verisub::InvalidArgument(
              "input '" + v.name + "' has symbolic dimensions " +
              verisub::runtime::DimsToString(v.dims) +
              " under --dynamic-shapes: give its tensor with --input (or fix them with "
              "--input-shape)"));
      inputs.push_back(SyntheticInput(v, k + 1));
    }
  }

  StatusOr<std::vector<HostTensor>> out = std::vector<HostTensor>();
  for (int i = 0; i < flags.warmup; ++i) {
    out = s.Run(inputs);
    if (!out.ok()) return Fail(out.status());
  }
  std::vector<double> ms;
  for (int i = 0; i < flags.runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    out = s.Run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
    if (!out.ok()) return Fail(out.status());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted.size() % 2
                      ? sorted[sorted.size() / 2]
                      : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  std::printf("run:      median %.3f ms, min %.3f ms, max %.3f ms over %d runs (%d warm-up)\n",
              median, sorted.front(), sorted.back(), flags.runs, flags.warmup);

  if (flags.compare_unoptimized) {
    if (!flags.compare_unoptimized_first) {
      other = Session::Create(flags.model, plain);
      if (!other.ok()) return Fail(other.status().WithContext("the model without --optimize"));
    }
    // At least --runs rounds and four pairs, rounded up to whole pairs (A B, B A), and more until
    // 2 s of timed runs: two prepared copies of a large model settle over the first seconds
    // (AlexNet's paired ratio 0.90-0.97 over 6 rounds, 0.99-1.01 over 30-100, the same graph on
    // both sides), and a run of a 450 ms model moves by 10% on a busy host (RegNet-X-32GF, the
    // same prepared graph on both sides: 0.87 over the two pairs 2 s allowed, 1.04 over six).
    const int rounds = std::max(flags.runs + flags.runs % 2, 8);
    auto t = TimeSideBySide(
        [&] { return s.Run(inputs).status(); }, [&] { return (*other)->Run(inputs).status(); },
        {.min_rounds = rounds, .budget_ms = 2000, .max_rounds = std::max(rounds, 200)});
    if (!t.ok()) return Fail(t.status());
    std::printf(
        "compare:  --optimize %.3f ms, without %.3f ms (medians of %d warm runs each, "
        "alternating); without / --optimize: median %.3f (quartiles %.3f-%.3f) over %d pairs of "
        "rounds speedup=%.4f\n",
        t->a_ms, t->b_ms, t->rounds, t->ratio_median, t->ratio_q1, t->ratio_q3, t->rounds / 2,
        t->ratio_median);
  }

  std::vector<runtime::StepProfile> steps;
  if (flags.profile > 0) {
    auto profile = s.Profile(flags.profile);
    if (!profile.ok()) return Fail(profile.status());
    PrintProfile(*profile, flags.profile_top);
    steps = std::move(profile).value();
  }
  if (!flags.report_html.empty()) {
    rewriter::RunReportInput in;
    in.model = flags.model;
    in.graph = &g;
    char line[256];
    const std::string threads = flags.session.num_threads > 0
                                    ? std::to_string(flags.session.num_threads) + " threads"
                                    : std::string("a thread per core");
    std::snprintf(line, sizeof(line), "%s, %s; median %.3f ms over %d runs",
                  s.backend_name().c_str(), threads.c_str(), median, flags.runs);
    in.summary = {{"backend and latency", line},
                  {"optimized", s.optimize_report() ? "yes (proved rewrites)" : "no"},
                  {"layouts", flags.session.layout +
                                  (s.layout_note().empty() ? "" : " (" + s.layout_note() + ")")},
                  {"precision", flags.session.precision}};
    if (const auto& p = s.precision_report()) {
      const bool kept32 = p->kept_float32_by_check || p->kept_float32_by_timing;
      in.summary.push_back(
          {"reduced precision",
           kept32 ? std::string("float32 kept (") +
                        (p->kept_float32_by_check ? "over the budget" : "faster") + ")"
                  : std::to_string(p->reduced_values) + " values stored in " +
                        flags.session.precision + ", output error " +
                        std::to_string(p->backend_error >= 0 ? p->backend_error : p->error)});
    }
    in.steps = steps;
    in.storage_types = s.storage_types();
    if (Status st = base::WriteFileAtomically(flags.report_html, rewriter::RenderRunReport(in));
        !st.ok())
      return Fail(st);
    std::printf("report:   %s\n", flags.report_html.c_str());
  }
  if (!flags.output_dir.empty()) {
    auto written = WriteOutputs(flags.output_dir, g, *out);
    if (!written.ok()) return Fail(written.status());
    std::printf("outputs:  %zu written to %s\n", written->size(), flags.output_dir.c_str());
  }
  int rc = 0;
  if (flags.check) {
    auto expected = ExpectedOutputs(flags, s, inputs);
    if (!expected.ok()) return Fail(expected.status());
    // Each element within 1e-4 of its output's scale (max |reference| over that output, at least
    // 1), on every backend. ResNet-101/152 with random weights (logits 1e6-1e10) showed why not
    // per element: every pair of PyTorch, ONNX Runtime, oneDNN and the reference differs by 1e-3
    // of max(|ref|,1) on some logit, by 1e-6 of the output's scale (docs/bench-zoo.md).
    // An output stored in float16 (bfloat16) rounds values a float32 ulp apart to neighbours one
    // of its own ulps apart, 2^-10 (2^-7) of the value: within twice that.
    double rel = 1e-4;
    for (const HostTensor& t : *expected)
      rel = std::max(rel, t.elem_type == verisub::runtime::kFloat16    ? 2e-3
                          : t.elem_type == verisub::runtime::kBfloat16 ? 1.6e-2
                                                                       : 0.0);
    const rewriter::OutputAgreement agree = rewriter::CompareWithReference(*out, *expected);
    // Values stored in bfloat16: the output error the precision budget allowed (relative norm).
    const double norm_rel = rewriter::RelativeOutputError(*out, *expected);
    const bool reduced = s.precision_report() && s.precision_report()->reduced_values > 0 &&
                         !s.precision_report()->kept_float32_by_timing &&
                         !s.precision_report()->kept_float32_by_check;
    // A model that quantizes values computed at run time (DynamicQuantizeLinear, QuantizeLinear
    // of an activation): float rounding one ulp apart before a quantizer moves a value by a whole
    // step (1/255 of its range), and such flips compound over the layers; no two engines agree
    // elementwise there (ONNX Runtime, our reference and oneDNN kernels differ from each other by
    // 2.1% in norm on a 12-layer dynamically quantized encoder, and by the same from float32).
    // Checked in relative norm instead, against a bound an error of the integer arithmetic
    // exceeds many times over.
    constexpr double kQuantizedNormRel = 0.05;
    const bool quantized = QuantizesAtRunTime(g);
    bool ok = reduced ? agree.shapes_match && !agree.nonfinite_mismatch &&
                            norm_rel <= flags.session.precision_budget
              : quantized
                  ? agree.shapes_match && !agree.nonfinite_mismatch && norm_rel <= kQuantizedNormRel
                  : agree.Within(rel);
    const std::string against = flags.check_against.empty()
                                    ? std::string("the reference backend")
                                    : "the outputs in " + flags.check_against;
    if (quantized && !reduced)
      std::printf(
          "check:    %s against %s: relative error %.3g (quantized at run time: "
          "tolerance %.0e in norm), max abs %.3g\n",
          ok ? "ok" : "FAILED", against.c_str(), norm_rel, kQuantizedNormRel, agree.max_abs);
    else if (reduced)
      std::printf("check:    %s against %s: relative error %.3g (budget %.0e), max abs %.3g\n",
                  ok ? "ok" : "FAILED", against.c_str(), norm_rel, flags.session.precision_budget,
                  agree.max_abs);
    else
      std::printf(
          "check:    %s against %s: max abs %.3g, %.3g of the output's max |ref| (tolerance "
          "%.0e of it; per element max rel %.3g of max(|ref|,1))\n",
          ok ? "ok" : "FAILED", against.c_str(), agree.max_abs, agree.max_scaled, rel,
          agree.max_rel);
    if (!agree.shapes_match) std::printf("check:    output shapes differ\n");
    if (agree.nonfinite_mismatch) std::printf("check:    a NaN or an infinity on one side only\n");
    if (!ok) rc = 3;
  }
  if (flags.serve)
    if (Status st = Serve(s, inputs); !st.ok()) return Fail(st);
  std::printf("verisub-run: median_ms=%.3f min_ms=%.3f runs=%d\n", median, sorted.front(),
              flags.runs);
  return rc;
}
