// ONNX Runtime's contrib operators that its graph optimizations write into a model it saves
// (SessionOptions.optimized_model_filepath at the "extended" level: a model an ONNX Runtime user
// may bring), written out in standard ONNX operators on the ModelProto before shape inference, so
// that the spec operators, the fusion patterns, the rules and the oneDNN kernels see what they
// know.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace verisub::runtime {

// Rewrites, in the model's graph (not its subgraphs; `opset` its default-domain opset), following
// ONNX Runtime's contrib operator documentation:
//   FusedConv(X, W, B?, Z?)      Conv(X, W, B) [+ Z], then its activation (Relu, Tanh, Sigmoid,
//                                LeakyRelu, Clip, HardSigmoid with activation_params)
//   FusedGemm(A, B, C?)          Gemm (alpha, beta, transA, transB), then its activation
//                                (activation_alpha, activation_beta)
//   FusedMatMul(A, B)            [Transpose] A x [Transpose] B (transA, transB, transBatchA,
//                                transBatchB) [* alpha]
//   Gelu(X), BiasGelu(A, B)      0.5 x (1 + erf(x / sqrt 2)) of X or A + B
//   FastGelu(X, bias?)           0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) of X [+ bias]
//   QuickGelu(X)                 X * sigmoid(alpha X)
//   SkipLayerNormalization(input, skip, gamma, beta?, bias?)
//                                LayerNormalization(input + skip [+ bias]) over the last axis;
//                                the sum as its fourth output (written out before opset 17)
//   Attention(input, weights, bias?, mask_index?, -, attention_bias?)
//                                the transformer optimizer's BERT self-attention: x W [+ b] split
//                                into Q, K, V heads, softmax(Q K^T scale + mask + bias) V, heads
//                                merged; masks: none, [batch] end positions, [batch, total] or
//                                [batch, seq, total] raw; unidirectional (static length)
//   SimplifiedLayerNormalization(X, scale) (default domain), SkipSimplifiedLayerNormalization(
//                           input, skip, gamma, bias?)
//                                the RMS norm x / sqrt(mean(x^2) + epsilon) * scale (of input +
//                                skip [+ bias], its sum the fourth output)
//   EmbedLayerNormalization(ids, segment_ids?, word, position, segment?, gamma, beta?, mask?,
//                           position_ids?)
//                                gathered embeddings summed (third output), LayerNormalization;
//                                mask_index the count of mask ones (zeros without a mask)
// and, in models of opsets before 10, ONNX's experimental operators of those opsets (removed from
// ONNX since, run by ONNX Runtime): ImageScaler, Scale, Affine, ScaledTanh, ParametricSoftplus.
// Scalars are Constant nodes (the initializers stay as decoded). A node with attributes or read
// outputs these forms do not cover (another activation, Attention's past and present or rotary
// embeddings,
// SkipLayerNormalization's mean and inverse deviation, a FusedMatMul transposing an operand of
// unknown rank, after ONNX's shape inference) stays as it is. Returns the number of nodes
// rewritten.
int RewriteOrtContribOps(onnx::ModelProto* model, int64_t opset);

// Why `graph` cannot run anywhere but where ONNX Runtime saved it, or "": a node of its NCHWc
// layout (domain com.microsoft.nchwc, written when a model optimized at level "all" is saved:
// weights packed for the saving CPU's vector width, as ONNX Runtime's own warning says). The
// message names the node and says how to save a portable model.
std::string HardwareSpecificOrtNode(const onnx::GraphProto& graph);

}  // namespace verisub::runtime
