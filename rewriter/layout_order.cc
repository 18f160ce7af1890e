// Cut widths and the greedy narrow-cut order.
#include "rewriter/layout_order.h"

#include <algorithm>

namespace verisub::rewriter {
namespace {

// Position of each value's producer in `order` (-1 for graph inputs and unproduced values) and
// of its last reader (order.size() for graph outputs, -1 when nothing reads it).
void LiveRanges(const LayoutProblem& p, const std::vector<int>& order, std::vector<int>* produced,
                std::vector<int>* last_read) {
  const int nv = static_cast<int>(p.values.size());
  const int n = static_cast<int>(order.size());
  produced->assign(nv, -1);
  last_read->assign(nv, -1);
  for (int i = 0; i < n; ++i) {
    const LayoutProblemNode& node = p.nodes[order[i]];
    for (int v : node.outputs) (*produced)[v] = i;
    for (int v : node.inputs) (*last_read)[v] = std::max((*last_read)[v], i);
  }
  for (int v = 0; v < nv; ++v)
    if (p.values[v].graph_output) (*last_read)[v] = n;
}

}  // namespace

std::vector<std::vector<int>> CutValues(const LayoutProblem& p, const std::vector<int>& order) {
  std::vector<int> produced, last_read;
  LiveRanges(p, order, &produced, &last_read);
  const int n = static_cast<int>(order.size());
  std::vector<std::vector<int>> cuts(n + 1);
  for (int v = 0; v < static_cast<int>(p.values.size()); ++v) {
    if (last_read[v] < 0) continue;
    // Live on cuts produced+1 .. last_read (a graph input from cut 0).
    for (int i = produced[v] + 1; i <= last_read[v]; ++i) cuts[i].push_back(v);
  }
  return cuts;
}

int MaxCutWidth(const LayoutProblem& p, const std::vector<int>& order) {
  int w = 0;
  for (const auto& c : CutValues(p, order)) w = std::max(w, static_cast<int>(c.size()));
  return w;
}

bool IsTopologicalOrder(const LayoutProblem& p, const std::vector<int>& order) {
  const int n = static_cast<int>(p.nodes.size());
  if (static_cast<int>(order.size()) != n) return false;
  std::vector<char> seen(n, 0), ready(p.values.size(), 0);
  for (size_t v = 0; v < p.values.size(); ++v) ready[v] = p.values[v].graph_input;
  for (int i : order) {
    if (i < 0 || i >= n || seen[i]) return false;
    seen[i] = 1;
    for (int v : p.nodes[i].inputs)
      if (!ready[v]) return false;
    for (int v : p.nodes[i].outputs) ready[v] = 1;
  }
  return true;
}

std::vector<int> GivenOrder(const LayoutProblem& p) {
  std::vector<int> order(p.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  return order;
}

std::vector<int> GreedyNarrowOrder(const LayoutProblem& p) {
  const int n = static_cast<int>(p.nodes.size());
  const int nv = static_cast<int>(p.values.size());
  std::vector<int> reads_left(nv, 0), producer(nv, -1), missing(n, 0);
  std::vector<std::vector<int>> readers(nv);
  for (int i = 0; i < n; ++i) {
    for (int v : p.nodes[i].inputs) {
      ++reads_left[v];
      readers[v].push_back(i);
    }
    for (int v : p.nodes[i].outputs) producer[v] = i;
  }
  for (int i = 0; i < n; ++i)
    for (int v : p.nodes[i].inputs)
      if (producer[v] >= 0) ++missing[i];
  std::vector<int> ready;  // kept sorted by node index
  for (int i = 0; i < n; ++i)
    if (missing[i] == 0) ready.push_back(i);
  std::vector<int> order;
  order.reserve(n);
  std::vector<int> slot_count(nv, 0);
  while (!ready.empty()) {
    int best_pos = -1, best_delta = 0;
    for (size_t r = 0; r < ready.size(); ++r) {
      const LayoutProblemNode& node = p.nodes[ready[r]];
      int delta = 0;
      for (int v : node.outputs) delta += !readers[v].empty() || p.values[v].graph_output;
      for (int v : node.inputs) ++slot_count[v];
      for (int v : node.inputs) {
        if (slot_count[v] == 0) continue;  // counted already (several slots)
        if (slot_count[v] == reads_left[v] && !p.values[v].graph_output) --delta;
        slot_count[v] = 0;
      }
      if (best_pos < 0 || delta < best_delta) {
        best_pos = static_cast<int>(r);
        best_delta = delta;
      }
    }
    const int i = ready[best_pos];
    ready.erase(ready.begin() + best_pos);
    order.push_back(i);
    for (int v : p.nodes[i].inputs) --reads_left[v];
    for (int v : p.nodes[i].outputs) {
      for (int r : readers[v]) {
        // A node reading v in several slots counted v once per slot in `missing`.
        if (--missing[r] == 0) ready.insert(std::upper_bound(ready.begin(), ready.end(), r), r);
      }
    }
  }
  return order;
}

std::vector<int> NarrowestOrder(const LayoutProblem& p) {
  std::vector<int> given = GivenOrder(p), greedy = GreedyNarrowOrder(p);
  if (static_cast<int>(greedy.size()) != static_cast<int>(given.size())) return given;
  return MaxCutWidth(p, greedy) < MaxCutWidth(p, given) ? greedy : given;
}

}  // namespace verisub::rewriter
