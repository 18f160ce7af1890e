// Evaluation of pattern graphs under any semantics (generator tests, rewriter checks).
#pragma once

#include <vector>

#include "ruledb/pattern.h"
#include "specs/evaluate.h"

namespace verisub::ruledb {

// Evaluates every node in order; returns the pattern's outputs, or the first shape error.
template <class S>
StatusOr<std::vector<specs::Tensor<typename S::Elem>>> EvalPattern(
    const S& s, const PatternGraph& g, const std::vector<specs::Tensor<typename S::Elem>>& inputs) {
  using T = specs::Tensor<typename S::Elem>;
  std::vector<std::array<T, specs::kMaxOpOutputs>> values(g.nodes.size());
  auto get = [&](ValueRef v) -> const T& {
    return v.is_input() ? inputs[v.index] : values[v.node][v.index];
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const PatternNode& n = g.nodes[i];
    const T* in[specs::kMaxOpInputs];
    for (size_t k = 0; k < n.inputs.size(); ++k) in[k] = &get(n.inputs[k]);
    VERISUB_RETURN_IF_ERROR(specs::Evaluate(s, n.op, n.params, in, values[i].data()));
  }
  std::vector<T> out;
  for (const ValueRef& v : g.outputs) out.push_back(get(v));
  return out;
}

}  // namespace verisub::ruledb
