// The measured CPU cost model: each operator instance is run on the oneDNN backend as the backend
// would run it in a model (weights prepared once, its own blocked layouts, the given thread
// count) and timed (warm-up runs, then the median of repeated runs); times are kept in a
// CostTable, so each instance is measured once per machine and a shipped or saved table makes an
// optimization reproducible. The model also knows what the backend fuses (a convolution's bias,
// activations and residual add run as post-ops of its kernel): those nodes cost nothing of their
// own, which is what keeps a search from undoing a fusion (moving a ReLU behind a Concat).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/backend.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/cost/cost_model.h"
#include "runtime/cost/cost_table.h"
#include "runtime/cost/measured_table.h"
#include "runtime/dnnl/fusion.h"
#include "specs/layout.h"

namespace verisub::runtime {

struct MeasureOptions {
  int threads = 1;
  MissingCost missing = MissingCost::kMeasure;
  int warmup_runs = 2;
  // Timed runs: enough to fill `target_seconds`, within [min_runs, max_runs].
  int min_runs = 5;
  int max_runs = 100;
  double target_seconds = 0.02;
};

// The revision of this backend's kernels, in every cost table header: bump it when a change to
// runtime/dnnl changes what a kernel costs (fusion, layouts, kernel choices), so that tables
// measured before are not trusted. 1: the first measured tables; 2: pools read their input in
// the assigned output layout, Slice and run-time convolution weights on oneDNN; 3: the layout
// DP's kernels timed with their fusion group; 4: bf16 storage, matmuls with a matrix right-hand
// side as one GEMM of every row, brgemm-packed matmul weights on AVX-512; 5: 3x3 stride-1
// convolutions on oneDNN's Winograd kernels where they time faster; 6: means and maxima over the
// spatial axes as global poolings, in the input's layout; 7: InstanceNormalization as a row
// normalization and a per-channel affine, Pad on a host loop of the backend's own; 8: Winograd
// convolutions with an activation they do not take (SiLU) computed by an eltwise step after them.
inline constexpr int kDnnlBackendRevision = 8;

// This machine as a cost table header: engine "onednn", its version and effective ISA, the CPU
// model from /proc/cpuinfo, `threads`, kDnnlBackendRevision.
CostTableHeader ThisMachine(int threads);

class MeasuredCpuCostModel : public CostModel {
 public:
  // `table` holds known times (e.g. loaded from a file); measurements are added to it.
  MeasuredCpuCostModel(MeasureOptions options, CostTable table);
  ~MeasuredCpuCostModel() override;

  std::string Name() const override;
  StatusOr<double> OpTimeUs(const OpCostQuery& q) const override;
  bool PricesFusion() const override { return true; }
  std::vector<char> AbsorbedNodes(const Graph& g) const override;
  double SecondsMeasuring() const override { return stats().measure_seconds; }
  // MinFlops at more than any x86 core computes per thread (float32: 64 FLOP a cycle, two
  // 512-bit FMA units, at 6 GHz); 0 for what is estimated anyway (opaque operators, other
  // element types).
  double LowerBoundUs(const OpCostQuery& q) const override;

  // Times one spec operator instance on the backend (no table involved). Opaque instances carry
  // no attributes to rebuild them from: an error.
  StatusOr<double> Measure(const OpCostQuery& q, int* runs) const;

  // For the layout DP: the kernel that computes node `node` of `g` (its whole fusion group in
  // `plan`, PlanFusion(g): a convolution with its bias, activation and residual add, whose
  // implementation oneDNN picks with the post-ops in view) alone on the backend, the group's output
  // stored in `output_layout` (convolutions and pools honour it; inputs arrive as the kernel wants
  // them, the conversion excluded), table-cached under `key` (the caller's instance key) plus the
  // group's members and the layout. Weights stay weights. `bf16`: every activation of the group
  // stored in bfloat16 (PrepareOptions::storage_types; the key says "@bf16"). `input_layout`:
  // the layout assigned to the node's first input, for kernels that read it as stored (a global
  // pooling; the key says "@in=").
  StatusOr<double> NodeInLayoutUs(const Graph& g, const dnnl_backend::FusionPlan& plan, int node,
                                  specs::Layout output_layout, const std::string& key,
                                  bool bf16 = false,
                                  std::optional<specs::Layout> input_layout = {}) const;
  // A tensor of `dims` converted from one layout (and element type: float32, or bfloat16 when
  // the flag says) to another by oneDNN's reorder, table-cached ("reorder [dims] from->to",
  // a bfloat16 side marked ":bf16").
  StatusOr<double> ReorderUs(const std::vector<int64_t>& dims, specs::Layout from, specs::Layout to,
                             bool from_bf16 = false, bool to_bf16 = false) const;

  // A copy of the table as it is now (known and measured entries).
  CostTable table() const;
  using Stats = MeasureStats;
  Stats stats() const;

  // See MeasuredTable::SetOnMeasured.
  void SetOnMeasured(std::function<void()> f) const { measured_.SetOnMeasured(std::move(f)); }

 private:
  // MeasuredTable::Cached (the CPU's analytic estimate answers kAnalytic).
  StatusOr<double> Cached(const std::string& key,
                          const std::function<StatusOr<double>(int* runs)>& measure,
                          double estimate) const {
    return measured_.Cached(key, measure, estimate);
  }
  // Median seconds of the kernel computing node `node` of a prepared model (see Measure).
  StatusOr<double> TimePrepared(PreparedModel& m, const std::vector<HostTensor>& feeds, int* runs,
                                int node) const;

  MeasureOptions options_;
  std::unique_ptr<Backend> backend_;
  AnalyticCostModel estimate_;
  mutable MeasuredTable measured_;
};

}  // namespace verisub::runtime
