// Finding rule matches in a graph: operator, parameters and wiring of the source pattern.
// Matching never edits the graph.
#pragma once

#include <array>
#include <vector>

#include "rewriter/rule_set.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

// Read-only adjacency of one graph, built once per graph and shared by every rule.
struct GraphIndex {
  explicit GraphIndex(const runtime::Graph& g);

  std::vector<int> producer;    // value -> producing node, -1 if none
  std::vector<int> use_count;   // value -> node inputs plus graph outputs reading it
  std::vector<char> is_output;  // value -> is a graph output
  // value -> (node, input slot) of every reader, in node order.
  std::vector<std::vector<std::pair<int, int>>> consumers;
  std::vector<char> weight_only;  // value -> WeightOnlyValues()
  // operator -> spec nodes with that operator, in node order.
  std::array<std::vector<int>, specs::kNumOpKinds> by_op;
};

// One binding of a rule's source pattern to graph nodes and values.
struct Match {
  int rule = -1;                // index in the RuleSet
  std::vector<int> nodes;       // source pattern node -> graph node index
  std::vector<int> input_vals;  // pattern input -> graph value id
};

// Every match of rule `rule_index`, in a deterministic order (root node order, then consumer
// order). A match binds distinct pattern nodes to distinct spec nodes (opaque nodes never
// match), binds each pattern input to one value, and every value computed by a matched node that
// is read outside the match (or is a graph output) is one of the rule's source outputs. Pattern
// inputs never bind values computed inside the match. A rule with input ranks binds each input
// only to a value of its rank.
std::vector<Match> FindMatches(const runtime::Graph& g, const GraphIndex& index,
                               const RuleSet& rules, int rule_index);

// Matches of every rule whose root source node binds graph node `node`, appended to `out` in
// rule order. Rules are looked up by the node's operator and parameters and filtered by the
// producers feeding it before any backtracking: this is what a search runs on every node.
void FindMatchesRootedAt(const runtime::Graph& g, const GraphIndex& index, const RuleSet& rules,
                         int node, std::vector<Match>* out);

// Matches of every rule, rules in order.
std::vector<Match> FindAllMatches(const runtime::Graph& g, const GraphIndex& index,
                                  const RuleSet& rules);

}  // namespace verisub::rewriter
