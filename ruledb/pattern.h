// Pattern graphs: small DAGs of spec operators over numbered inputs, the two sides of a rule.
#pragma once

#include <string>
#include <vector>

#include "specs/op_spec.h"
#include "specs/params.h"

namespace verisub::ruledb {

// A value in a pattern: pattern input `index` (node == kInput), or output `index` of a node.
struct ValueRef {
  static constexpr int kInput = -1;
  int node = kInput;
  int index = 0;
  bool is_input() const { return node == kInput; }
  bool operator==(const ValueRef& o) const { return node == o.node && index == o.index; }
  bool operator!=(const ValueRef& o) const { return !(*this == o); }
  bool operator<(const ValueRef& o) const {
    return node != o.node ? node < o.node : index < o.index;
  }
};

struct PatternNode {
  specs::OpKind op = specs::OpKind::kNumOps;
  specs::Params params;
  std::vector<ValueRef> inputs;
  bool operator==(const PatternNode& o) const {
    return op == o.op && params == o.params && inputs == o.inputs;
  }
};

// Nodes are in topological order (a node's inputs refer to earlier nodes or pattern inputs).
struct PatternGraph {
  std::vector<PatternNode> nodes;
  std::vector<ValueRef> outputs;

  bool operator==(const PatternGraph& o) const { return nodes == o.nodes && outputs == o.outputs; }
  // Highest input index used plus one.
  int NumInputsUsed() const;
};

// One term per output, `;`-separated; inputs print as names[index]. Shared subterms print
// once per use; parsing merges identical subterms back into one node.
std::string FormatPattern(const PatternGraph& g, const std::vector<std::string>& input_names);
// `replace_node` >= 0 prints every use of that node's output k as the fresh input `?new<k>`
// (pruning's generalization of a common operator).
std::string FormatValue(const PatternGraph& g, ValueRef v,
                        const std::vector<std::string>& input_names, int replace_node = -1);

}  // namespace verisub::ruledb
