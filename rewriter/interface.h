// A model's interface (its input and output names, in order) is what callers fetch tensors by:
// rewriting must never change it. Rewrites replace the producer of an output by a new node whose
// value has a generated name; RestoreInterface gives the output its name back.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

struct GraphInterface {
  std::vector<std::string> inputs, outputs;
};

GraphInterface InterfaceOf(const runtime::Graph& g);

// Renames the values of `g`'s outputs back to `want`'s names; where a value cannot take the name
// (a graph input, or a value that is several outputs at once) an ONNX Identity node is added
// that produces the named output. Inputs are never renamed by a rewrite: a difference is an
// internal error.
Status RestoreInterface(const GraphInterface& want, runtime::Graph* g);

}  // namespace verisub::rewriter
