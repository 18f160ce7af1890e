// Building the layout problem of a graph, and translating a solution back to it.
#include "rewriter/layout_assign.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "rewriter/graph_cost.h"

namespace verisub::rewriter {
namespace {

using runtime::Graph;
using runtime::kNoValue;
using runtime::Node;
using runtime::Value;
using specs::Layout;

int RankOf(const Value& v) {
  if (v.spec_type) return v.spec_type->shape.rank;
  return v.rank_known ? static_cast<int>(v.dims.size()) : -1;
}

std::vector<Format> Candidates(const Value& v, const LayoutSpaceOptions& space,
                               const std::vector<Precision>& reduced, bool float32_only) {
  std::vector<Format> c{Format()};
  const int rank = RankOf(v);
  if (rank == 4) {
    for (Layout l : space.image_layouts)
      if (l != Layout::kPlain && specs::LayoutFitsRank(l, 4) &&
          std::find(c.begin(), c.end(), l) == c.end())
        c.push_back(l);
  } else if ((rank == 2 || rank == 3) && space.column_major) {
    c.push_back(Layout::kColMajor);
  }
  if (v.elem_type != runtime::kFloat || reduced.empty() || float32_only) return c;
  const size_t layouts = c.size();
  for (Precision p : reduced)
    for (size_t k = 0; k < layouts; ++k) c.push_back(Format(c[k].layout, p));
  return c;
}

// Graph value id -> problem value id, -1 for values outside the problem.
std::vector<int> ProblemIds(const Graph& g, const LayoutProblem& p) {
  std::vector<int> id(g.num_values(), -1);
  for (size_t v = 0; v < p.values.size(); ++v) id[p.values[v].graph_value] = static_cast<int>(v);
  return id;
}

}  // namespace

StatusOr<LayoutProblem> BuildLayoutProblem(const Graph& g, const LayoutCostSource& costs,
                                           const LayoutSpaceOptions& space, int* restricted_nodes,
                                           LayoutPricingCache* cache) {
  if (restricted_nodes) *restricted_nodes = 0;
  struct Bracket {
    const LayoutCostSource& costs;
    Bracket(const LayoutCostSource& c, const Graph& g) : costs(c) { costs.BeginGraph(g); }
    ~Bracket() { costs.EndGraph(); }
  } bracket(costs, g);
  LayoutProblem p;
  // The reduced precisions both asked for and priced by the source.
  std::vector<Precision> reduced;
  const std::vector<Precision> offered = costs.ReducedPrecisions();
  for (Precision q : space.precisions)
    if (q != Precision::kF32 && std::find(offered.begin(), offered.end(), q) != offered.end() &&
        std::find(reduced.begin(), reduced.end(), q) == reduced.end())
      reduced.push_back(q);
  std::vector<char> float32_only(g.num_values(), 0);
  for (int v : space.float32_values)
    if (v >= 0 && v < g.num_values()) float32_only[v] = 1;
  const std::vector<char> weight_only = WeightOnlyValues(g);
  std::vector<int> id(g.num_values(), -1);
  auto value_id = [&](int gv) {
    if (id[gv] >= 0) return id[gv];
    const Value& v = g.value(gv);
    LayoutProblemValue pv;
    pv.name = v.name;
    pv.graph_value = gv;
    pv.candidates = Candidates(v, space, reduced, float32_only[gv]);
    std::vector<int64_t> key;  // what the conversions depend on (see LayoutPricingCache)
    if (cache) {
      key = {v.elem_type, v.rank_known ? static_cast<int64_t>(v.dims.size()) : -1};
      key.insert(key.end(), v.dims.begin(), v.dims.end());
      for (Format f : pv.candidates) key.push_back(f.index());
      if (auto it = cache->conversions.find(key); it != cache->conversions.end()) {
        pv.conversion_us = it->second;
        key.clear();
      }
    }
    if (!cache || !key.empty()) {
      for (auto& row : pv.conversion_us) row.fill(kInfiniteCost);
      for (Format a : pv.candidates)
        for (Format b : pv.candidates)
          pv.conversion_us[a.index()][b.index()] =
              a == b ? 0 : costs.FormatConversionCostUs(v, a, b);
      if (cache) cache->conversions.emplace(std::move(key), pv.conversion_us);
    }
    id[gv] = static_cast<int>(p.values.size());
    p.values.push_back(std::move(pv));
    return id[gv];
  };
  for (int v : g.inputs())
    if (!weight_only[v]) p.values[value_id(v)].graph_input = true;

  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (IsFoldedNode(n, weight_only)) continue;
    LayoutProblemNode pn;
    pn.name = n.name;
    pn.graph_node = i;
    // Slots the DP decides: activation inputs, then outputs; graph slot index of each.
    std::vector<int> in_slot, out_slot;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] != kNoValue && !weight_only[n.inputs[k]]) {
        in_slot.push_back(static_cast<int>(k));
        pn.inputs.push_back(value_id(n.inputs[k]));
      }
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (n.outputs[k] != kNoValue) {
        out_slot.push_back(static_cast<int>(k));
        pn.outputs.push_back(value_id(n.outputs[k]));
      }
    // The node's choices from the cache when it priced this node in this context before.
    std::vector<uintptr_t> key;
    std::optional<LayoutCostSource::NodeContext> c;
    if (cache) {
      if ((c = costs.ContextOf(g, i))) {
        key.push_back(reinterpret_cast<uintptr_t>(&n));
        for (int m : c->nodes) key.push_back(reinterpret_cast<uintptr_t>(&g.node(m)));
        key.push_back(0);  // the nodes end here (a node's address is never 0)
        for (int64_t f : c->facts) key.push_back(static_cast<uintptr_t>(f));
        if (auto it = cache->nodes.find(key); it != cache->nodes.end()) {
          ++cache->node_hits;
          pn.choices = it->second.choices;
          if (it->second.restricted && restricted_nodes) ++*restricted_nodes;
          p.nodes.push_back(std::move(pn));
          continue;
        }
        ++cache->node_misses;
      }
    }
    std::vector<const std::vector<Format>*> slot_candidates;
    for (int v : pn.inputs) slot_candidates.push_back(&p.values[v].candidates);
    for (int v : pn.outputs) slot_candidates.push_back(&p.values[v].candidates);
    const size_t slots = slot_candidates.size();
    bool restricted = false;

    // Combinations: all of them (mixed-radix count, all-plain first), or the uniform ones.
    std::vector<std::vector<int>> combos;  // per combination, candidate index per slot
    double product = 1;
    for (const auto* c : slot_candidates) product *= static_cast<double>(c->size());
    if (product <= space.max_combinations_per_node) {
      std::vector<int> digit(slots, 0);
      for (;;) {
        combos.push_back(digit);
        size_t k = 0;
        while (k < slots && ++digit[k] == static_cast<int>(slot_candidates[k]->size()))
          digit[k++] = 0;
        if (k == slots) break;
      }
    } else {
      restricted = true;
      if (restricted_nodes) ++*restricted_nodes;
      for (int l = 0; l < kNumFormats; ++l) {
        std::vector<int> digit(slots, 0);
        for (size_t k = 0; k < slots; ++k) {
          const auto& c = *slot_candidates[k];
          auto it = std::find(c.begin(), c.end(), Format::FromIndex(l));
          if (it != c.end()) digit[k] = static_cast<int>(it - c.begin());
        }
        if (std::find(combos.begin(), combos.end(), digit) == combos.end()) combos.push_back(digit);
      }
    }

    std::vector<Format> in_layouts(n.inputs.size()), out_layouts(n.outputs.size());
    for (const std::vector<int>& digit : combos) {
      std::fill(in_layouts.begin(), in_layouts.end(), Format());
      std::fill(out_layouts.begin(), out_layouts.end(), Format());
      LayoutChoice choice;
      for (size_t k = 0; k < in_slot.size(); ++k) {
        in_layouts[in_slot[k]] = (*slot_candidates[k])[digit[k]];
        choice.inputs.push_back(in_layouts[in_slot[k]]);
      }
      for (size_t k = 0; k < out_slot.size(); ++k) {
        const size_t s = in_slot.size() + k;
        out_layouts[out_slot[k]] = (*slot_candidates[s])[digit[s]];
        choice.outputs.push_back(out_layouts[out_slot[k]]);
      }
      std::optional<double> t = costs.FormatKernelCostUs(g, n, in_layouts, out_layouts);
      if (!t) continue;
      choice.cost_us = *t;
      pn.choices.push_back(std::move(choice));
    }
    if (pn.choices.empty())
      return InvalidArgument("layout assignment: node '" + n.name + "' (" + n.KindName() +
                             ") runs in no layout combination of cost source " + costs.Name());
    if (!key.empty()) {
      LayoutPricingCache::NodeEntry& e = cache->nodes[key];
      e.held.push_back(g.node_ptr(i));
      for (int m : c->nodes) e.held.push_back(g.node_ptr(m));
      e.choices = pn.choices;
      e.restricted = restricted;
    }
    p.nodes.push_back(std::move(pn));
  }
  for (int v : g.outputs())
    if (!weight_only[v]) p.values[value_id(v)].graph_output = true;
  VERISUB_RETURN_IF_ERROR(CheckLayoutProblem(p));
  return p;
}

