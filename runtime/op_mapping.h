// Mapping of opaque ONNX nodes onto spec operators where the spec operator computes exactly
// the same thing; everything else stays opaque, in place.
#pragma once

#include "runtime/graph.h"
#include "base/status.h"

namespace verisub::runtime {

// Rewrites opaque default-domain nodes into spec nodes (Conv -> conv2d [+ bias_add], Gemm ->
// [transpose] matmul [+ bias_add], Add/Mul -> ewadd/ewmul/bias_add/smul, pools, Reshape,
// Flatten, BatchNormalization, Concat -> binary concat chain, Split when the input's concat
// history gives the split point, ...: runtime/onnx_ops/<operator>.cc) and removes Identity nodes,
// with the canonicalizations of runtime/canonicalize.h before and after. Each mapping is accepted only
// if the spec shape rules reproduce ONNX's inferred output shapes. Leaves spec_type set on every
// value.
Status MapToSpecOps(Graph* g);

}  // namespace verisub::runtime
