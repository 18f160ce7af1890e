// Fusion planning for the oneDNN backend: which nodes a convolution or matmul absorbs (bias,
// batch normalization, activations, a residual add) and which nested concats merge, decided on
// the graph before any kernel is created. A node is absorbed only when the value it reads from
// the group has no other reader and is not a graph output.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/graph.h"
#include "specs/layout.h"
#include "specs/params.h"

namespace verisub::runtime::dnnl_backend {

// One elementwise function as oneDNN computes it: alg(alpha, beta).
struct Eltwise {
  dnnl::algorithm alg;
  float alpha = 0.f, beta = 0.f;
};

// The eltwise kernels of a fused activation parameter (conv2d, conv2d_bias, matmul): empty for
// none, nullopt where oneDNN has no eltwise for it (erf): such a node is not fused and its kernel
// refuses it, so it runs on the reference fallback.
std::optional<std::vector<Eltwise>> SpecActivation(specs::Activation a);

// The activation(s) an ONNX or spec node computes, when oneDNN has them (HardSigmoid is two).
std::optional<std::vector<Eltwise>> EltwiseOf(const Graph& g, const Node& n);

// A QuantizeLinear whose output only a DequantizeLinear reads, one scale and zero point on
// both (constants; an activation of a model quantized in ONNX Runtime's QDQ form): a float
// function of its input, which the backend computes in float (a convolution's or matmul's
// eltwise post-ops, else "pattern:fake_quant") instead of making the 8-bit value.
struct FakeQuant {
  int quantize = -1, dequantize = -1;  // the QuantizeLinear and DequantizeLinear nodes
  float scale = 1.f, zero = 0.f, low = 0.f, high = 255.f;
  // round_half_even(x / scale + zero) saturated to [low, high], less zero, times scale.
  std::vector<Eltwise> Eltwises() const;
  // The type of the 8-bit steps: s8 or u8.
  dnnl::memory::data_type StepType() const {
    return low < 0.f ? dnnl::memory::data_type::s8 : dnnl::memory::data_type::u8;
  }
};
std::optional<FakeQuant> MatchFakeQuant(const Graph& g, int i,
                                        const std::vector<int>& sole_readers);
// The pair of QuantizeLinear node `i` and DequantizeLinear node `r` reading its output, with the
// conditions above but the sole reader (a kernel checking the pair the plan matched).
std::optional<FakeQuant> FakeQuantOf(const Graph& g, int i, int r);
// The pair whose DequantizeLinear computes value `v` (FakeQuantOf; `producers` from
// Graph::Producers), or nullopt.
std::optional<FakeQuant> PairProducing(const Graph& g, const std::vector<int>& producers, int v);

struct PostOp {
  enum Kind { kBias, kScale, kBatchnorm, kEltwise, kSum } kind = kEltwise;
  int node = -1;              // the absorbed node
  std::vector<int> operands;  // kBias: bias; kScale: per-channel scale; kBatchnorm: scale,
                              // bias, mean, var; kSum: addend
  float epsilon = 0.f;        // kBatchnorm
  Eltwise eltwise{};          // kEltwise
};

// Appends eltwise function `e` of node `node` to a group's post-ops. oneDNN 2.6's jit post-op
// injector keeps one set of constants per eltwise algorithm: a chain with one algorithm twice
// under different constants computes both with the first's (measured: linear(2) then
// linear(3) multiplied by 4, clip(0, 10) then clip(0, 1.5) clipped at 10, in brgemm
// convolutions and matmuls). A repeated function takes an equivalent form of another algorithm
// where one exists (a scale as pow(a, 1), clip_v2 as clip); else false and nothing appended.
bool AppendEltwise(std::vector<PostOp>* ops, int node, Eltwise e);
// All of `es`, or none (false).
bool AppendEltwises(std::vector<PostOp>* ops, int node, const std::vector<Eltwise>& es);

struct Group {
  int kernel_node = -1;      // the node whose kernel runs the group
  int last_node = -1;        // the group runs when the driver reaches this node
  int output = kNoValue;     // the value the group produces
  std::vector<int> members;  // every node of the group, kernel_node included
  std::vector<PostOp> post_ops;
  std::vector<int> concat_inputs;  // merged concat: the inputs in order
  // A merged concat the backend runs without a copy when its parts and output share one layout
  // that cuts along channels (plain, or blocked with every part's channels a multiple of the
  // block): a channel concat of one image whose inputs are fresh values the producers write into
  // the output's buffer, after the parts of an earlier such concat that becomes its prefix
  // (DenseNet). Decided on the graph alone, as the backend's ConcatInPlace will on the layouts;
  // the layout DP prices such a concat as free.
  bool concat_in_place = false;
  // A zero Pad of the spatial dims absorbed into a convolution or average pooling: the kernel
  // reads `pad_input` with these extra pads (begin h, w, ..., end h, w, ...).
  int pad_input = kNoValue;
  std::vector<int64_t> extra_pads;
  // A run-time per-channel scale of a convolution's input (a channel_scale along axis 1 that
  // only the convolution reads) folded into its weights on every run: the kernel reads
  // `scaled_input` and multiplies its constant weights by `input_scale` ([C]) first.
  int scaled_input = kNoValue;
  int input_scale = kNoValue;
  // Non-empty when the group is a recognized subgraph run by the kernel registered under this
  // name ("pattern:gelu": x * 0.5 * (1 + erf(x / sqrt 2)) as oneDNN's gelu_erf;
  // "pattern:channel_affine": a channel_scale and/or bias_add along one axis and the clamps after
  // them, as post_ops kScale, kBias, kEltwise).
  std::string pattern;
  // "pattern:generated": the index of the group's cluster in ModelDraft::generated.
  int generated = -1;
  // A convolution's group with a residual add: the QuantizeLinear of a QuantizeLinear /
  // DequantizeLinear pair after the add that its eltwise post-ops could not state (they would
  // repeat an algorithm, fusion.h AppendEltwise), taken into the group anyway (a QDQ ResNet
  // block's output). The kernel writes the pair's output as 8-bit steps (the destination's
  // conversion does the rounding), else applies the pair in a pass of its own after the
  // convolution. -1 when none.
  int trailing_quantize = -1;
};

// The layouts in which a channel slice of one image is one contiguous piece (for the blocked
// ones, when the slice is whole blocks): where a channel concat can be built in place.
inline constexpr specs::Layout kChannelCutLayouts[] = {
    specs::Layout::kPlain, specs::Layout::kNCHW8c, specs::Layout::kNCHW16c};
bool CutsAlongChannels(specs::Layout l);

struct FusionPlan {
  std::vector<Group> groups;  // one per kernel node, in node order
  std::vector<int> group_of;  // per node: its group, -1 when alone
};

FusionPlan PlanFusion(const Graph& g);

// `plan` with nothing fused across nodes (PrepareOptions::library_fusion off, `--fusion none`):
// every group keeps its kernel node alone with that node's own post-ops (a spec convolution's
// activation parameter), absorbed pads and merged concats undone, multi-node patterns (an erf
// GELU) run node by node. For measuring what fusion buys.
FusionPlan Unfused(const Graph& g, FusionPlan plan);

// Spec-level facts the planner and kernels share.
bool IsConv(const Node& n);    // conv2d or onnx:Conv
bool IsMatmul(const Node& n);  // matmul or onnx:MatMul
bool IsConcat(const Node& n);  // concat or onnx:Concat
// The concat axis of a concat node (normalized), or -1.
int ConcatAxis(const Graph& g, const Node& n);

}  // namespace verisub::runtime::dnnl_backend
