// Models of default-domain opsets newer than the linked ONNX library knows (Debian 12's ONNX 1.12
// knows up to 17; exporters write 18 to 25 today: PyTorch's dynamo exporter 18 and up, ONNX
// Runtime's tools and the ONNX model zoo's newer exports), lowered on the ModelProto into opset 17
// before ONNX's checker and shape inference see them, each changed operator by its changelog:
//   Reduce{L1,L2,LogSum,LogSumExp,Max,Mean,Min,Prod,SumSquare}-18: axes from a constant input
//     into the attribute (an empty set with noop_with_empty_axes: the non-reducing step alone)
//   Split-18 num_outputs: explicit sizes (the last part smaller when uneven), from the shape
//   Pad-18 axes: pads scattered over every axis, from the rank
//   Resize-18/19, AveragePool-19, LpPool-18, Cast-19/24, QuantizeLinear-19/21/23,
//     DequantizeLinear-21/23, ScatterElements/ScatterND-18, GridSample-20: attributes at their
//     opset-17 meaning dropped or renamed; another value refused
//   Gelu-20, Mish-18, Swish-24, GroupNormalization-18/21, RMSNormalization-23, RotaryEmbedding-23,
//   Attention-23/24/25
//     (past and present keys and values, grouped-query heads, causal, boolean or float masks,
//     softcap): written out in opset-17 operators, in the forms PyTorch's opset-17 export
//     writes (which the importer's patterns know); where a type or dims nothing declares is
//     needed (an attention mask's type), after ONNX's shape inference over the rest
//   operators whose newer versions only add types (Reshape-19/21, Squeeze-21, the 22s...):
//     unchanged
// and the ModelProto is then opset 17 (IR version at most 8). Refused, with the node named: the
// operators with no opset-17 form here (TensorScatter-24, DeformConv, DFT-20,
// the string and bitwise operators...), axes computed at run time, and types newer than IR 8
// (float8, int4, float4).
#pragma once

#include <cstdint>

#include "base/status.h"
#include "onnx/onnx_pb.h"

namespace verisub::runtime {

// Newest default-domain opset the importer reads (ONNX 1.20's).
inline constexpr int64_t kNewestReadOpset = 25;
// The opset models newer than the linked ONNX library are lowered to.
inline constexpr int64_t kLoweredOpset = 17;

// Lowers `model` (graph, subgraphs, local functions) from default-domain opset `from`
// (kLoweredOpset < from <= kNewestReadOpset) into kLoweredOpset. Returns the number of nodes
// rewritten, or an error naming the node (or tensor) that has no opset-17 form.
StatusOr<int> LowerNewerOpset(onnx::ModelProto* model, int64_t from);

}  // namespace verisub::runtime
