// The layout-assignment problem in its own terms, independent of any graph or cost source: nodes
// with their admissible layout combinations (choices) and kernel costs, values with candidate
// layouts and conversion costs. The dynamic program (layout_dp.h) and the tests' brute force
// both price an assignment with EvaluateChoices, so they agree on what a cost means.
//
// Cost semantics (shared by every solver):
// - A value is stored in the layout its producer writes (a graph input: plain).
// - A consumer reading it in another layout L needs a converted copy; each (value, L) copy is
//   made once, from the stored layout, and shared by every consumer reading L. So a value costs
//   sum over the distinct layouts L != stored its readers need of Conversion(value, stored, L).
// - A graph output must be delivered plain: it counts as a reader needing plain at the end.
// - Weights are not part of the problem (reordered once at prepare time, free per run).
// "Layout" here is a Format (layout_format.h): a memory layout and an element precision.
#pragma once

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "base/status.h"
#include "rewriter/layout_format.h"
#include "specs/layout.h"

namespace verisub::rewriter {

inline constexpr double kInfiniteCost = std::numeric_limits<double>::infinity();

struct LayoutChoice {
  std::vector<Format> inputs;   // per input slot of the problem node
  std::vector<Format> outputs;  // per output slot
  double cost_us = 0;           // kernel time in these layouts
};

struct LayoutProblemValue {
  std::string name;
  int graph_value = -1;  // id in the source graph, -1 for synthetic problems
  // Formats the value may be stored or converted into; always contains plain float32.
  std::vector<Format> candidates{Format()};
  bool graph_input = false;   // stored plain, produced by no node
  bool graph_output = false;  // delivered plain after the last node
  // conversion_us[from][to]: time of one conversion; kInfiniteCost outside the candidates.
  std::array<std::array<double, kNumFormats>, kNumFormats> conversion_us{};

  double Conversion(Format from, Format to) const {
    return conversion_us[from.index()][to.index()];
  }
};

struct LayoutProblemNode {
  std::string name;
  int graph_node = -1;      // index in the source graph, -1 for synthetic problems
  std::vector<int> inputs;  // problem value ids (a value may appear in several slots)
  std::vector<int> outputs;
  std::vector<LayoutChoice> choices;  // at least one; choice 0 is all-plain when admissible
};

struct LayoutProblem {
  std::vector<LayoutProblemValue> values;
  std::vector<LayoutProblemNode> nodes;  // a topological order (the "given" order)
};

// Structure checks: ids in range, every value produced at most once and not also a graph
// input, inputs produced before use in `nodes` order, every node with at least one choice
// whose layouts are candidates of the slot's value, conversion costs finite and non-negative
// between candidates (zero on the diagonal). Errors name the node or value.
Status CheckLayoutProblem(const LayoutProblem& p);

// The stored format of every value given one choice index per node (graph inputs and values no
// node produces: plain float32).
std::vector<Format> StoredLayouts(const LayoutProblem& p, const std::vector<int>& choice);

// Total cost of one choice per node under the semantics above: kernel costs plus one
// conversion per (value, needed layout other than stored).
double EvaluateChoices(const LayoutProblem& p, const std::vector<int>& choice);

// The index of the all-plain choice of a node, or -1 when the node has none.
int PlainChoice(const LayoutProblemNode& n);

}  // namespace verisub::rewriter
