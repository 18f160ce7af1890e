// Precision as a generalized layout (issue 16, seed 001's future work): reduced-precision
// kernels and precision conversions priced for the layout DP, and the output-accuracy budget an
// assignment must meet, checked against the reference executor.
//
// Where the numbers come from: oneDNN 2.6 has bf16 kernels from avx512_core on (emulated) and
// fast ones with avx512_bf16 / AMX; int8 needs VNNI to pay off. This development machine is AVX2
// only (runtime::dnnl CpuIsa() says which ISA a machine has), so no backend here can run or time
// a bf16 kernel. The DP's precision logic is therefore driven by a synthetic table: the float32
// source's time of a node, in the same layouts, times a factor per kind of kernel, and casts
// priced as the bytes they move. On a machine with bf16 kernels a measured source answers the
// same two questions (LayoutCostSource::FormatKernelCostUs / FormatConversionCostUs).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "rewriter/layout_assign.h"
#include "rewriter/layout_cost_source.h"
#include "runtime/host_tensor.h"

namespace verisub::rewriter {

struct PrecisionFactors {
  Precision precision = Precision::kBf16;
  // Time in the reduced precision over float32, same layouts: compute-bound kernels
  // (convolutions, matmuls: twice the lanes per instruction) and the rest (memory-bound:
  // half the bytes).
  double compute_factor = 0.5;
  double memory_factor = 0.6;
  // A cast reads float32 and writes the reduced type (or back): bytes moved / this bandwidth,
  // plus a launch.
  double cast_gbps = 10;
  double cast_launch_us = 1;
};

// Parses "compute=0.5,memory=0.6,cast_gbps=10,launch_us=1" (any subset; empty: defaults).
StatusOr<PrecisionFactors> ParsePrecisionFactors(const std::string& text);

// A float32 layout source extended with one reduced precision priced by factors. A spec node
// runs reduced when every data slot (activation inputs and outputs) is in it; opaque nodes and
// mixed precisions within a node have no kernel. Conversions: the float32 layout conversion
// plus a cast when the precision changes.
class ReducedPrecisionCosts : public LayoutCostSource {
 public:
  // `base` must outlive this object.
  ReducedPrecisionCosts(const LayoutCostSource* base, PrecisionFactors factors)
      : base_(base), factors_(factors) {}

  std::string Name() const override;
  std::optional<double> KernelCostUs(const runtime::Graph& g, const runtime::Node& node,
                                     std::span<const specs::Layout> inputs,
                                     std::span<const specs::Layout> outputs) const override {
    return base_->KernelCostUs(g, node, inputs, outputs);
  }
  double ConversionCostUs(const runtime::Value& value, specs::Layout from,
                          specs::Layout to) const override {
    return base_->ConversionCostUs(value, from, to);
  }
  std::vector<Precision> ReducedPrecisions() const override { return {factors_.precision}; }
  std::optional<double> FormatKernelCostUs(const runtime::Graph& g, const runtime::Node& node,
                                           std::span<const Format> inputs,
                                           std::span<const Format> outputs) const override;
  double FormatConversionCostUs(const runtime::Value& value, Format from, Format to) const override;
  void BeginGraph(const runtime::Graph& g) const override { base_->BeginGraph(g); }
  void EndGraph() const override { base_->EndGraph(); }

 private:
  const LayoutCostSource* base_;
  PrecisionFactors factors_;
};

// Runs `g` on the reference executor as a backend honouring `a` would compute it: every value
// `a` stores in bfloat16 rounded to bfloat16 when it is computed, and the weights of a node that
// reads a bfloat16 input rounded too (bf16 storage, float32 accumulation).
StatusOr<std::vector<runtime::HostTensor>> ExecuteInPrecisions(
    const runtime::Graph& g, const LayoutAssignment& a,
    const std::vector<runtime::HostTensor>& inputs);

struct PrecisionBudget {
  // Largest relative error of an output: ||reduced - float32|| / ||float32|| (the usual
  // accuracy measure of reduced-precision inference; bfloat16 storage typically gives 0.2-1%).
  double max_error = 1e-2;
  uint64_t seed = 1;  // inputs uniform in [-1, 1] (floats), 0 (integers)
  // Assignments solved and checked at most; past it, float32 throughout.
  int max_rounds = 12;
};

struct PrecisionReport {
  int rounds = 0;           // assignments solved and checked
  int reduced_values = 0;   // values stored reduced in the kept assignment
  int reverted_values = 0;  // kept float32 because the budget was exceeded
  int exact_values = 0;     // kept float32 because an integer or a comparison is made of them
  // Why no reduced assignment was kept although one was tried, when it was not the budget (a
  // reduced-precision run that failed); empty otherwise.
  std::string refused;
  double error = 0;            // of the kept assignment
  double cost_us = 0;          // of the kept assignment
  double float32_cost_us = 0;  // the best assignment without reduced precision
  LayoutDpReport dp;           // the DP's report on the kept assignment
  // The float32 outputs on the budget's inputs (null when no reduced assignment was tried): the
  // check of the backend's own outputs compares with them instead of running the reference, the
  // slowest step of a reduced-precision prepare, a second time.
  std::shared_ptr<const std::vector<runtime::HostTensor>> reference_outputs;
  // True when the errors above are of outputs the backend computed (an AssignmentRunner), not
  // of the reference executor's emulation.
  bool measured_on_backend = false;
  // Filled by Session: the whole model timed with the bf16 assignment (fp16 or bf16 on the GPU)
  // and with the float32 one
  // (ms, medians, runs alternating), and whether float32 was kept because it ran faster.
  double measured_bf16_ms = 0;
  double measured_f32_ms = 0;
  bool kept_float32_by_timing = false;
  // Filled by Session: the choice above came from the decision cache (SessionOptions::
  // decisions): nothing was timed, the two times are 0.
  bool timing_from_cache = false;
  // Filled by Session: the error of the prepared model's own outputs (the backend's bf16
  // kernels round weights and partial sums where the emulation does not), on the budget's
  // inputs; the assignment was solved again with a budget tightened by the emulation's
  // underestimate (`tightened`), and float32 kept when even that missed the budget.
  double backend_error = -1;  // -1: not checked
  bool tightened = false;
  bool kept_float32_by_check = false;
};

// The outputs of `g` on `inputs` as a backend honouring assignment `a` computes them (its
// layouts and storage precisions): what the budget is checked on when the model will run there.
using AssignmentRunner = std::function<StatusOr<std::vector<runtime::HostTensor>>(
    const LayoutAssignment& a, const std::vector<runtime::HostTensor>& inputs)>;

// The layout and precision assignment of `g` whose outputs stay within `budget` of float32's:
// solve with reduced precisions allowed; while the outputs are off by more than the budget, keep
// float32 for half of the values still stored reduced (those nearest the outputs first: their
// rounding reaches the outputs undamped) and solve again. Ends, at worst, with every value
// float32. The outputs are `run`'s (the float32 assignment's as the reference), or without it
// the reference executor's, emulating each reduced assignment (ExecuteInPrecisions): exact
// loops, minutes on a large model, and an underestimate of what bf16 kernels round. `report` may
// be null.
StatusOr<LayoutAssignment> AssignLayoutsWithinBudget(
    const runtime::Graph& g, const LayoutCostSource& costs, const LayoutDpOptions& options,
    const LayoutSpaceOptions& space, const PrecisionBudget& budget, PrecisionReport* report,
    const AssignmentRunner& run = nullptr);

}  // namespace verisub::rewriter
