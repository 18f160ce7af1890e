// The measured GPU cost model: each operator instance is run with cuDNN or cuBLAS as a GPU engine
// runs it (a convolution with the fastest algorithm cuDNN finds for its shapes, a biased ReLU
// convolution as cuDNN's fused conv+bias+activation, a matmul as one strided-batched GEMM,
// pointwise operators as cuDNN tensor ops) and timed with CUDA events (warm-up runs, then the
// median of repeated batches); times are kept in a CostTable per GPU, like the CPU tables, so a
// shipped table makes an optimization for that GPU reproducible on any machine. Operators with
// no cuDNN/cuBLAS kernel here (opaque ones, softmax, ...) get the analytic h100 estimate and are
// counted as estimated.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/cost/cost_model.h"
#include "runtime/cost/cost_table.h"
#include "runtime/cost/measured_table.h"

namespace verisub::runtime {

// The revision of how instances are timed on the GPU, in every GPU table's header: bump it when a
// change here changes what an instance costs. 1: the first GPU tables; 2: a ReLU convolution
// without a bias runs cuDNN's fused kernel (zero bias), as engines run it; 3: a split is one copy
// per output.
inline constexpr int kCudaCostRevision = 3;

struct CudaCostOptions {
  MissingCost missing = MissingCost::kMeasure;
  int device = 0;  // CUDA device ordinal
  int warmup_runs = 3;
  // Each timed batch runs the kernel enough times to fill `batch_seconds`; the median of
  // `batches` batches is the time.
  double batch_seconds = 0.002;
  int batches = 5;
};

// The GPU `device` as a cost table header: engine "cudnn", cuDNN's version, the GPU's name,
// "sm_<major><minor>", 1 thread, kCudaCostRevision. An error when there is no such GPU.
StatusOr<CostTableHeader> ThisGpu(int device);

class CudaCostModel : public CostModel {
 public:
  // An error naming the reason when CUDA finds no usable GPU (no device, no driver): callers fall
  // back or stop, tests skip. `table` holds known times; measurements are added to it.
  static StatusOr<std::unique_ptr<CudaCostModel>> Create(const CudaCostOptions& options,
                                                         CostTable table);
  // A model without a GPU, answering from `table` alone (a table measured on the GPU an
  // optimization is for, shipped to a machine without one): an instance the table lacks gets the
  // policy's answer, and kMeasure's measurement fails, so it is estimated.
  static std::unique_ptr<CudaCostModel> FromTable(const CudaCostOptions& options, CostTable table);
  ~CudaCostModel() override;

  std::string Name() const override;
  StatusOr<double> OpTimeUs(const OpCostQuery& q) const override;
  double SecondsMeasuring() const override { return stats().measure_seconds; }
  // MinFlops at more than any GPU's dense float32 or TF32 rate (4 PFLOP/s); 0 for what is
  // estimated anyway (opaque operators, other element types).
  double LowerBoundUs(const OpCostQuery& q) const override;
  // What GPU engines fuse: a convolution's bias and a ReLU after it run inside cuDNN's fused
  // conv+bias+activation kernel (runtime::FindConvEpilogues; other activations are kernels of
  // their own there), so a search does not pull a ReLU away from its convolution to save a launch.
  bool PricesFusion() const override { return true; }
  std::vector<char> AbsorbedNodes(const Graph& g) const override;

  // Times one spec operator instance (no table involved), in seconds; an error for an operator
  // this model has no kernel for.
  StatusOr<double> Measure(const OpCostQuery& q, int* runs) const;

  CostTable table() const { return measured_.table(); }
  MeasureStats stats() const { return measured_.stats(); }

  struct Gpu;  // CUDA, cuDNN and cuBLAS handles (cuda_cost.cc)

  // See MeasuredTable::SetOnMeasured.
  void SetOnMeasured(std::function<void()> f) const { measured_.SetOnMeasured(std::move(f)); }

 private:
  CudaCostModel(const CudaCostOptions& options, CostTable table, std::unique_ptr<Gpu> gpu);

  CudaCostOptions options_;
  std::string name_;
  std::unique_ptr<Gpu> gpu_;
  AnalyticCostModel estimate_;
  mutable MeasuredTable measured_;
};

}  // namespace verisub::runtime
