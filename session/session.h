// verisub::Session, the product API ONNX Runtime users know: load a model, optionally optimize
// it with the rules file, prepare it on a backend (oneDNN on the CPU when built, else the
// reference kernels), then run it many times. Never throws across this boundary.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "rewriter/cost_source.h"
#include "rewriter/joint.h"
#include "rewriter/layout_dp.h"
#include "rewriter/optimize.h"
#include "rewriter/precision_costs.h"
#include "runtime/backend.h"
#include "runtime/graph.h"
#include "runtime/host_tensor.h"

namespace verisub {
namespace rewriter {
class RuleSetLoader;
}  // namespace rewriter

struct SessionOptions {
  bool optimize = false;
  // Rules for the optimizer; empty: the shipped database (rewriter::FindDefaultRules).
  std::string rules_path;
  bool allow_unproved_rules = false;
  OptimizeOptions optimize_options;
  // Where the optimizer's costs come from when optimize_options.cost_model is null: by default
  // kernels timed on this CPU with oneDNN at the session's thread count (one per core when
  // num_threads is 0), cached in cost tables (rewriter/cost_source.h).
  rewriter::CostOptions cost;
  // Kernel threads; 0: the backend's default (all cores).
  int num_threads = 0;
  // "onednn" (falls back to "reference" when oneDNN is not built in), "cuda" (the GPU, when
  // built with CUDA; its costs default to gpu-measured) or "reference".
  std::string backend = "onednn";
  // How values are laid out: "backend" (the backend's own policy: oneDNN picks blocked formats
  // for convolutions and keeps them through layout-agnostic kernels), "dp" (the layout dynamic
  // program of rewriter/layout_assign.h, on measured layout costs with the measured cost model,
  // else analytic), "joint" (optimizes the model, the substitution search scoring every graph by
  // its DP-optimal layout cost, then the DP; implies `optimize`), "plain", or "auto" (the
  // default: "dp" on the oneDNN backend, and the backend's own policy where the DP cannot lay
  // the graph out, said in layout_note(); "backend" on the reference backend).
  std::string layout = "auto";
  // Element precision as part of the layout (with layout "dp" or "joint"): "f32" (the model's),
  // or "bf16": values may be stored in bfloat16 where the layout DP finds it cheaper (bfloat16
  // kernels timed on this CPU with the measured costs; the synthetic table of
  // rewriter/precision_costs.h with analytic ones), as long as the outputs stay within
  // `precision_budget` of float32 (relative error ||bf16 - f32|| / ||f32|| of every output,
  // checked on the backend's own outputs of each assignment tried against its float32 ones).
  // Needs a CPU with native bfloat16 kernels (avx512_core_bf16).
  std::string precision = "f32";
  double precision_budget = 1e-2;
  // With `optimize`: when the search rewrote the model, the original is prepared too and both
  // are timed side by side; the faster runs (rewrite_timing()); when no rule rewrote it, the
  // model runs as imported. Off: the optimizer's graph runs whatever the timing (deterministic,
  // for tests of the search itself).
  bool time_rewrites = true;
  // Kernels for the memory-bound operators outside convolutions and matmuls: "none" (every node
  // its own kernel, nothing fused, not even a convolution's bias and activation: for measuring
  // what fusion buys), "library" (the backend's own, one per node or library pattern), "subop"
  // (chains of them lowered to
  // sub-operators and generated as one kernel each with Halide, fusion/; compiled kernels are
  // cached on disk, so a model's second load compiles nothing), or "auto" (both prepared and
  // timed side by side at prepare; the generated kernels run only when faster by more than
  // kTimedChoiceMargin). "subop" and "auto" need a build with Halide, on the oneDNN backend.
  std::string fusion = "library";
  // The generator of "subop" and "auto"; null: one made by the session, caching kernels in
  // fusion::DefaultKernelDir() and rewriting each lowered kernel with `subop_rules`.
  std::shared_ptr<runtime::KernelGenerator> kernel_generator;
  // The rules at the sub-operator level the session's generator applies (fusion/subop_rules.h):
  // a rules file, "" for the shipped data/rules/subop.pb (none when it is not found), or "none".
  std::string subop_rules;
  // Where the choices timed at prepare (layout policy, rewritten or original graph, precision,
  // fusion "auto") are remembered, one small file per choice and prepared graph, keyed by the
  // graph as prepared (nodes, order, shapes, layouts, storage types), the thread count, the
  // backend and the machine: a second load of a model decides without timing, and the same way
  // (sessions of one model with and without `optimize`, when no rule rewrote it, run one
  // prepared graph). Empty: base::UserCacheDir()/decisions; "none": never remembered (every
  // choice timed at every load). Delete the folder to time the choices again.
  std::string decisions;
  // Shapes for graph inputs, replacing the model's (e.g. a symbolic batch size).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Symbolic input dimensions that input_shapes does not fix stay symbolic: the model is prepared
  // once and runs at any shape its inputs accept, as ONNX Runtime runs a dynamic-axes export (a
  // decoder's growing past, a batch or a sequence length of every run's choosing). Values whose
  // shapes follow from the inputs' are known at run time only: matmuls and convolutions with
  // constant weights run on oneDNN primitives made per shape (their weights converted once), the
  // rest on the reference kernels. Off: a symbolic dimension input_shapes does not fix is an error
  // (the faster kernels of a static shape; the Python module prepares those per shape seen often).
  bool dynamic_shapes = false;
};

// Choices timed at prepare (layouts, rewrites, precision) replace the first choice only when the
// alternative runs faster by more than this fraction, the noise of the timing: a tie keeps the
// first choice instead of a coin toss per process.
inline constexpr double kTimedChoiceMargin = 0.01;

// With `optimize`: the optimized and the original graph, each prepared with its own layouts,
// timed side by side at prepare (warm runs alternating); the rewrite runs only when it is faster
// by more than 1%, a tie keeps the model as imported. Measured costs price kernels one by one,
// and only the whole model says whether a rewrite pays.
struct RewriteTiming {
  double optimized_ms = 0;
  double original_ms = 0;
  bool kept_original = false;
  // The choice came from the decision cache (SessionOptions::decisions): nothing was timed, the
  // times are 0.
  bool from_cache = false;
};

// With layout "auto" in float32: the layout DP's layouts and the backend's own policy, each
// prepared, timed side by side at prepare (warm runs alternating); the backend's runs only when
// faster by more than 1%. The DP prices kernels one by one (ResNeXt-50's grouped convolutions
// ran 15% slower in its layouts than in oneDNN's own).
struct LayoutTiming {
  double dp_ms = 0;
  double backend_ms = 0;
  bool kept_backend = false;
  // The choice came from the decision cache (SessionOptions::decisions): nothing was timed, the
  // times are 0.
  bool from_cache = false;
};

// With fusion "auto": the model prepared with generated kernels and with the library's only,
// each generated kernel timed in its place against the library's steps for the same nodes (step
// profiles of both), those faster by more than 1% kept; the model with the kept kernels is timed
// against the library's side by side (warm runs alternating) and runs only when it is not slower
// by more than 1%.
struct FusionTiming {
  double generated_ms = 0;         // step profiles' totals: every cluster generated,
  double library_ms = 0;           // and the library's kernels only
  int clusters = 0;                // generated kernels timed
  int kept_clusters = 0;           // those faster than the library's steps for their nodes
  double selected_ms = 0;          // side by side: the model with the kept kernels,
  double selected_library_ms = 0;  // and the library's (0 when no kernel was kept)
  int generated_kernels = 0;       // in the prepared model that runs
  bool kept_library = false;
  // The choice came from the decision cache (SessionOptions::decisions): nothing was
  // timed, the other fields but the last three are 0.
  bool from_cache = false;
};

// Wall-clock seconds of each stage of Create.
struct SessionTimes {
  double load_s = 0;
  double optimize_s = 0;
  double prepare_s = 0;
};

// Two runnables timed side by side in the steady state a session runs in: each turn runs one
// twice back to back and times the second run (its weights and buffers warm in the caches, as on
// every run but the first; a run timed right after the other's would measure how much of it the
// other evicted); turns alternate A B, B A, ... so that a shared machine's drift falls on both
// alike. Rounds: at least min_rounds, then more until budget_ms of timed runs, at most
// max_rounds. Used by the choices timed at prepare and by verisub-run --compare-unoptimized.
// A model whose run took longer than warm_below_ms is run once per turn from the second round
// on: its working set is beyond the caches anyway, and the repeat would only lengthen prepare.
// Then, while the paired ratio (below) lies within [1/(1 + settle_band), 1 + settle_band] — too
// close to call at the caller's margin on so few rounds — more pairs of rounds, until
// settle_budget_ms of timed runs in all or max_rounds.
struct SideBySideOptions {
  int min_rounds = 5;
  double budget_ms = 0;
  int max_rounds = 5;
  double warm_below_ms = 50;
  double settle_band = 0;
  double settle_budget_ms = 0;
};
struct SideBySideTiming {
  double a_ms = 0, b_ms = 0;  // medians over the rounds
  // b's time over a's: median and quartiles over pairs of rounds, each pair one round A B and
  // one B A, its ratio the geometric mean of the two rounds' (drift between rounds cancels within
  // a round, and what running second in a round does to a model cancels within a pair; an odd
  // last round is left out unless it is the only one).
  double ratio_median = 0, ratio_q1 = 0, ratio_q3 = 0;
  int rounds = 0;
};
StatusOr<SideBySideTiming> TimeSideBySide(const std::function<Status()>& a,
                                          const std::function<Status()>& b,
                                          const SideBySideOptions& options);
// The summary of rounds timed as TimeSideBySide times them: a_ms[r], b_ms[r] of round r, A first
// in even rounds, B first in odd ones.
SideBySideTiming SummarizeSideBySide(const std::vector<double>& a_ms,
                                     const std::vector<double>& b_ms);

class Session {
 public:
  // Imports `model_path` (ONNX) and prepares it.
  static StatusOr<std::unique_ptr<Session>> Create(const std::string& model_path,
                                                   const SessionOptions& options);
  // Prepares an already imported graph.
  static StatusOr<std::unique_ptr<Session>> Create(runtime::Graph graph,
                                                   const SessionOptions& options);

