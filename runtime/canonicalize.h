// Import-time canonicalization: rewrites forms that exporters write in several ways into the
// one form the spec operators and the rules know. Exact rewrites only (up to float rounding of a
// folded constant), each local to a few nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"
#include "specs/ops/pad.h"
#include "specs/params.h"

namespace verisub::runtime {

// Before mapping onto spec operators, on opaque ONNX nodes: Div by a constant becomes Mul by its
// reciprocal (a scale), Sub of a constant becomes Add of its negation (a bias). Returns the
// number of nodes rewritten.
// A zero Pad of the spatial dims read only by an AveragePool or a Conv without padding of its
// own moves into that node's pads (count_include_pad=1 for the average), so that the window
// operator maps onto a spec operator. A two-operand Einsum that is a batched matrix product
// becomes MatMul (with a Transpose of the last two axes before an operand that needs it).
// Identity, a Dropout that drops nothing, a Cast to its input's type and a Pad by zeros are removed
// (their output is not a graph output, no one reads a Dropout's mask). Pow by 1, 2, 3 or 0.5
// becomes the input, products or Sqrt; DepthToSpace and SpaceToDepth (static 4-D shapes) Reshape,
// Transpose, Reshape; DFT and STFT of constant lengths (float, static shapes) a MatMul or a strided
// Conv by the transform's matrix where that beats the reference kernel's FFT. ONNX Runtime's
// dynamically quantized matmul written out (DynamicQuantizeLinear, MatMulInteger, Cast, the two
// Muls of the scales, an Add of a bias) becomes one com.microsoft DynamicQuantizeMatMul, which the
// oneDNN backend runs as an int8 matmul and export writes out again; the same pattern around a
// ConvInteger becomes a Conv over DequantizeLinear of the run-time quantization and of the 8-bit
// weights. A quantized model in the QOperator form (QLinearConv, QLinearMatMul, ONNX Runtime's
// contrib QLinearAdd/Mul/Concat/Sigmoid/LeakyRelu/ GlobalAveragePool/AveragePool and QGemm, a
// MaxPool of 8-bit values) is written in the QDQ form: DequantizeLinear of each 8-bit operand
// (shared), the float operator, QuantizeLinear of its result. Returns the number of nodes
// rewritten.
int CanonicalizeOnnxForms(Graph* g);

// DepthToSpace (mode "DCR" or "CRD") or SpaceToDepth ("S2D") of an [N, C, H, W] tensor with
// block size `b`, as ONNX defines them: a reshape to the 6-D `mid`, a transpose by `perm`, a
// reshape to `out`. nullopt when the shape does not divide by the block.
struct PixelShuffleForm {
  std::vector<int64_t> mid, perm, out;
};
std::optional<PixelShuffleForm> PixelShuffle(const std::string& mode,
                                             const std::vector<int64_t>& in, int64_t b);

// An ONNX Pad (opset 11 or later) with zeros on the spatial dims of a 4-D tensor only (constant
// mode, value 0, no axes input): its pads as a window takes them (h begin, w begin, h end,
// w end); nullopt for any other node.
// A spec pad of zeros (mode zero) counts too.
std::optional<std::vector<int64_t>> ZeroSpatialPads(const Graph& g, const Node& pad);
// The pads (top, left, bottom, right) of a spec pad of `mode`; nullopt for any other node.
std::optional<std::vector<int64_t>> SpecPads(const Node& n, specs::ops::PadMode mode);

// For running (not for a model written again: ONNX's Gelu needs opset 20), on the opaque ONNX
// nodes of values whose shapes are known only at run time (SessionOptions::dynamic_shapes), which
// stay opaque and run one by one: PyTorch's GELU decompositions, exact and tanh, as FusePatterns
// matches them after the Div and Pow rewrites of CanonicalizeOnnxForms, become one ONNX Gelu
// node (approximate "none" or "tanh"), which the backends run as one kernel. Returns the number
// of patterns replaced.
int FuseRunTimeGelus(Graph* g);
// For running, like FuseRunTimeGelus: a MatMul of run-time shape whose operands are Transposes
// read by it alone, or whose result only a Transpose reads, becomes one Einsum over the
// untransposed values and into the transposed result (attention's heads: q, k and v moved from
// [batch, tokens, heads, features] to [batch, heads, tokens, features], k^T, the context moved
// back), which the oneDNN backend runs as one product per batch index reading and writing those
// layouts by strides: no copy of q, k, v or the context per layer and run. A transpose is folded
// only where the product can read it so (its innermost axis one of the product's two). Returns
// the number of MatMuls rewritten.
int FoldRunTimeTransposesIntoMatMuls(Graph* g);

// A batched matrix product written as an Einsum of two operands: every letter of `batch` in all
// three terms, `m` in the first operand and the result, `k` in both operands, `n` in the second
// operand and the result, each term any order of its letters.
struct EinsumProduct {
  std::string a, b, y;  // the terms
  std::string batch;
  char m = 0, k = 0, n = 0;
};
// nullopt for an equation that is not such a product (a letter repeated in a term, summed
// without being k, an ellipsis, more or fewer than two operands).
std::optional<EinsumProduct> ParseEinsumProduct(const std::string& equation);

// After mapping: x * sigmoid(x) becomes silu(x); PyTorch's exact GELU decomposition
// (x * 0.5 * (1 + erf(x / sqrt(2))), in its operand orders) becomes gelu(x), and the tanh
// approximation (0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), GPT-2's "gelu_new", the
// cube as Pow or as products) gelu_tanh(x). Intermediate values read elsewhere block a rewrite.
// Returns the number of patterns replaced.
int FusePatterns(Graph* g);

// A convolution's epilogue fused into it, as engines run it: conv2d (activation none), then a
// bias_add on its channels, then one of the activations a convolution fuses (relu, sigmoid, tanh,
// relu6, hard_sigmoid, hard_swish, silu, gelu, gelu_tanh) becomes one conv2d_bias (or conv2d when
// there is no bias; a bias computed at run time stays a bias_add) with that activation; a
// conv2d_bias without activation absorbs the activation that follows it. A value read elsewhere or
// a graph output blocks the step after it. Exact: the spec kernels compute the same sums and maps.
// Returns the number of convolutions that absorbed something.
int FuseConvEpilogues(Graph* g);

// What FuseConvEpilogues would fuse, without changing the graph: per convolution (activation
// none) that absorbs something, its bias_add (-1: none) and activation node (-1: none).
struct ConvEpilogueMatch {
  int conv = -1;
  int bias = -1;
  int activation_node = -1;
  specs::Activation activation = specs::Activation::kNone;
};
std::vector<ConvEpilogueMatch> FindConvEpilogues(const Graph& g);

}  // namespace verisub::runtime
