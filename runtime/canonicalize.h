// Import-time canonicalization: rewrites forms that exporters write in several ways into the
// one form the spec operators and the rules know. Exact rewrites only (up to float rounding of a
// folded constant), each local to a few nodes.
#pragma once

#include "base/status.h"
#include "runtime/graph.h"

namespace verisub::runtime {

// Before mapping onto spec operators, on opaque ONNX nodes: Div by a constant becomes Mul by its
// reciprocal (a scale), Sub of a constant becomes Add of its negation (a bias). Returns the
// number of nodes rewritten.
int CanonicalizeOnnxForms(Graph* g);

// After mapping: x * sigmoid(x) becomes silu(x); PyTorch's exact GELU decomposition
// (x * 0.5 * (1 + erf(x / sqrt(2))), in its operand orders) becomes gelu(x). Intermediate values
// read elsewhere block a rewrite. Returns the number of patterns replaced.
int FusePatterns(Graph* g);

}  // namespace verisub::runtime
