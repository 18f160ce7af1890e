// Random layout problems and brute force.
#include "tests/rewriter/layout_test_problems.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "rewriter/graph_cost.h"

namespace verisub::rewriter::testing {
namespace {

using specs::Layout;

constexpr Layout kImage[] = {Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};

}  // namespace

LayoutProblem RandomLayoutProblem(uint64_t seed, int64_t max_assignments) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto real = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  LayoutProblem p;
  auto new_value = [&](const std::string& name) {
    LayoutProblemValue v;
    v.name = name;
    // Candidates: plain plus a random subset of the image layouts, or column-major.
    if (uniform(0, 3) == 0) {
      v.candidates.push_back(Layout::kColMajor);
    } else {
      for (Layout l : kImage)
        if (uniform(0, 2) > 0) v.candidates.push_back(l);
    }
    // Precision as a layout: sometimes every layout also in bfloat16 (up to 8 formats).
    if (uniform(0, 2) == 0) {
      const size_t layouts = v.candidates.size();
      for (size_t k = 0; k < layouts; ++k)
        v.candidates.push_back(Format(v.candidates[k].layout, Precision::kBf16));
    }
    for (auto& row : v.conversion_us) row.fill(kInfiniteCost);
    for (Format a : v.candidates)
      for (Format b : v.candidates)
        v.conversion_us[a.index()][b.index()] = a == b ? 0 : real(0.2, 4.0);
    p.values.push_back(v);
    return static_cast<int>(p.values.size()) - 1;
  };
  const int inputs = uniform(1, 2);
  for (int i = 0; i < inputs; ++i) p.values[new_value("in" + std::to_string(i))].graph_input = true;
  const int nodes = uniform(2, 7);
  std::vector<int> reads(p.values.size(), 0);
  double assignments = 1;
  for (int i = 0; i < nodes; ++i) {
    LayoutProblemNode n;
    n.name = "n" + std::to_string(i);
    const int nin = uniform(1, 3);
    for (int k = 0; k < nin; ++k) {
      // Prefer recent values (chains), sometimes old ones (joins, long-lived values).
      int nv = static_cast<int>(p.values.size());
      int v = uniform(0, 2) == 0 ? uniform(0, nv - 1) : std::max(0, nv - 1 - uniform(0, 1));
      n.inputs.push_back(v);
    }
    const int nout = uniform(0, 3) == 0 ? 2 : 1;
    for (int k = 0; k < nout; ++k)
      n.outputs.push_back(new_value("v" + std::to_string(i) + "_" + std::to_string(k)));
    const bool opaque = uniform(0, 5) == 0;
    // Every combination of candidates, each admitted with some probability.
    std::vector<int> slots(n.inputs);
    slots.insert(slots.end(), n.outputs.begin(), n.outputs.end());
    std::vector<int> digit(slots.size(), 0);
    const double admit = real(0.2, 0.9);
    for (;;) {
      LayoutChoice c;
      bool plain = true;
      for (size_t k = 0; k < slots.size(); ++k) {
        Format l = p.values[slots[k]].candidates[digit[k]];
        plain &= l == Format();
        (k < n.inputs.size() ? c.inputs : c.outputs).push_back(l);
      }
      c.cost_us = real(1.0, 20.0);
      bool take = opaque ? plain : (plain ? uniform(0, 9) > 0 : real(0, 1) < admit);
      if (take) n.choices.push_back(c);
      size_t k = 0;
      while (k < slots.size() &&
             ++digit[k] == static_cast<int>(p.values[slots[k]].candidates.size()))
        digit[k++] = 0;
      if (k == slots.size()) break;
    }
    if (n.choices.empty()) {  // a node with a single non-plain choice
      LayoutChoice c;
      for (int v : n.inputs) c.inputs.push_back(p.values[v].candidates.back());
      for (int v : n.outputs) c.outputs.push_back(p.values[v].candidates.back());
      c.cost_us = real(1.0, 20.0);
      n.choices.push_back(c);
    }
    while (assignments * static_cast<double>(n.choices.size()) >
           static_cast<double>(max_assignments))
      n.choices.pop_back();
    if (n.choices.empty()) break;
    assignments *= static_cast<double>(n.choices.size());
    reads.resize(p.values.size(), 0);
    for (int v : n.inputs) ++reads[v];
    p.nodes.push_back(std::move(n));
  }
  // Unread node outputs are graph outputs; so is a random read one now and then.
  reads.resize(p.values.size(), 0);
  bool any = false;
  for (size_t v = 0; v < p.values.size(); ++v) {
    if (p.values[v].graph_input) continue;
    bool produced = false;
    for (const auto& n : p.nodes)
      produced |=
          std::find(n.outputs.begin(), n.outputs.end(), static_cast<int>(v)) != n.outputs.end();
    if (!produced) continue;
    if (reads[v] == 0 ? uniform(0, 3) > 0 : uniform(0, 4) == 0) {
      p.values[v].graph_output = true;
      any = true;
    }
  }
  if (!any && !p.nodes.empty()) p.values[p.nodes.back().outputs[0]].graph_output = true;
  // Values of nodes dropped by the assignment limit are never produced: make them unused.
  std::vector<char> produced(p.values.size(), 0);
  for (const auto& n : p.nodes)
    for (int v : n.outputs) produced[v] = 1;
  for (size_t v = 0; v < p.values.size(); ++v)
    if (!produced[v] && !p.values[v].graph_input) p.values[v].graph_output = false;
  return p;
}