  // One tensor per graph input, in order; the graph outputs in order.
  StatusOr<std::vector<runtime::HostTensor>> Run(const std::vector<runtime::HostTensor>& inputs);

  // The graph that runs (optimized when asked).
  const runtime::Graph& graph() const { return graph_; }
  const SessionTimes& times() const { return times_; }
  const std::string& backend_name() const { return backend_name_; }
  runtime::PrepareStats stats() const { return prepared_->stats(); }
  // Per executed step, timed alone (after a Run): where the time goes.
  StatusOr<std::vector<runtime::StepProfile>> Profile(int runs) {
    return prepared_->Profile(runs, /*alone=*/true);
  }
  // Set when the session optimized the model.
  const OptimizeReport* optimize_report() const { return optimized_ ? &report_ : nullptr; }
  // The cost source's summary, and a note when its measurements could not be saved.
  const std::string& cost_summary() const { return cost_summary_; }
  // Set with layout "joint": the layout-DP cost of the joint search's graph and of the
  // rewrites-only search's graph, and which one the session kept (the cheaper; joint on a tie).
  const std::optional<JointChoice>& joint_choice() const { return joint_; }
  // Set with layout "dp" or "joint": the layout DP's report on the graph that runs (its cost in
  // the DP's prices, states, time).
  const std::optional<rewriter::LayoutDpReport>& layout_report() const { return layout_report_; }
  // Set when layout "auto" fell back to the backend's own layouts: why.
  const std::string& layout_note() const { return layout_note_; }
  // Set with precision "bf16": what the accuracy budget kept and reverted.
  const std::optional<rewriter::PrecisionReport>& precision_report() const {
    return precision_report_;
  }
  // Set when the session optimized the model and the search rewrote it: both graphs' times at
  // prepare and which one runs.
  const std::optional<RewriteTiming>& rewrite_timing() const { return rewrite_timing_; }
  // Set with layout "auto" when the DP laid the model out in float32: both policies' times.
  const std::optional<LayoutTiming>& layout_timing() const { return layout_timing_; }
  // Set with fusion "auto" when generated kernels were prepared: both preparations' times.
  const std::optional<FusionTiming>& fusion_timing() const { return fusion_timing_; }
  // Per value id of graph(): the element type the prepared model stores it in where that is not
  // the graph's own (bfloat16 chosen by the precision DP), else 0; empty when every value is
  // stored in its own type. What runs, after every fallback and timing above.
  const std::vector<int32_t>& storage_types() const { return storage_types_; }

