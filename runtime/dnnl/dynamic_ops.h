// oneDNN kernels for the compute-heavy operators of values whose shapes are known only at run
// time (host values: a detector's box and mask heads over the proposals its NMS kept), which
// otherwise run on the reference kernels: MatMul and Gemm over run-time rows, Conv and
// ConvTranspose over a run-time batch (the weights constant and reordered once; primitives made
// per input shape and kept); MatMul of two computed values (oneDNN's sgemm), Softmax,
// LayerNormalization, Gelu and activations, and arithmetic over a value read last, in place.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "runtime/dnnl/builder.h"

namespace verisub::runtime::dnnl_backend {

class DynamicKernel {
 public:
  virtual ~DynamicKernel() = default;
  // The node's output for its first input `x` (the others are the constants it was made with),
  // or nullopt where `x` does not fit (its type or rank): then the reference kernel runs and
  // reports what is wrong.
  virtual std::optional<HostTensor> Run(RunState& st, const HostTensor& x) = 0;
  // The same for all the node's inputs (`in[k]`: constant or computed, nullptr where omitted); by
  // default Run of the first. Kernels of more than one computed input override it.
  virtual std::optional<HostTensor> RunAll(RunState& st, const std::vector<const HostTensor*>& in) {
    return in.empty() || !in[0] ? std::nullopt : Run(st, *in[0]);
  }
  // Computes the output over `x` itself where the kernel can (an activation) and returns
  // whether it did; `x` is a tensor nothing else reads.
  virtual bool RunInPlace(RunState&, HostTensor*) { return false; }
  // The same with all the node's inputs (`in[0]` is `x`'s, as RunAll takes them); by default
  // RunInPlace. Kernels of more than one input override it.
  virtual bool RunInPlaceAll(RunState& st, HostTensor* x, const std::vector<const HostTensor*>&) {
    return RunInPlace(st, x);
  }
  // Whether the calls above take inputs in channel blocks (HostTensor::channel_block), declining
  // (nullopt, false) where they cannot; other kernels get their inputs in row-major order.
  virtual bool TakesChannelBlocks() const { return false; }
  // Lets the kernel leave its output in channel blocks: every reader of it takes them
  // (TakesChannelBlocks), and it is not a model output. A convolution then writes the layout its
  // primitive computes in, and the next convolution reads it as it lies (ResNet-50 over a
  // run-time batch: no reorder into and out of every convolution). Without it, a kernel given
  // channel blocks declines, and gets its input again in row-major order.
  void AllowChannelBlockedOutput() { blocked_output_ = true; }

 protected:
  bool blocked_output_ = false;
};

// Whether node `n`'s kernel of run-time shape takes its input `k` in channel blocks (by the
// node's kind: a convolution's data, an activation, element-wise arithmetic, a pool).
bool TakesChannelBlocks(const Node& n, size_t k);

// `t` in row-major order: a copy reordered from its channel blocks (t.channel_block > 0).
HostTensor RowMajor(RunState& st, const HostTensor& t);

// The kernel for the builder's node (`constants`: its constant inputs, nullptr for the others),
// or nullptr where none applies. Constant weights are reordered into the model's memory now.
std::shared_ptr<DynamicKernel> MakeDynamicKernel(KernelBuilder& b,
                                                 const std::vector<const HostTensor*>& constants);

}  // namespace verisub::runtime::dnnl_backend
