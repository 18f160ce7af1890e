// Small graphs as text, in the rules' term syntax, for the golden tests (tests/rewriter/golden/):
//
//   input x [1,4,8,8]
//   weight w [4,4,3,3]
//   let c = (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x w)
//   output (relu c)
//   output (onnx-Neg c)
//
// Equal terms are one node (so `(split.0[axis=0] t)` and `(split.1[axis=0] t)` share their
// split); `onnx-Type` is an opaque unary operator shaped like its input.
#pragma once

#include <string>

#include "runtime/graph.h"
#include "base/status.h"

namespace verisub::rewriter::testing {

StatusOr<runtime::Graph> ParseGraphText(const std::string& text);

// Canonical text of a graph: a `let tN = ...` line for every computed value read more than once
// (in node order), then one `output` line per graph output. Graph inputs and named weights print
// by name; weights the optimizer computed (folded) print as `folded-D1xD2...`.
std::string PrintGraphText(const runtime::Graph& g);

}  // namespace verisub::rewriter::testing