double BruteForceOptimum(const LayoutProblem& p, std::vector<int>* best_choice) {
  std::vector<int> choice(p.nodes.size(), 0), best;
  double best_cost = kInfiniteCost;
  for (;;) {
    double c = EvaluateChoices(p, choice);
    if (c < best_cost) {
      best_cost = c;
      best = choice;
    }
    size_t k = 0;
    while (k < choice.size() && ++choice[k] == static_cast<int>(p.nodes[k].choices.size()))
      choice[k++] = 0;
    if (k == choice.size()) break;
  }
  if (best_choice) *best_choice = best;
  return best_cost;
}

void ExpectValidAssignment(const std::string& name, const runtime::Graph& g,
                           const LayoutCostSource& costs, const LayoutAssignment& a) {
  ASSERT_EQ(static_cast<int>(a.value_layouts.size()), g.num_values());
  ASSERT_EQ(static_cast<int>(a.value_precisions.size()), g.num_values());
  ASSERT_EQ(static_cast<int>(a.node_input_layouts.size()), g.num_nodes());
  ASSERT_EQ(static_cast<int>(a.node_input_precisions.size()), g.num_nodes());
  auto stored = [&](int v) { return Format(a.value_layouts[v], a.value_precisions[v]); };
  std::map<std::pair<int, int>, const LayoutConversion*> conv;  // (value, format index)
  double total = 0;
  for (const LayoutConversion& c : a.conversions) {
    const Format from(c.from, c.from_precision), to(c.to, c.to_precision);
    EXPECT_TRUE(from == stored(c.value)) << name;
    EXPECT_FALSE(from == to) << name;
    EXPECT_FALSE(c.readers.empty());
    EXPECT_TRUE(conv.emplace(std::make_pair(c.value, to.index()), &c).second) << name << ": twice";
    total += costs.FormatConversionCostUs(g.value(c.value), from, to);
  }
  auto has_reader = [&](int v, Format to, int reader) {
    auto it = conv.find({v, to.index()});
    if (it == conv.end()) return false;
    const auto& r = it->second->readers;
    return std::find(r.begin(), r.end(), reader) != r.end();
  };
  const std::vector<char> weight_only = WeightOnlyValues(g);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const runtime::Node& n = g.node(i);
    if (IsFoldedNode(n, weight_only)) continue;
    std::vector<Format> in, out;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      in.emplace_back(a.node_input_layouts[i][k], a.node_input_precisions[i][k]);
    for (int v : n.outputs) out.push_back(v == runtime::kNoValue ? Format() : stored(v));
    auto t = costs.FormatKernelCostUs(g, n, in, out);
    ASSERT_TRUE(t.has_value()) << name << ": node " << n.name << " in an inadmissible combination";
    total += *t;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      int v = n.inputs[k];
      if (v == runtime::kNoValue || weight_only[v]) continue;
      if (!(in[k] == stored(v))) {
        EXPECT_TRUE(has_reader(v, in[k], i)) << name << ": no conversion for " << n.name;
      }
    }
  }
  for (int v : g.outputs()) {
    if (!weight_only[v] && !(stored(v) == Format())) {
      EXPECT_TRUE(has_reader(v, Format(), -1)) << name << ": output not delivered plain";
    }
  }
  EXPECT_NEAR(total, a.cost_us, 1e-6 * a.cost_us) << name;
}

}  // namespace verisub::rewriter::testing
