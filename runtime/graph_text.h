// The graph text form: small graphs in the rules' term syntax. The golden tests
// (tests/rewriter/golden/) are written in it, and `verisub-opt --dump-after` prints it.
//
//   input x [1,4,8,8]
//   weight w [4,4,3,3]
//   let c = (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x w)
//   output (relu c)
//   output (onnx-Neg c)
//   layout c nhwc
//
// Equal terms are one node (so `(split.0[axis=0] t)` and `(split.1[axis=0] t)` share their
// split); `onnx-Type` is an opaque unary operator shaped like its input. The text carries shapes,
// not data: a parsed weight gets pseudo-random contents seeded by its name.
#pragma once

#include <string>

#include "base/status.h"
#include "runtime/graph.h"

namespace verisub::runtime {

StatusOr<Graph> ParseGraphText(const std::string& text);

// Canonical text of a graph: a `let tN = ...` line for every computed value read more than once
// (in node order), then one `output` line per graph output, then a `layout VALUE NAME` line per
// value stored in a layout other than plain (graph inputs, then in node order). Graph inputs and
// named weights print by name; weights the optimizer computed (folded) print as `folded-D1xD2...`.
std::string PrintGraphText(const Graph& g);

}  // namespace verisub::runtime
