// ONNX operators with no kernel here, written on the ModelProto in ones that have (before
// shape inference, like ort_contrib.h and onnx_newer_opsets.h):
//   Compress(x, condition, axis?)  Gather(x [flattened without an axis], NonZero(condition))
//   LpPool(x; p, window)           (AveragePool(|x|^p, padding counted) * window size)^(1/p)
//   GlobalLpPool(x; p)             (ReduceSum(|x|^p over the spatial axes))^(1/p)
#pragma once

#include <cstdint>

#include "onnx/onnx_pb.h"

namespace verisub::runtime {

// Rewrites those nodes of `model`'s graph and subgraphs (`opset` its default-domain opset, 7 and
// up; older models are left as they are). Returns the number of nodes rewritten.
int WriteOutOperators(onnx::ModelProto* model, int64_t opset);

}  // namespace verisub::runtime
