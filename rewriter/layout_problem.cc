// Structure checks and the reference pricing of a layout assignment.
#include "rewriter/layout_problem.h"

#include <algorithm>
#include <cmath>

namespace verisub::rewriter {
namespace {

bool IsCandidate(const LayoutProblemValue& v, specs::Layout l) {
  return std::find(v.candidates.begin(), v.candidates.end(), l) != v.candidates.end();
}

}  // namespace

Status CheckLayoutProblem(const LayoutProblem& p) {
  const int nv = static_cast<int>(p.values.size());
  std::vector<char> defined(nv, 0);
  for (int v = 0; v < nv; ++v) {
    const LayoutProblemValue& val = p.values[v];
    if (!IsCandidate(val, specs::Layout::kPlain))
      return InvalidArgument("layout problem: value '" + val.name + "' lacks the plain layout");
    for (specs::Layout a : val.candidates)
      for (specs::Layout b : val.candidates) {
        double c = val.Conversion(a, b);
        if (!std::isfinite(c) || c < 0 || (a == b && c != 0))
          return InvalidArgument("layout problem: value '" + val.name + "' has conversion cost " +
                                 std::to_string(c) + " from " + std::string(LayoutName(a)) +
                                 " to " + std::string(LayoutName(b)));
      }
    defined[v] = val.graph_input;
  }
  for (const LayoutProblemNode& n : p.nodes) {
    for (int v : n.inputs) {
      if (v < 0 || v >= nv)
        return InvalidArgument("layout problem: node '" + n.name + "' reads value id " +
                               std::to_string(v) + " out of range");
      if (!defined[v])
        return InvalidArgument("layout problem: node '" + n.name + "' reads '" + p.values[v].name +
                               "' before it is produced");
    }
    for (int v : n.outputs) {
      if (v < 0 || v >= nv)
        return InvalidArgument("layout problem: node '" + n.name + "' writes value id " +
                               std::to_string(v) + " out of range");
      if (defined[v])
        return InvalidArgument("layout problem: value '" + p.values[v].name +
                               "' is produced twice (second time by node '" + n.name + "')");
      defined[v] = 1;
    }
    if (n.choices.empty())
      return InvalidArgument("layout problem: node '" + n.name + "' has no admissible layouts");
    for (const LayoutChoice& c : n.choices) {
      if (c.inputs.size() != n.inputs.size() || c.outputs.size() != n.outputs.size())
        return InvalidArgument("layout problem: node '" + n.name +
                               "' has a choice with the wrong number of layouts");
      if (!std::isfinite(c.cost_us) || c.cost_us < 0)
        return InvalidArgument("layout problem: node '" + n.name + "' has a choice costing " +
                               std::to_string(c.cost_us));
      for (size_t k = 0; k < c.inputs.size(); ++k)
        if (!IsCandidate(p.values[n.inputs[k]], c.inputs[k]))
          return InvalidArgument("layout problem: node '" + n.name + "' reads '" +
                                 p.values[n.inputs[k]].name + "' in " +
                                 std::string(LayoutName(c.inputs[k])) +
                                 ", not one of its candidate layouts");
      for (size_t k = 0; k < c.outputs.size(); ++k)
        if (!IsCandidate(p.values[n.outputs[k]], c.outputs[k]))
          return InvalidArgument("layout problem: node '" + n.name + "' writes '" +
                                 p.values[n.outputs[k]].name + "' in " +
                                 std::string(LayoutName(c.outputs[k])) +
                                 ", not one of its candidate layouts");
    }
  }
  for (int v = 0; v < nv; ++v)
    if (p.values[v].graph_output && !defined[v])
      return InvalidArgument("layout problem: graph output '" + p.values[v].name +
                             "' is never produced");
  return Status();
}

std::vector<specs::Layout> StoredLayouts(const LayoutProblem& p, const std::vector<int>& choice) {
  std::vector<specs::Layout> stored(p.values.size(), specs::Layout::kPlain);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const LayoutProblemNode& n = p.nodes[i];
    const LayoutChoice& c = n.choices[choice[i]];
    for (size_t k = 0; k < n.outputs.size(); ++k) stored[n.outputs[k]] = c.outputs[k];
  }
  return stored;
}

double EvaluateChoices(const LayoutProblem& p, const std::vector<int>& choice) {
  std::vector<specs::Layout> stored = StoredLayouts(p, choice);
  // needed[v]: bit set of layouts some reader of v needs.
  std::vector<unsigned> needed(p.values.size(), 0);
  double total = 0;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const LayoutProblemNode& n = p.nodes[i];
    const LayoutChoice& c = n.choices[choice[i]];
    total += c.cost_us;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      needed[n.inputs[k]] |= 1u << static_cast<int>(c.inputs[k]);
  }
  for (size_t v = 0; v < p.values.size(); ++v) {
    if (p.values[v].graph_output) needed[v] |= 1u << static_cast<int>(specs::Layout::kPlain);
    for (int l = 0; l < specs::kNumLayouts; ++l)
      if ((needed[v] >> l & 1) && l != static_cast<int>(stored[v]))
        total += p.values[v].Conversion(stored[v], static_cast<specs::Layout>(l));
  }
  return total;
}

int PlainChoice(const LayoutProblemNode& n) {
  for (size_t c = 0; c < n.choices.size(); ++c) {
    const LayoutChoice& ch = n.choices[c];
    bool plain = std::all_of(ch.inputs.begin(), ch.inputs.end(),
                             [](specs::Layout l) { return l == specs::Layout::kPlain; }) &&
                 std::all_of(ch.outputs.begin(), ch.outputs.end(),
                             [](specs::Layout l) { return l == specs::Layout::kPlain; });
    if (plain) return static_cast<int>(c);
  }
  return -1;
}

}  // namespace verisub::rewriter
