// Lowering of graph operators into sub-operators (subop.h): element-wise and activation
// operators, bias_add, channel_scale, batchnorm, softmax, layer_norm, reduce_mean, transpose,
// reshape-likes and slice, spec operators and their ONNX counterparts alike. Each lowering is
// tested equal to the operator's reference kernel (tests/fusion).
#pragma once

#include <optional>
#include <vector>

#include "base/status.h"
#include "fusion/subop.h"
#include "runtime/graph.h"
#include "specs/layout.h"

namespace verisub::fusion {

// What a lowerable node contributes to a kernel: its reductions, all over one domain (the dims
// of the reduced tensor and the reduced axes), which fusion keeps to one per kernel.
struct LoweringInfo {
  int reductions = 0;
  std::vector<int64_t> reduce_dims;  // the reduced tensor's dims
  std::vector<int> reduce_axes;
};

// nullopt when node `i` does not lower: not a kind listed above, not float32, a shape that is not
// static, a parameter the lowering does not cover (a non-constant exponent, an opset-11 Softmax).
std::optional<LoweringInfo> Lowerable(const runtime::Graph& g, int i);

struct LoweredCluster {
  SubGraph graph;           // inputs in the order of `inputs`
  std::vector<int> inputs;  // the graph values the kernel reads
};

// Lowers nodes `nodes` (in node order, each Lowerable) into one sub-operator graph computing
// value `output`. Scalar weights become constants; every other value read from outside the
// cluster becomes an input.
StatusOr<LoweredCluster> LowerCluster(const runtime::Graph& g, const std::vector<int>& nodes,
                                      int output);

// The physical dims of a tensor of `dims` stored in `layout` (blocked channels padded):
// [N,C,H,W] in nchw16c is [N,ceil(C/16),H,W,16]; nullopt where the layout does not fit.
std::optional<std::vector<int64_t>> PhysicalDims(const std::vector<int64_t>& dims,
                                                 specs::Layout layout);

// `g` reading its inputs and writing its output in storage layouts (a backend's blocked or
// channels-last tensors) instead of row-major: a layout is one more reindex, from the physical
// buffer to the logical tensor on the way in, back on the way out (padding lanes written as 0).
// An error where a layout does not fit its tensor's rank.
StatusOr<SubGraph> InLayouts(const SubGraph& g, const std::vector<specs::Layout>& inputs,
                             specs::Layout output);

// `g` computed in the physical index space of `layout` instead: every full-size value (the
// output's dims) indexed as it is stored, smaller operands (a per-channel scale, a scalar) read
// through their broadcast reindex rewritten to physical indices (channel c of an nChw16c tensor is
// 16 * block + lane: affine, no division), the padding lanes of a blocked output written as 0.
// What InLayouts computes, without its division and modulo per element. nullopt unless `g` is
// element-wise with broadcasts only (no reduction, no transpose) and its full-size inputs are
// all stored in `layout`, its smaller ones plain.
std::optional<SubGraph> InPhysicalSpace(const SubGraph& g, const std::vector<specs::Layout>& inputs,
                                        specs::Layout layout);

}  // namespace verisub::fusion
