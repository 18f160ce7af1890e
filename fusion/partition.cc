#include "fusion/partition.h"

#include <algorithm>
#include <optional>

#include "fusion/lower.h"

namespace verisub::fusion {

using runtime::Graph;
using runtime::kNoValue;

namespace {

// A node that only moves data (a view, a transpose, a slice): the library runs these as views
// or strided copies, which a generated gather does not beat.
bool MovesDataOnly(const runtime::Node& n) {
  if (n.op)
    return n.op == specs::OpKind::kReshape || n.op == specs::OpKind::kTranspose ||
           n.op == specs::OpKind::kSlice;
  static const char* kMoves[] = {"Reshape",  "Flatten", "Squeeze",  "Unsqueeze",
                                 "Identity", "Dropout", "Transpose"};
  return n.domain.empty() && std::any_of(std::begin(kMoves), std::end(kMoves),
                                         [&](const char* t) { return n.op_type == t; });
}

struct Draft {
  std::vector<int> nodes;
  int reductions = 0;
  std::vector<int64_t> reduce_dims;
  std::vector<int> reduce_axes;
  bool alive = true;
};

// Whether a and b's reductions fit one kernel (none, or one domain).
bool Compatible(const Draft& a, const Draft& b) {
  return a.reductions == 0 || b.reductions == 0 ||
         (a.reduce_dims == b.reduce_dims && a.reduce_axes == b.reduce_axes);
}

void Absorb(Draft* into, Draft* from) {
  into->nodes.insert(into->nodes.end(), from->nodes.begin(), from->nodes.end());
  if (from->reductions > 0) {
    into->reduce_dims = from->reduce_dims;
    into->reduce_axes = from->reduce_axes;
  }
  into->reductions += from->reductions;
  from->alive = false;
  from->nodes.clear();
}

}  // namespace

std::vector<runtime::KernelCluster> PlanClusters(const Graph& g, const std::vector<char>& taken) {
  const std::vector<int> producer = g.Producers();
  // Per value: the nodes reading it; graph outputs are read by "node" -1.
  std::vector<std::vector<int>> readers(g.num_values());
  for (int i = 0; i < g.num_nodes(); ++i)
    for (int v : g.node(i).inputs)
      if (v != kNoValue) readers[v].push_back(i);
  for (int v : g.outputs()) readers[v].push_back(-1);
  std::vector<Draft> drafts;
  std::vector<int> draft_of(g.num_nodes(), -1);
  for (int i = 0; i < g.num_nodes(); ++i) {
    if (i < static_cast<int>(taken.size()) && taken[i]) continue;
    const std::optional<LoweringInfo> info = Lowerable(g, i);
    if (!info) continue;
    Draft mine;
    mine.nodes = {i};
    mine.reductions = info->reductions;
    mine.reduce_dims = info->reduce_dims;
    mine.reduce_axes = info->reduce_axes;
    // The clusters producing i's inputs, in input order.
    std::vector<int> candidates;
    for (int v : g.node(i).inputs) {
      if (v == kNoValue || producer[v] < 0) continue;
      const int from = draft_of[producer[v]];
      if (from >= 0 && std::find(candidates.begin(), candidates.end(), from) == candidates.end())
        candidates.push_back(from);
    }
    // The largest set (dropping candidates until it holds) whose union with i reads every value
    // it computes inside itself, i's output aside: one output, so no value crosses the kernel's
    // boundary both ways. Reductions: the first candidates' domain wins.
    std::vector<int> chosen;
    while (true) {
      chosen.clear();
      Draft domain = mine;
      for (int c : candidates)
        if (Compatible(domain, drafts[c])) {
          chosen.push_back(c);
          if (drafts[c].reductions > 0) domain = drafts[c];
        }
      std::vector<char> in_union(g.num_nodes(), 0);
      in_union[i] = 1;
      for (int c : chosen)
        for (int n : drafts[c].nodes) in_union[n] = 1;
      std::vector<int> leaking;
      for (int c : chosen) {
        bool leaks = false;
        for (int n : drafts[c].nodes)
          for (int v : g.node(n).outputs)
            for (int r : readers[v]) leaks |= r < 0 || !in_union[r];
        if (leaks) leaking.push_back(c);
      }
      if (leaking.empty()) break;
      for (int c : leaking) candidates.erase(std::find(candidates.begin(), candidates.end(), c));
    }
    for (int c : chosen) Absorb(&mine, &drafts[c]);
    const int id = static_cast<int>(drafts.size());
    for (int n : mine.nodes) draft_of[n] = id;
    drafts.push_back(std::move(mine));
  }
  std::vector<runtime::KernelCluster> out;
  for (Draft& d : drafts) {
    if (!d.alive) continue;
    std::sort(d.nodes.begin(), d.nodes.end());
    if (std::all_of(d.nodes.begin(), d.nodes.end(),
                    [&](int n) { return MovesDataOnly(g.node(n)); }))
      continue;
    runtime::KernelCluster c;
    c.nodes = d.nodes;
    c.output = g.node(d.nodes.back()).outputs[0];
    auto lowered = LowerCluster(g, c.nodes, c.output);
    if (!lowered.ok()) continue;  // each node lowers alone; together they always do
    c.inputs = lowered->inputs;
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(),
            [](const runtime::KernelCluster& a, const runtime::KernelCluster& b) {
              return a.nodes.back() < b.nodes.back();
            });
  return out;
}

}  // namespace verisub::fusion
