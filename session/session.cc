// Session: import, optional optimization, prepare on a backend, run.
#include "session/session.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "base/file_io.h"
#include "base/process_stats.h"
#include "rewriter/joint.h"
#include "rewriter/layout_assign.h"
#include "rewriter/layout_costs.h"
#include "rewriter/measured_layout_costs.h"
#include "rewriter/rule_loader.h"
#include "rewriter/rule_source.h"
#include "rewriter/verify_outputs.h"
#include "runtime/canonicalize.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/executor.h"
#include "runtime/graph_text.h"
#include "runtime/onnx_import.h"
#include "runtime/reference_backend.h"
#ifdef VERISUB_HAVE_DNNL
#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/dnnl/measured_cost.h"
#endif
#ifdef VERISUB_HAVE_CUDA_COSTS
#include "runtime/cuda/cuda_backend.h"
#endif
#ifdef VERISUB_HAVE_HALIDE
#include "fusion/generator.h"
#include "fusion/halide_kernel.h"
#endif

namespace verisub {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What the layout policy gives the backend: per-value layouts (empty: the backend's own policy)
// and storage types (empty: float32); "dp" and "joint" run the layout DP, whose assignment the
// session's graph then carries (runtime::Value::layout).
struct SessionPlacement {
  std::vector<specs::Layout> layouts;
  std::vector<int32_t> storage_types;
  std::optional<rewriter::LayoutDpReport> dp;
  std::optional<rewriter::PrecisionReport> precision;
};

// The storage types of assignment `a`: bfloat16 where it stores a value so, else 0 (the value's
// own type).
std::vector<int32_t> StorageTypes(const runtime::Graph& g, const rewriter::LayoutAssignment& a) {
  std::vector<int32_t> types(g.num_values(), 0);
  for (int v = 0; v < g.num_values(); ++v)
    if (a.value_precisions[v] == rewriter::Precision::kBf16) types[v] = runtime::kBfloat16;
  return types;
}

// What every preparation of a session shares: the kernel threads, and whether the library fuses
// nodes (fusion "none" fuses nothing).
runtime::PrepareOptions SessionPrepare(const SessionOptions& options, int num_threads) {
  runtime::PrepareOptions prepare;
  prepare.num_threads = num_threads;
  prepare.library_fusion = options.fusion != "none";
  return prepare;
}

// Prepares `g` on `backend` as an assignment places its values (layouts, bfloat16 storage) and
// runs it: the precision budget is checked on the outputs the model will compute, not on the
// reference executor's emulation of them (exact loops: 8 minutes of a RegNet-Y-128GF prepare,
// and an underestimate of what the bf16 kernels round).
rewriter::AssignmentRunner RunOnBackend(const runtime::Graph& g, const runtime::Backend& backend,
                                        runtime::PrepareOptions base) {
  return [&g, &backend, base](const rewriter::LayoutAssignment& a,
                              const std::vector<runtime::HostTensor>& inputs)
             -> StatusOr<std::vector<runtime::HostTensor>> {
    runtime::Graph placed = g;
    rewriter::StoreLayouts(a, &placed);
    runtime::PrepareOptions prepare = base;
    prepare.layouts = runtime::ValueLayouts(placed);
    prepare.storage_types = StorageTypes(g, a);
    auto m = backend.Prepare(placed, prepare);
    if (!m.ok()) return m.status().WithContext(backend.Name() + " backend");
    return (*m)->Run(inputs);
  };
}

// Whether some input of `g` has a symbolic dimension (SessionOptions::dynamic_shapes).
bool SymbolicInput(const runtime::Graph& g) {
  for (int v : g.inputs())
    if (!g.value(v).StaticShape()) return true;
  return false;
}

// The layouts and storage types of `graph`'s values under `options`. With `backend`, a reduced
// precision's budget is checked on that backend's own outputs (at `num_threads`).
StatusOr<SessionPlacement> PlaceValues(runtime::Graph* graph, const SessionOptions& options,
                                       const runtime::CostModel* model,
                                       const runtime::Backend* backend = nullptr,
                                       int num_threads = 0) {
  const runtime::Graph& g = *graph;
  const std::string& layout = options.layout;
  SessionPlacement out;
  if (options.precision != "f32" && options.precision != "bf16" && options.precision != "fp16")
    return InvalidArgument("unknown precision '" + options.precision + "' (f32, fp16 or bf16)");
  if (options.backend == "cuda" && options.precision != "f32") {
    // On the GPU every float activation is stored in 16 bits (Tensor Core kernels, float32
    // accumulation); the per-value choice by the layout DP is the CPU's. The budget is checked
    // on the backend's own outputs after prepare (CheckPrecisionOnBackend), float32 kept when
    // it is missed or runs faster.
    const int32_t narrow = options.precision == "fp16" ? runtime::kFloat16 : runtime::kBfloat16;
    out.storage_types.assign(g.num_values(), 0);
    rewriter::PrecisionReport report;
    for (int v = 0; v < g.num_values(); ++v)
      if (g.value(v).elem_type == runtime::kFloat && !g.value(v).constant &&
          !g.value(v).dims.empty()) {  // scalars (a smul's factor) stay float32
        out.storage_types[v] = narrow;
        ++report.reduced_values;
      }
    out.precision = report;
    return out;
  }
  if (options.precision == "fp16")
    return InvalidArgument("precision fp16 needs the cuda backend (--device cuda)");
  const bool bf16 = options.precision == "bf16";
  if (bf16 && layout != "dp" && layout != "joint")
    return InvalidArgument(
        "precision bf16 is chosen by the layout DP: it needs layout dp or joint");
  if (layout == "backend") return out;
  if (layout == "plain") {
    out.layouts.assign(g.num_values(), specs::Layout::kPlain);
    return out;
  }
  if (layout != "dp" && layout != "joint")
    return InvalidArgument("unknown layout policy '" + layout +
                           "' (auto, backend, dp, joint or plain)");
  LayoutCostsFor costs(model);
  // Inputs of symbolic shape (SessionOptions::dynamic_shapes): the values computed from them run
  // on kernels of run-time shapes, in float32, and the precision budget has no shape to run at.
  const bool symbolic_input = SymbolicInput(g);
  if (!bf16 || symbolic_input) {
    rewriter::LayoutDpReport report;
    auto a = rewriter::AssignLayouts(g, costs.costs(), rewriter::LayoutDpOptions(), &report);
    if (!a.ok()) return a.status().WithContext("layout assignment");
    rewriter::StoreLayouts(*a, graph);
    out.layouts = runtime::ValueLayouts(*graph);
    out.dp = report;
    if (bf16) {
      rewriter::PrecisionReport refused;
      refused.refused = "inputs of symbolic shape (dynamic shapes) run in float32";
      out.precision = refused;
    }
    return out;
  }
#ifdef VERISUB_HAVE_DNNL
  if (options.backend != "onednn" || !runtime::dnnl_backend::HasBf16Kernels())
    return FailedPrecondition("precision bf16: the " + options.backend +
                              " backend has no native bfloat16 kernels on this CPU (oneDNN ISA " +
                              runtime::dnnl_backend::CpuIsaName() + "; avx512_core_bf16 needed)");
#else
  return FailedPrecondition("precision bf16: this build has no oneDNN backend");
#endif
  // Measured bfloat16 kernels, or the synthetic table over the analytic costs.
  rewriter::ReducedPrecisionCosts synthetic(&costs.costs(), rewriter::PrecisionFactors());
  const rewriter::LayoutCostSource& source =
      costs.costs().ReducedPrecisions().empty()
          ? static_cast<const rewriter::LayoutCostSource&>(synthetic)
          : costs.costs();
  rewriter::LayoutSpaceOptions space;
  space.precisions = {rewriter::Precision::kBf16};
  rewriter::PrecisionBudget budget;
  budget.max_error = options.precision_budget;
  rewriter::PrecisionReport report;
  auto a = rewriter::AssignLayoutsWithinBudget(
      g, source, rewriter::LayoutDpOptions(), space, budget, &report,
      backend ? RunOnBackend(g, *backend, SessionPrepare(options, num_threads))
              : rewriter::AssignmentRunner());
  if (!a.ok()) return a.status().WithContext("layout and precision assignment");
  rewriter::StoreLayouts(*a, graph);
  out.layouts = runtime::ValueLayouts(*graph);
  out.storage_types = StorageTypes(g, *a);
  out.dp = report.dp;
  out.precision = report;
  return out;
}

// Zero inputs of the graph's static shapes; nullopt when an input's shape is not static.
std::optional<std::vector<runtime::HostTensor>> ZeroInputs(const runtime::Graph& g) {
  std::vector<runtime::HostTensor> inputs;
  for (int v : g.inputs()) {
    const runtime::Value& val = g.value(v);
    if (!val.StaticShape()) return std::nullopt;
    std::vector<double> zeros(runtime::CountElements(val.dims), 0.0);
    inputs.push_back(runtime::HostTensor::FromDoubles(val.elem_type, val.dims, zeros));
  }
  return inputs;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The side-by-side timing of two prepared models at prepare: at least 6 rounds (3 pairs); small
// models get more, up to about 300 ms of timed runs (a 4 ms model timed over 5 single runs flipped
// its choice from process to process); a close call (within 4%) gets more pairs, up to 5 s of
// timed runs (EfficientNet-v2-L's layout choice, 8% apart on a quiet machine, came out 218 vs
// 217 ms over 5 rounds on a noisy one and kept the slower). Returns a's median and b's time as
// a's median times the paired ratio (drift between rounds cancels in it, not in two medians).
StatusOr<std::pair<double, double>> TimePreparedSideBySide(
    runtime::PreparedModel& a, runtime::PreparedModel& b,
    const std::vector<runtime::HostTensor>& inputs) {
  auto t = verisub::TimeSideBySide([&] { return a.Run(inputs).status(); },
                                   [&] { return b.Run(inputs).status(); },
                                   {.min_rounds = 6,
                                    .budget_ms = 300,
                                    .max_rounds = 40,
                                    .settle_band = 0.04,
                                    .settle_budget_ms = 5000});
  if (!t.ok()) return t.status();
  return std::make_pair(t->a_ms, t->a_ms * t->ratio_median);
}

// Whether `alternative_ms` beats `current_ms` by more than kTimedChoiceMargin.
bool ClearlyFaster(double alternative_ms, double current_ms) {
  return alternative_ms < (1 - kTimedChoiceMargin) * current_ms;
}

// A graph laid out in float32 and prepared beside the session's, to be timed against it.
struct PreparedAlternative {
  runtime::Graph graph;
  std::unique_ptr<runtime::PreparedModel> prepared;
  std::optional<rewriter::LayoutDpReport> dp;
};

StatusOr<PreparedAlternative> PrepareFloat32(const runtime::Backend& backend, runtime::Graph graph,
                                             const SessionOptions& options,
                                             const runtime::CostModel* cost_model,
                                             int num_threads) {
  SessionOptions f32 = options;
  f32.precision = "f32";
  auto placement = PlaceValues(&graph, f32, cost_model);
  if (!placement.ok()) return placement.status().WithContext("float32 layouts for comparison");
  runtime::PrepareOptions prepare = SessionPrepare(options, num_threads);
  prepare.layouts = std::move(placement->layouts);
  prepare.generator = options.kernel_generator;
  auto prepared = backend.Prepare(graph, prepare);
  if (!prepared.ok()) return prepared.status().WithContext(backend.Name() + " backend (float32)");
  return PreparedAlternative{std::move(graph), std::move(prepared).value(), placement->dp};
}

// Part of every decision's key: bump it when a change to a backend's kernels or to the timing
// can turn a choice the other way, so that no earlier version's choice is read.
constexpr int kDecisionRevision = 2;  // 2: the RNN, resize, global pooling and cut-tap kernels

// Timed choices remembered across loads (SessionOptions::decisions): one small file per choice
// and prepared graph, named by a hash of `what` (the graph as prepared: nodes, order, shapes,
// layouts, storage types), the kind of choice, the thread count, the backend and its kernels
// (fusion) and the machine. Empty when nothing is remembered.
std::string DecisionPath(const SessionOptions& options, const std::string& kind,
                         const std::string& what, int num_threads) {
  if (options.decisions == "none") return "";
  std::string dir = options.decisions;
  if (dir.empty()) {
    const std::string cache = base::UserCacheDir();
    if (cache.empty()) return "";
    dir = (std::filesystem::path(cache) / "decisions").string();
  }
  std::string key = kind + " " + std::to_string(kDecisionRevision) + "\n" + what + "\nthreads " +
                    std::to_string(num_threads) + "\n" + options.backend + " fusion " +
                    options.fusion + "\n" +
#ifdef VERISUB_HAVE_DNNL
                    runtime::ThisMachine(num_threads).FileName();
#else
                    "no-dnnl";
#endif
  char name[40];
  std::snprintf(name, sizeof name, "%016llx.",
                static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  return (std::filesystem::path(dir) / (name + kind)).string();
}

// Whether some value is stored in a reduced type (PrepareOptions::storage_types: empty or all zero
// is float32 everywhere).
bool ReducedStorage(const std::vector<int32_t>& storage) {
  return std::any_of(storage.begin(), storage.end(), [](int32_t t) { return t != 0; });
}

// The graph as prepared, for DecisionPath: its canonical text (layouts included) and the
// storage type of every value.
std::string PreparedText(const runtime::Graph& g, const std::vector<int32_t>& storage) {
  std::string what = runtime::PrintGraphText(g) + "storage";
  // Every value in its own type is written one way, whether the list is empty or all zero.
  if (ReducedStorage(storage))
    for (int32_t t : storage) what += " " + std::to_string(t);
  return what;
}

// A decision file: "verisub-decision KIND 1", then the choice's lines. A missing or damaged file
// is no decision (the choice is timed again, and the file rewritten).
std::optional<std::vector<std::string>> ReadDecision(const std::string& path,
                                                     const std::string& kind) {
  if (path.empty()) return std::nullopt;
  auto text = base::ReadFile(path, 1 << 20);
  if (!text.ok()) return std::nullopt;
  std::istringstream in(*text);
  std::string line;
  if (!std::getline(in, line) || line != "verisub-decision " + kind + " 1") return std::nullopt;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  if (lines.empty()) return std::nullopt;
  return lines;
}

// Written atomically (base::WriteFileAtomically); a cache that cannot be written is no error.
void WriteDecision(const std::string& path, const std::string& kind,
                   const std::vector<std::string>& lines) {
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::string text = "verisub-decision " + kind + " 1\n";
  for (const std::string& line : lines) text += line + "\n";
  (void)base::WriteFileAtomically(path, text);
}

// A remembered choice of one of `choices`, or "" (none remembered).
std::string ReadChoice(const std::string& path, const std::string& kind,
                       std::initializer_list<const char*> choices) {
  auto lines = ReadDecision(path, kind);
  if (!lines || lines->size() != 1) return "";
  for (const char* c : choices)
    if ((*lines)[0] == c) return c;
  return "";
}

}  // namespace

std::unique_ptr<runtime::Backend> MakeBackend(const std::string& name) {
#ifdef VERISUB_HAVE_DNNL
  if (name == "onednn") return runtime::MakeDnnlBackend();
#endif
#ifdef VERISUB_HAVE_CUDA_COSTS
  if (name == "cuda") return runtime::MakeCudaBackend();
#endif
  if (name == "reference") return runtime::MakeReferenceBackend();
  return nullptr;
}

namespace {

std::string RulesPath(const SessionOptions& o) {
  return o.rules_path.empty() ? rewriter::FindDefaultRules() : o.rules_path;
}

// Whether a session with these options optimizes its model (and so needs the rules).
bool OptimizesModel(const SessionOptions& o) { return o.optimize || o.layout == "joint"; }

rewriter::RuleSetOptions RuleOptions(const SessionOptions& o) {
  rewriter::RuleSetOptions r;
  r.proved_only = !o.allow_unproved_rules;
  return r;
}

}  // namespace

StatusOr<std::unique_ptr<Session>> Session::Create(const std::string& model_path,
                                                   const SessionOptions& options) {
  auto start = std::chrono::steady_clock::now();
  // The rules are read and compiled on a thread of their own while the model imports.
  std::optional<rewriter::RuleSetLoader> rules;
  if (OptimizesModel(options)) rules.emplace(RulesPath(options), RuleOptions(options));
  runtime::ImportOptions import;
  import.input_shapes = options.input_shapes;
  import.float16_as_float32 = true;
  import.require_static_shapes = !options.dynamic_shapes;
  auto graph = runtime::ImportOnnxFile(model_path, import);
  if (!graph.ok()) return graph.status();
  double load = SecondsSince(start);
  std::unique_ptr<Session> s(new Session());
  VERISUB_RETURN_IF_ERROR(s->Init(std::move(graph).value(), options, rules ? &*rules : nullptr));
  s->times_.load_s = load;
  return s;
}

StatusOr<std::unique_ptr<Session>> Session::Create(runtime::Graph graph,
                                                   const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session());
  VERISUB_RETURN_IF_ERROR(s->Init(std::move(graph), options));
  return s;
}

Status Session::Init(runtime::Graph graph, const SessionOptions& requested,
                     rewriter::RuleSetLoader* rules_loader) {
  // "auto": the layout DP's layouts on the oneDNN backend (the reference backend runs plain).
  SessionOptions options = requested;
  if (options.layout == "auto") options.layout = options.backend == "onednn" ? "dp" : "backend";
  if (options.fusion != "none" && options.fusion != "library" && options.fusion != "subop" &&
      options.fusion != "auto")
    return InvalidArgument("fusion '" + options.fusion + "': none, library, subop or auto");
  if (options.fusion == "library" || options.fusion == "none") {
    options.kernel_generator = nullptr;
  } else if (options.backend != "onednn") {
    return InvalidArgument("fusion " + options.fusion +
                           ": generated kernels run on the onednn backend only, not on " +
                           options.backend);
  } else if (!options.kernel_generator) {
#ifdef VERISUB_HAVE_HALIDE
    std::shared_ptr<const fusion::SubopRules> subop_rules;
    if (options.subop_rules != "none") {
      std::string path = options.subop_rules;
      if (path.empty()) path = rewriter::FindShippedPath("data/rules/subop.pb");
      if (!path.empty()) {
        auto rules = rewriter::LoadRules(path);
        if (!rules.ok()) return rules.status().WithContext("sub-operator rules");
        subop_rules = std::make_shared<fusion::SubopRules>(*rules);
      }
    }
    options.kernel_generator =
        std::make_shared<fusion::SubopGenerator>(fusion::KernelCacheOptions{}, subop_rules);
#else
    return FailedPrecondition(
        "fusion " + options.fusion +
        ": this build has no Halide (libhalide14-0-dev was not found when it was configured)");
#endif
  }
  // Values of run-time shapes run node by node (SessionOptions::dynamic_shapes): a GELU written
  // out becomes one node there, as the import maps it onto one operator where shapes are static.
  // So does a matmul by a transposed value (attention's scores), read transposed.
  if (SymbolicInput(graph)) {
    runtime::FuseRunTimeGelus(&graph);
    runtime::FoldRunTimeTransposesIntoMatMuls(&graph);
  }
  // On the GPU the search prices rewrites with GPU timings unless told otherwise.
  if (options.backend == "cuda" && options.cost.cost == "auto") options.cost.cost = "gpu-measured";
  // The cost model: the optimizer's search and the layout DP price with it.
  const runtime::CostModel* cost_model = options.optimize_options.cost_model;
  std::unique_ptr<rewriter::CostSource> cost_source;
  // "joint": the substitution search scores every graph by its layout-DP-optimal cost, then the
  // DP lays out the result (TASO's joint optimization).
  const bool joint = options.layout == "joint";
  const bool optimize_model = OptimizesModel(options);
  if (!cost_model && (optimize_model || options.layout == "dp" || joint)) {
    rewriter::CostOptions cost = options.cost;
    // The session's kernels run with num_threads: the costs are timed with as many.
    cost.threads = base::ThreadsOrOnePerCore(options.num_threads);
    auto made = rewriter::CostSource::Create(cost);
    if (!made.ok()) return made.status();
    cost_source = std::move(made).value();
    cost_model = &cost_source->model();
  }
  // Measurements are kept even when a later step fails; a cache that cannot be written only
  // costs the next session the time to measure again.
  auto save_costs = [&] {
    if (!cost_source) return;
    cost_summary_ = cost_source->Summary();
    if (Status saved = cost_source->Save(); !saved.ok())
      cost_summary_ += "; not saved: " + saved.message();
  };
  runtime::Graph original;  // kept while optimizing: the rewrites are timed against it
  if (optimize_model) {
    original = graph;
    auto start = std::chrono::steady_clock::now();
    auto loaded = rules_loader ? rules_loader->Get()
                               : rewriter::LoadRuleSet(RulesPath(options), RuleOptions(options));
    if (!loaded.ok()) return loaded.status();
    const std::shared_ptr<const rewriter::RuleSet>& rule_set = loaded->set;
    OptimizeOptions optimize = options.optimize_options;
    optimize.cost_model = cost_model;
    Status st;
    if (joint) {
      LayoutCostsFor layout_costs(cost_model);
      st = OptimizeJointly(graph, *rule_set, optimize, layout_costs.costs(), &graph_, &report_,
                           &joint_.emplace());
    } else {
      st = Optimize(std::move(graph), *rule_set, optimize, &graph_, &report_);
    }
    if (!st.ok()) {
      save_costs();
      return st;
    }
    optimized_ = true;
    times_.optimize_s = SecondsSince(start);
    // No rule rewrote the model: it runs as imported, exactly as without `optimize`. The passes
    // around the search (epilogues fused into convolutions, folding) change only its form, which
    // the backend fuses itself, and the layout DP prices that form differently; the zoo's
    // --optimize column came out 0.76-0.94x of without on some models no rule fits (within noise
    // when rerun alone), a difference with nothing to gain. Untimed sessions run the optimizer's
    // graph, as they do a rewritten one.
    if (options.time_rewrites && report_.search.rewrite_steps == 0) graph_ = std::move(original);
  } else {
    graph_ = std::move(graph);
  }
  auto start = std::chrono::steady_clock::now();
  backend_ = MakeBackend(options.backend);
  if (!backend_ && options.backend == "onednn") backend_ = MakeBackend("reference");
  if (!backend_ && options.backend == "cuda")
    return FailedPrecondition(
        "backend cuda: this build has no CUDA backend (CUDA 13 with cuDNN "
        "was not found when it was configured)");
  if (!backend_) return InvalidArgument("unknown backend '" + options.backend + "'");
  runtime::PrepareOptions prepare = SessionPrepare(options, options.num_threads);
  prepare.generator = options.kernel_generator;
  auto placement = PlaceValues(&graph_, options, cost_model, backend_.get(), prepare.num_threads);
  if (!placement.ok() && requested.layout == "auto" && options.precision == "f32") {
    // Not asked for by name: a graph the DP cannot lay out runs in oneDNN's own layouts.
    layout_note_ = "the layout DP failed (" + placement.status().message() +
                   "); the backend's own layouts instead";
    for (int v = 0; v < graph_.num_values(); ++v)
      graph_.mutable_value(v).layout = specs::Layout::kPlain;
    options.layout = "backend";
    placement = PlaceValues(&graph_, options, cost_model);
  }
  if (!placement.ok()) {
    save_costs();
    return placement.status();
  }
  prepare.layouts = std::move(placement->layouts);
  prepare.storage_types = std::move(placement->storage_types);
  layout_report_ = placement->dp;
  precision_report_ = placement->precision;
  auto prepared = backend_->Prepare(graph_, prepare);
  if (!prepared.ok()) {
    save_costs();
    return prepared.status().WithContext(backend_->Name() + " backend");
  }
  prepared_ = std::move(prepared).value();
  storage_types_ = prepare.storage_types;
  if (precision_report_ && precision_report_->reduced_values > 0) {
    Status st = CheckPrecisionOnBackend(options, cost_model, prepare.num_threads);
    if (!st.ok()) {
      save_costs();
      return st;
    }
  }
  // Only the backend check reads the budget's reference outputs: not kept for the session's life.
  if (precision_report_) precision_report_->reference_outputs.reset();
  if (precision_report_ && precision_report_->reduced_values > 0 &&
      !precision_report_->kept_float32_by_check) {
    // The DP prices kernels one by one; the whole model decides. The float32 assignment is
    // prepared and both are timed, alternating; bf16 is kept only when it runs faster.
    Status st = KeepFasterPrecision(options, cost_model, prepare.num_threads);
    if (!st.ok()) {
      save_costs();
      return st;
    }
  }
  // The DP's layouts against the backend's own, in float32; where bf16 storage won its timing
  // above, the bf16 model against the backend's own float32 one: the DP lays out only what it
  // prices, and a model of operators it keeps plain (a dilated or 3-D convolution is opaque to
  // it) ran 3-4x slower in its layouts, bf16 or not, than in oneDNN's own (DeepLabV3, R(2+1)D).
  if (requested.layout == "auto" && options.layout == "dp") {
    const bool reduced = ReducedStorage(storage_types_);
    Status st = KeepFasterLayouts(&options, cost_model, prepare.num_threads);
    if (!st.ok()) {
      save_costs();
      return st;
    }
    if (reduced && !ReducedStorage(storage_types_) && precision_report_)
      precision_report_->kept_float32_by_timing = true;
  }
  const bool float32 = options.precision == "f32" ||
                       (precision_report_ && (precision_report_->kept_float32_by_timing ||
                                              precision_report_->kept_float32_by_check));
  if (options.time_rewrites && optimized_ && report_.search.rewrite_steps > 0 && float32) {
    const bool both_layouts = requested.layout == "auto" && options.precision == "f32";
    Status st = KeepFasterGraph(std::move(original), options, both_layouts, cost_model,
                                prepare.num_threads);
    if (!st.ok()) {
      save_costs();
      return st;
    }
  }
  if (options.fusion == "auto") {
    Status st = KeepFasterFusion(options, prepare.num_threads);
    if (!st.ok()) {
      save_costs();
      return st;
    }
  }
  save_costs();
  backend_name_ = backend_->Name();
  times_.prepare_s = SecondsSince(start);
  return Status::Ok();
}

namespace {

// Plans only the clusters in `kept` (by their nodes) of those `all` plans; the others run on the
// library's kernels (fusion "auto" keeps the kernels that timed faster).
class SelectedClusters : public runtime::KernelGenerator {
 public:
  SelectedClusters(std::shared_ptr<runtime::KernelGenerator> all, std::set<std::vector<int>> kept)
      : all_(std::move(all)), kept_(std::move(kept)) {}
  std::vector<runtime::KernelCluster> Plan(const runtime::Graph& g,
                                           const std::vector<char>& taken) const override {
    std::vector<runtime::KernelCluster> out;
    for (runtime::KernelCluster& c : all_->Plan(g, taken))
      if (kept_.count(c.nodes)) out.push_back(std::move(c));
    return out;
  }
  StatusOr<std::shared_ptr<const runtime::GeneratedKernel>> Kernel(
      const runtime::Graph& g, const runtime::KernelCluster& cluster,
      const std::vector<specs::Layout>& input_layouts, specs::Layout output_layout) override {
    return all_->Kernel(g, cluster, input_layouts, output_layout);
  }
  int compiled() const override { return all_->compiled(); }
  int cache_hits() const override { return all_->cache_hits(); }
  int rule_rewrites() const override { return all_->rule_rewrites(); }

 private:
  std::shared_ptr<runtime::KernelGenerator> all_;
  std::set<std::vector<int>> kept_;
};

// Seconds of the steps of `profile` that compute only nodes among `nodes` (sorted): the kernels
// for those nodes and the reorders feeding them.
double SecondsOn(const std::vector<runtime::StepProfile>& profile, const std::vector<int>& nodes) {
  double seconds = 0;
  for (const runtime::StepProfile& p : profile)
    if (!p.members.empty() && std::all_of(p.members.begin(), p.members.end(), [&](int m) {
          return std::binary_search(nodes.begin(), nodes.end(), m);
        }))
      seconds += p.seconds;
  return seconds;
}

double TotalMs(const std::vector<runtime::StepProfile>& profile) {
  double seconds = 0;
  for (const runtime::StepProfile& p : profile) seconds += p.seconds;
  return seconds * 1e3;
}

// Step profiles of the generated and library preparations: runs each.
constexpr int kFusionProfileRuns = 5;

#ifdef VERISUB_HAVE_HALIDE
// The remembered choice of fusion "auto" for one prepared graph: the library's kernels, every
// generated one, or those of the clusters listed (graph nodes).
struct FusionDecision {
  bool library = false, all = false;
  std::set<std::vector<int>> kept;
};

// A fusion decision's lines: "library", "all", or one line of comma-separated nodes per kept
// cluster. Anything else is no decision (the choice is timed).
std::optional<FusionDecision> ParseFusionDecision(const std::vector<std::string>& lines) {
  FusionDecision d;
  for (const std::string& line : lines) {
    if (line == "library") {
      d.library = true;
    } else if (line == "all") {
      d.all = true;
    } else {
      std::vector<int> nodes;
      std::stringstream s(line);
      std::string item;
      while (std::getline(s, item, ',')) {
        if (item.empty() || item.size() > 9 ||
            item.find_first_not_of("0123456789") != std::string::npos)
          return std::nullopt;
        nodes.push_back(std::stoi(item));
      }
      if (nodes.empty()) return std::nullopt;
      d.kept.insert(std::move(nodes));
    }
  }
  if (d.library + d.all + !d.kept.empty() != 1) return std::nullopt;
  return d;
}

std::vector<std::string> FusionDecisionLines(const FusionDecision& d) {
  std::vector<std::string> lines;
  if (d.library) lines.push_back("library");
  if (d.all) lines.push_back("all");
  for (const std::vector<int>& c : d.kept) {
    std::string line;
    for (size_t i = 0; i < c.size(); ++i) line += (i ? "," : "") + std::to_string(c[i]);
    lines.push_back(std::move(line));
  }
  return lines;
}
#endif

}  // namespace

Status Session::KeepFasterFusion(const SessionOptions& options, int num_threads) {
  if (prepared_->stats().generated_kernels == 0) return Status::Ok();  // nothing to compare
  std::optional<std::vector<runtime::HostTensor>> inputs = ZeroInputs(graph_);
  if (!inputs) return Status::Ok();
  // The same graph, layouts and storage types, on the library's kernels.
  runtime::PrepareOptions library = SessionPrepare(options, num_threads);
  if (options.layout != "backend") library.layouts = runtime::ValueLayouts(graph_);
  library.storage_types = storage_types_;
#ifdef VERISUB_HAVE_HALIDE
  // A remembered choice prepares only the model it names.
  const std::string decision_path =
      DecisionPath(options, "fusion",
                   PreparedText(graph_, storage_types_) + "\ncodegen " +
                       std::to_string(fusion::kCodegenRevision),
                   num_threads);
  std::optional<FusionDecision> d;
  if (auto lines = ReadDecision(decision_path, "fusion")) d = ParseFusionDecision(*lines);
  if (d) {
    std::unique_ptr<runtime::PreparedModel> chosen;
    if (d->all) {
      chosen = std::move(prepared_);
    } else {
      runtime::PrepareOptions some = library;
      if (!d->library)
        some.generator = std::make_shared<SelectedClusters>(options.kernel_generator, d->kept);
      auto made = backend_->Prepare(graph_, some);
      if (made.ok()) chosen = std::move(made).value();
    }
    if (chosen) {
      FusionTiming& t = fusion_timing_.emplace();
      t.from_cache = true;
      t.kept_library = d->library;
      prepared_ = std::move(chosen);
      t.generated_kernels = prepared_->stats().generated_kernels;
      t.kept_clusters = t.kept_library ? 0 : t.generated_kernels;
      return Status::Ok();
    }
  }
#endif
  auto other = backend_->Prepare(graph_, library);
  if (!other.ok()) return Status::Ok();  // generated kernels only: keep them
  // Each generated kernel against the library's steps for its nodes, both timed in their place
  // in whole runs (the profiles time the buffers of a run).
  for (runtime::PreparedModel* m : {prepared_.get(), other->get()}) {
    Status ran = m->Run(*inputs).status();
    if (!ran.ok()) return ran.WithContext("timing the generated kernels");
  }
  auto generated = prepared_->Profile(kFusionProfileRuns, /*alone=*/false);
  if (!generated.ok()) return generated.status().WithContext("profiling the generated kernels");
  auto own = (*other)->Profile(kFusionProfileRuns, /*alone=*/false);
  if (!own.ok()) return own.status().WithContext("profiling the library's kernels");
  FusionTiming& t = fusion_timing_.emplace();
  t.generated_ms = TotalMs(*generated);
  t.library_ms = TotalMs(*own);
  std::set<std::vector<int>> kept;
  for (const runtime::StepProfile& p : *generated) {
    if (p.kind.rfind("gen:", 0) != 0) continue;
    std::vector<int> nodes = p.members;
    std::sort(nodes.begin(), nodes.end());
    ++t.clusters;
    if (ClearlyFaster(SecondsOn(*generated, nodes), SecondsOn(*own, nodes))) kept.insert(nodes);
  }
  t.kept_clusters = static_cast<int>(kept.size());
  // A backend without step profiles: the whole model decides alone.
  const bool all = generated->empty() || t.kept_clusters == t.clusters;
  std::unique_ptr<runtime::PreparedModel> selected;
  if (all) {
    selected = std::move(prepared_);
  } else if (!kept.empty()) {
    runtime::PrepareOptions some = library;
    some.generator = std::make_shared<SelectedClusters>(options.kernel_generator, kept);
    auto made = backend_->Prepare(graph_, some);
    if (made.ok()) selected = std::move(made).value();
  }
  if (selected) {
    auto times = TimePreparedSideBySide(*selected, **other, *inputs);
    if (!times.ok()) {
      if (all) prepared_ = std::move(selected);
      return times.status().WithContext("timing the generated kernels");
    }
    t.selected_ms = times->first;
    t.selected_library_ms = times->second;
    if (ClearlyFaster(t.selected_library_ms, t.selected_ms)) selected.reset();
  }
  t.kept_library = !selected;
  prepared_ = selected ? std::move(selected) : std::move(other).value();
  t.generated_kernels = prepared_->stats().generated_kernels;
#ifdef VERISUB_HAVE_HALIDE
  FusionDecision decided;
  decided.library = t.kept_library;
  decided.all = !decided.library && all;
  if (!decided.library && !decided.all) decided.kept = kept;
  WriteDecision(decision_path, "fusion", FusionDecisionLines(decided));
#endif
  return Status::Ok();
}

void Session::RunFloat32(runtime::Graph graph, std::unique_ptr<runtime::PreparedModel> prepared) {
  graph_ = std::move(graph);
  prepared_ = std::move(prepared);
  storage_types_.clear();
}

namespace {

// The graph prepared in float32 in the backend's own layouts (layout policy "backend").
StatusOr<PreparedAlternative> PrepareInBackendLayouts(const runtime::Backend& backend,
                                                      runtime::Graph graph,
                                                      const SessionOptions& options,
                                                      const runtime::CostModel* cost_model,
                                                      int num_threads) {
  SessionOptions own = options;
  own.layout = "backend";
  for (int v = 0; v < graph.num_values(); ++v)
    graph.mutable_value(v).layout = specs::Layout::kPlain;
  return PrepareFloat32(backend, std::move(graph), own, cost_model, num_threads);
}

// The layout policy of a graph the DP laid out: the backend's own layouts when they run it
// clearly faster. Remembered per prepared graph, else timed side by side and remembered; a plain
// session and an optimizing session that keeps the original read one file, so both run one
// prepared graph.
struct LayoutPolicy {
  bool decided = false;  // false: the backend cannot lay the graph out alone (the DP's stay)
  bool from_cache = false;
  double dp_ms = 0;
  double backend_ms = 0;
  std::optional<PreparedAlternative> backend;  // set when the backend's own layouts run
};

StatusOr<LayoutPolicy> ChooseLayoutPolicy(const runtime::Backend& backend,
                                          const runtime::Graph& laid,
                                          const std::vector<int32_t>& storage,
                                          runtime::PreparedModel& laid_prepared,
                                          const std::vector<runtime::HostTensor>& inputs,
                                          const SessionOptions& options,
                                          const runtime::CostModel* cost_model, int num_threads) {
  LayoutPolicy policy;
  const std::string path =
      DecisionPath(options, "layouts", PreparedText(laid, storage), num_threads);
  const std::string remembered = ReadChoice(path, "layouts", {"dp", "backend"});
  if (remembered == "dp") {
    policy.decided = policy.from_cache = true;
    return policy;
  }
  auto own = PrepareInBackendLayouts(backend, laid, options, cost_model, num_threads);
  if (!own.ok()) return policy;
  policy.decided = true;
  bool backend_faster = remembered == "backend";
  if (backend_faster) {
    policy.from_cache = true;
  } else {
    VERISUB_ASSIGN_OR_RETURN(auto times,
                             TimePreparedSideBySide(laid_prepared, *own->prepared, inputs));
    policy.dp_ms = times.first;
    policy.backend_ms = times.second;
    backend_faster = ClearlyFaster(policy.backend_ms, policy.dp_ms);
    WriteDecision(path, "layouts", {backend_faster ? "backend" : "dp"});
  }
  if (backend_faster) policy.backend = std::move(own).value();
  return policy;
}

}  // namespace

Status Session::KeepFasterLayouts(SessionOptions* options, const runtime::CostModel* cost_model,
                                  int num_threads) {
  std::optional<std::vector<runtime::HostTensor>> inputs = ZeroInputs(graph_);
  if (!inputs) return Status::Ok();  // nothing to time with: keep the DP's layouts
  auto policy = ChooseLayoutPolicy(*backend_, graph_, storage_types_, *prepared_, *inputs, *options,
                                   cost_model, num_threads);
  if (!policy.ok()) return policy.status().WithContext("timing the layout policies");
  if (!policy->decided) return Status::Ok();
  LayoutTiming& t = layout_timing_.emplace();
  t.dp_ms = policy->dp_ms;
  t.backend_ms = policy->backend_ms;
  t.from_cache = policy->from_cache;
  if (policy->backend) {
    t.kept_backend = true;
    RunFloat32(std::move(policy->backend->graph), std::move(policy->backend->prepared));
    options->layout = "backend";
  }
  return Status::Ok();
}

Status Session::KeepFasterGraph(runtime::Graph original, const SessionOptions& options,
                                bool both_layouts, const runtime::CostModel* cost_model,
                                int num_threads) {
  std::optional<std::vector<runtime::HostTensor>> inputs = ZeroInputs(graph_);
  if (!inputs) return Status::Ok();  // nothing to time with: keep the search's choice
  // Keyed by both graphs: the rewritten one as prepared and the original.
  const std::string decision_path =
      DecisionPath(options, "rewrites",
                   PreparedText(graph_, storage_types_) + "\noriginal\n" +
                       runtime::PrintGraphText(original) + (both_layouts ? "both layouts" : ""),
                   num_threads);
  const std::string remembered =
      ReadChoice(decision_path, "rewrites", {"rewritten", "original dp", "original backend"});
  if (remembered == "rewritten") {
    rewrite_timing_.emplace().from_cache = true;
    return Status::Ok();
  }
  // The original as a session without `optimize` would run it: in the layout DP's layouts, or in
  // the faster of those and the backend's own when both are timed (layout "auto").
  SessionOptions dp = options;
  if (both_layouts) dp.layout = "dp";
  StatusOr<PreparedAlternative> other = InvalidArgument("not prepared");
  bool in_backend_layouts = false;
  if (remembered == "original backend") {
    other =
        PrepareInBackendLayouts(*backend_, std::move(original), options, cost_model, num_threads);
    in_backend_layouts = true;
  } else {
    other = PrepareFloat32(*backend_, std::move(original), dp, cost_model, num_threads);
  }
  if (!other.ok()) return Status::Ok();  // the original cannot be prepared: keep the rewrite
  RewriteTiming& t = rewrite_timing_.emplace();
  if (!remembered.empty()) {
    t.from_cache = true;
  } else {
    if (both_layouts) {
      // The original's layout policy is the one a session without `optimize` chooses, through
      // the same remembered choice: where the rewrite loses, both run one prepared graph.
      auto policy = ChooseLayoutPolicy(*backend_, other->graph, {}, *other->prepared, *inputs,
                                       options, cost_model, num_threads);
      if (!policy.ok()) {
        rewrite_timing_.reset();
        return policy.status().WithContext("timing the original's layouts");
      }
      if (policy->backend) {
        other = std::move(*policy->backend);
        in_backend_layouts = true;
      }
    }
    auto times = TimePreparedSideBySide(*prepared_, *other->prepared, *inputs);
    if (!times.ok()) {
      rewrite_timing_.reset();
      return times.status().WithContext("timing the rewritten and original graphs");
    }
    t.optimized_ms = times->first;
    t.original_ms = times->second;
    // A tie keeps the model as imported: --optimize is never slower than without.
    const bool original_faster = !ClearlyFaster(t.optimized_ms, t.original_ms);
    WriteDecision(decision_path, "rewrites",
                  {!original_faster     ? "rewritten"
                   : in_backend_layouts ? "original backend"
                                        : "original dp"});
  }
  if (!remembered.empty() || !ClearlyFaster(t.optimized_ms, t.original_ms)) {
    t.kept_original = true;
    RunFloat32(std::move(other->graph), std::move(other->prepared));
    layout_report_ = other->dp;
  }
  return Status::Ok();
}

namespace {

// The error of `m`'s outputs against the reference executor's on `g`, on the inputs the
// precision budget is checked with; `reference` holds the reference's outputs on them when the
// budget's emulation computed them already.
StatusOr<double> BackendOutputError(const runtime::Graph& g, runtime::PreparedModel& m,
                                    uint64_t seed,
                                    const std::vector<runtime::HostTensor>* reference) {
  std::mt19937_64 rng(seed);
  VERISUB_ASSIGN_OR_RETURN(std::vector<runtime::HostTensor> inputs,
                           rewriter::RandomInputs(g, &rng));
  std::vector<runtime::HostTensor> computed;
  if (!reference) {
    auto ran = runtime::Execute(g, inputs);
    if (!ran.ok()) return ran.status().WithContext("precision check: reference run");
    computed = std::move(ran).value();
    reference = &computed;
  }
  auto out = m.Run(inputs);
  if (!out.ok()) return out.status().WithContext("precision check: backend run");
  return rewriter::RelativeOutputError(*out, *reference);
}

}  // namespace

Status Session::CheckPrecisionOnBackend(const SessionOptions& options,
                                        const runtime::CostModel* cost_model, int num_threads) {
  if (precision_report_->measured_on_backend) {
    // The budget was checked on this backend's outputs of this assignment already.
    precision_report_->backend_error = precision_report_->error;
    return Status::Ok();
  }
  const uint64_t seed = rewriter::PrecisionBudget().seed;
  // The budget's reference outputs, kept across the tightened solve below (whose report would
  // replace them): the graph is the same.
  const std::shared_ptr<const std::vector<runtime::HostTensor>> reference =
      precision_report_->reference_outputs;
  auto error = BackendOutputError(graph_, *prepared_, seed, reference.get());
  if (!error.ok()) return error.status();
  if (*error <= options.precision_budget) {
    precision_report_->backend_error = *error;
    return Status::Ok();
  }
  // The emulation underestimated: solve again with the budget shrunk by its underestimate.
  const double predicted = std::max(precision_report_->error, 1e-12);
  SessionOptions tighter = options;
  tighter.precision_budget = options.precision_budget * std::min(1.0, predicted / *error) * 0.9;
  runtime::Graph graph = graph_;
  auto placement = PlaceValues(&graph, tighter, cost_model);
  if (placement.ok() && placement->precision && placement->precision->reduced_values > 0) {
    runtime::PrepareOptions prepare = SessionPrepare(options, num_threads);
    prepare.layouts = std::move(placement->layouts);
    prepare.storage_types = std::move(placement->storage_types);
    auto again = backend_->Prepare(graph, prepare);
    if (again.ok()) {
      auto second = BackendOutputError(graph, **again, seed, reference.get());
      if (second.ok() && *second <= options.precision_budget) {
        graph_ = std::move(graph);
        prepared_ = std::move(again).value();
        storage_types_ = prepare.storage_types;
        layout_report_ = placement->dp;
        precision_report_ = placement->precision;
        precision_report_->backend_error = *second;
        precision_report_->tightened = true;
        return Status::Ok();
      }
    }
  }
  // Float32 throughout: exact to the reference up to float32 rounding.
  auto f32 = PrepareFloat32(*backend_, graph_, options, cost_model, num_threads);
  if (!f32.ok()) return f32.status();
  RunFloat32(std::move(f32->graph), std::move(f32->prepared));
  layout_report_ = f32->dp;
  precision_report_->backend_error = *error;
  precision_report_->kept_float32_by_check = true;
  return Status::Ok();
}

Status Session::KeepFasterPrecision(const SessionOptions& options,
                                    const runtime::CostModel* cost_model, int num_threads) {
  std::optional<std::vector<runtime::HostTensor>> inputs = ZeroInputs(graph_);
  if (!inputs) return Status::Ok();  // nothing to time with: keep the DP's choice
  const std::string decision_path =
      DecisionPath(options, "precision", PreparedText(graph_, storage_types_), num_threads);
  const std::string remembered = ReadChoice(decision_path, "precision", {"reduced", "float32"});
  rewriter::PrecisionReport& p = *precision_report_;
  p.timing_from_cache = !remembered.empty();
  if (remembered == "reduced") return Status::Ok();
  auto other = PrepareFloat32(*backend_, graph_, options, cost_model, num_threads);
  if (!other.ok()) return other.status();
  if (remembered.empty()) {
    auto times = TimePreparedSideBySide(*prepared_, *other->prepared, *inputs);
    if (!times.ok()) return times.status().WithContext("timing the precisions");
    p.measured_bf16_ms = times->first;
    p.measured_f32_ms = times->second;
    WriteDecision(decision_path, "precision",
                  {ClearlyFaster(p.measured_bf16_ms, p.measured_f32_ms) ? "reduced" : "float32"});
  }
  if (remembered == "float32" || !ClearlyFaster(p.measured_bf16_ms, p.measured_f32_ms)) {
    p.kept_float32_by_timing = true;
    RunFloat32(std::move(other->graph), std::move(other->prepared));
    layout_report_ = other->dp;
  }
  return Status::Ok();
}

StatusOr<std::vector<runtime::HostTensor>> Session::Run(
    const std::vector<runtime::HostTensor>& inputs) {
  return prepared_->Run(inputs);
}

StatusOr<SideBySideTiming> TimeSideBySide(const std::function<Status()>& a,
                                          const std::function<Status()>& b,
                                          const SideBySideOptions& options) {
  std::vector<double> ms[2];
  double spent_ms = 0;
  int r = 0;
  auto round = [&]() -> Status {
    double round_ms[2] = {0, 0};
    for (int turn = 0; turn < 2; ++turn) {
      const int which = r % 2 == 0 ? turn : 1 - turn;
      // A run longer than warm_below_ms streams more than the caches hold: one run is warm.
      const int reps = r > 0 && ms[which].back() > options.warm_below_ms ? 1 : 2;
      for (int rep = 0; rep < reps; ++rep) {
        auto start = std::chrono::steady_clock::now();
        if (Status st = which == 0 ? a() : b(); !st.ok()) return st;
        if (rep == reps - 1) round_ms[which] = SecondsSince(start) * 1e3;
      }
    }
    for (int w = 0; w < 2; ++w) {
      ms[w].push_back(round_ms[w]);
      spent_ms += round_ms[w];
    }
    ++r;
    return Status::Ok();
  };
  while (r < options.max_rounds && (r < options.min_rounds || spent_ms < options.budget_ms))
    VERISUB_RETURN_IF_ERROR(round());
  auto close_call = [&] {
    const double ratio = SummarizeSideBySide(ms[0], ms[1]).ratio_median;
    return ratio < 1 + options.settle_band && ratio > 1 / (1 + options.settle_band);
  };
  if (options.settle_band > 0)
    while (spent_ms < options.settle_budget_ms && close_call()) {
      const int step = r % 2 ? 1 : 2;  // complete the pair, or one more pair
      if (r + step > options.max_rounds) break;
      for (int k = 0; k < step; ++k) VERISUB_RETURN_IF_ERROR(round());
    }
  return SummarizeSideBySide(ms[0], ms[1]);
}

SideBySideTiming SummarizeSideBySide(const std::vector<double>& a_ms,
                                     const std::vector<double>& b_ms) {
  SideBySideTiming t;
  t.rounds = static_cast<int>(std::min(a_ms.size(), b_ms.size()));
  if (t.rounds == 0) return t;
  std::vector<double> ratios;
  auto ratio = [&](int r) { return b_ms[r] / std::max(a_ms[r], 1e-9); };
  for (int r = 0; r + 1 < t.rounds; r += 2) ratios.push_back(std::sqrt(ratio(r) * ratio(r + 1)));
  if (ratios.empty()) ratios.push_back(ratio(0));
  t.a_ms = Median(std::vector<double>(a_ms.begin(), a_ms.begin() + t.rounds));
  t.b_ms = Median(std::vector<double>(b_ms.begin(), b_ms.begin() + t.rounds));
  std::sort(ratios.begin(), ratios.end());
  t.ratio_median = Median(ratios);
  t.ratio_q1 = ratios[(ratios.size() - 1) / 4];
  t.ratio_q3 = ratios[ratios.size() - 1 - (ratios.size() - 1) / 4];
  return t;
}

}  // namespace verisub