 private:
  Session() = default;
  // `rules`: the rules already being read (Create from a file starts them before the import).
  Status Init(runtime::Graph graph, const SessionOptions& options,
              rewriter::RuleSetLoader* rules = nullptr);
  // With bf16 chosen by the DP: times the model with it and with the float32 layouts, keeps the
  // faster (precision_report() says which and the times).
  Status KeepFasterPrecision(const SessionOptions& options, const runtime::CostModel* cost_model,
                             int num_threads);
  // With bf16 chosen by the DP: checks the budget on the prepared model's own outputs; over it,
  // solves again with a tighter budget, then falls back to float32 (precision_report()).
  Status CheckPrecisionOnBackend(const SessionOptions& options,
                                 const runtime::CostModel* cost_model, int num_threads);
  // Layout "auto": prepares the graph with the backend's own layouts too, times both and keeps
  // the faster (layout_timing()); `options->layout` becomes the policy kept.
  Status KeepFasterLayouts(SessionOptions* options, const runtime::CostModel* cost_model,
                           int num_threads);
  // Fusion "auto": prepares the graph on the library's kernels too, times both and keeps the
  // faster (fusion_timing()).
  Status KeepFasterFusion(const SessionOptions& options, int num_threads);
  // Runs `graph`, prepared in float32 (`prepared`), from now on: every fallback and timing above
  // that keeps a float32 alternative.
  void RunFloat32(runtime::Graph graph, std::unique_ptr<runtime::PreparedModel> prepared);
  // After an optimization that rewrote the model: prepares `original` too (with `both_layouts`,
  // in the layout DP's layouts and the backend's own, keeping the faster as a session without
  // `optimize` does), times it against the rewritten graph and keeps the rewrite only when it is
  // clearly faster (rewrite_timing()).
  Status KeepFasterGraph(runtime::Graph original, const SessionOptions& options, bool both_layouts,
                         const runtime::CostModel* cost_model, int num_threads);

  runtime::Graph graph_;
  std::unique_ptr<runtime::Backend> backend_;
  std::unique_ptr<runtime::PreparedModel> prepared_;
  std::vector<int32_t> storage_types_;  // what prepared_ was prepared with
  std::string backend_name_;
  SessionTimes times_;
  OptimizeReport report_;
  bool optimized_ = false;
  std::string cost_summary_;
  std::optional<JointChoice> joint_;
  std::optional<rewriter::LayoutDpReport> layout_report_;
  std::optional<rewriter::PrecisionReport> precision_report_;
  std::optional<RewriteTiming> rewrite_timing_;
  std::optional<LayoutTiming> layout_timing_;
  std::optional<FusionTiming> fusion_timing_;
  std::string layout_note_;
};

// The backends this build has, by name ("onednn", "cuda", "reference").
std::unique_ptr<runtime::Backend> MakeBackend(const std::string& name);

}  // namespace verisub
