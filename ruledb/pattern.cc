// Pattern graphs.
#include "ruledb/pattern.h"

#include <algorithm>

#include "specs/registry.h"

namespace verisub::ruledb {

int PatternGraph::NumInputsUsed() const {
  int n = 0;
  for (const PatternNode& node : nodes)
    for (const ValueRef& v : node.inputs)
      if (v.is_input()) n = std::max(n, v.index + 1);
  for (const ValueRef& v : outputs)
    if (v.is_input()) n = std::max(n, v.index + 1);
  return n;
}

std::string FormatValue(const PatternGraph& g, ValueRef v,
                        const std::vector<std::string>& input_names, int replace_node) {
  if (v.is_input()) return input_names[v.index];
  if (v.node == replace_node) return "?new" + std::to_string(v.index);
  const PatternNode& node = g.nodes[v.node];
  const specs::OpSpec& op = specs::GetOp(node.op);
  std::string s = "(" + op.name;
  if (op.num_outputs > 1) s += "." + std::to_string(v.index);
  if (!op.params.empty()) {
    s += "[";
    for (size_t i = 0; i < op.params.size(); ++i)
      s += (i ? "," : "") + op.params[i].name + "=" +
           specs::FormatParamValue(op.params[i], node.params);
    s += "]";
  }
  for (const ValueRef& in : node.inputs) s += " " + FormatValue(g, in, input_names, replace_node);
  return s + ")";
}

std::string FormatPattern(const PatternGraph& g, const std::vector<std::string>& input_names) {
  std::string s;
  for (size_t i = 0; i < g.outputs.size(); ++i)
    s += (i ? " ; " : "") + FormatValue(g, g.outputs[i], input_names);
  return s;
}

}  // namespace verisub::ruledb