LayoutAssignment ToAssignment(const Graph& g, const LayoutProblem& p, const LayoutSolution& s) {
  LayoutAssignment a;
  a.cost_us = s.cost_us;
  a.value_layouts.assign(g.num_values(), Layout::kPlain);
  a.value_precisions.assign(g.num_values(), Precision::kF32);
  const std::vector<Format> stored = StoredLayouts(p, s.choice);
  for (size_t v = 0; v < p.values.size(); ++v) {
    a.value_layouts[p.values[v].graph_value] = stored[v].layout;
    a.value_precisions[p.values[v].graph_value] = stored[v].precision;
  }
  a.node_input_layouts.resize(g.num_nodes());
  a.node_input_precisions.resize(g.num_nodes());
  for (int i = 0; i < g.num_nodes(); ++i) {
    a.node_input_layouts[i].assign(g.node(i).inputs.size(), Layout::kPlain);
    a.node_input_precisions[i].assign(g.node(i).inputs.size(), Precision::kF32);
  }
  const std::vector<int> id = ProblemIds(g, p);
  std::map<std::pair<int, int>, LayoutConversion> conversions;  // by (value, to format)
  auto need = [&](int gv, Format to, int reader) {
    const Format from(a.value_layouts[gv], a.value_precisions[gv]);
    if (from == to) return;
    LayoutConversion& c = conversions[{gv, to.index()}];
    c.value = gv;
    c.from = from.layout;
    c.from_precision = from.precision;
    c.to = to.layout;
    c.to_precision = to.precision;
    c.readers.push_back(reader);
  };
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const LayoutProblemNode& pn = p.nodes[i];
    const Node& n = g.node(pn.graph_node);
    const LayoutChoice& ch = pn.choices[s.choice[i]];
    size_t slot = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] == kNoValue || id[n.inputs[k]] < 0) continue;
      VERISUB_CHECK(slot < ch.inputs.size() && pn.inputs[slot] == id[n.inputs[k]]);
      a.node_input_layouts[pn.graph_node][k] = ch.inputs[slot].layout;
      a.node_input_precisions[pn.graph_node][k] = ch.inputs[slot].precision;
      need(n.inputs[k], ch.inputs[slot], pn.graph_node);
      ++slot;
    }
  }
  for (int v : g.outputs())
    if (id[v] >= 0) need(v, Format(), -1);
  for (auto& [key, c] : conversions) {
    c.readers.erase(std::unique(c.readers.begin(), c.readers.end()), c.readers.end());
    a.conversions.push_back(std::move(c));
  }
  return a;
}

StatusOr<LayoutAssignment> AssignLayouts(const Graph& g, const LayoutCostSource& costs,
                                         const LayoutDpOptions& options, LayoutDpReport* report,
                                         const LayoutSpaceOptions& space) {
  auto start = std::chrono::steady_clock::now();
  int restricted = 0;
  VERISUB_ASSIGN_OR_RETURN(LayoutProblem p, BuildLayoutProblem(g, costs, space, &restricted));
  double build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  VERISUB_ASSIGN_OR_RETURN(LayoutSolution s, SolveLayoutProblem(p, options, report));
  if (report) {
    report->restricted_nodes = restricted;
    report->build_ms = build_ms;
  }
  return ToAssignment(g, p, s);
}

void StoreLayouts(const LayoutAssignment& a, Graph* g) {
  VERISUB_CHECK(static_cast<int>(a.value_layouts.size()) == g->num_values());
  for (int v = 0; v < g->num_values(); ++v)
    if (g->value(v).layout != a.value_layouts[v]) g->mutable_value(v).layout = a.value_layouts[v];
}

}  // namespace verisub::rewriter
