// Building the rewritten graph: target nodes, use redirection, topological order (cycle
// check), dead-node removal and shape re-inference of affected consumers.
#include "rewriter/apply.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "runtime/constant_folding.h"
#include "specs/evaluate.h"

namespace verisub::rewriter {

using runtime::Graph;
using runtime::kNoValue;
using runtime::Node;
using runtime::Value;

const char* RejectReasonName(RejectReason r) {
  switch (r) {
    case RejectReason::kNone:
      return "none";
    case RejectReason::kTypeError:
      return "type_error";
    case RejectReason::kShapeMismatch:
      return "shape_mismatch";
    case RejectReason::kCycle:
      return "cycle";
    case RejectReason::kDownstream:
      return "downstream";
    case RejectReason::kCost:
      return "cost";
    case RejectReason::kCostLimit:
      return "cost_limit";
  }
  return "?";
}

namespace {

ApplyResult Reject(RejectReason r, std::string detail) {
  ApplyResult res;
  res.rejected = r;
  res.detail = std::move(detail);
  return res;
}

// Kahn's algorithm; ties go to the smallest key, so the order is deterministic and stays close
// to the input order. Returns false on a cycle.
bool TopologicalOrder(const std::vector<std::shared_ptr<const Node>>& nodes,
                      const std::vector<std::pair<int, int>>& keys, int num_values,
                      std::vector<std::shared_ptr<const Node>>* order) {
  const int n = static_cast<int>(nodes.size());
  std::vector<int> producer(num_values, -1);
  for (int i = 0; i < n; ++i)
    for (int o : nodes[i]->outputs)
      if (o != kNoValue) producer[o] = i;
  // Readers of each node in compressed rows (one allocation instead of one per node).
  std::vector<int> indegree(n, 0), row(n + 1, 0);
  for (int i = 0; i < n; ++i)
    for (int v : nodes[i]->inputs)
      if (v != kNoValue && producer[v] >= 0) {
        ++indegree[i];
        ++row[producer[v] + 1];
      }
  for (int i = 0; i < n; ++i) row[i + 1] += row[i];
  std::vector<int> readers(row[n]), fill(row.begin(), row.end() - 1);
  for (int i = 0; i < n; ++i)
    for (int v : nodes[i]->inputs)
      if (v != kNoValue && producer[v] >= 0) readers[fill[producer[v]]++] = i;
  using Item = std::pair<std::pair<int, int>, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (int i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push({keys[i], i});
  order->clear();
  while (!ready.empty()) {
    int i = ready.top().second;
    ready.pop();
    order->push_back(nodes[i]);
    for (int r = row[i]; r < row[i + 1]; ++r)
      if (--indegree[readers[r]] == 0) ready.push({keys[readers[r]], readers[r]});
  }
  return static_cast<int>(order->size()) == n;
}

}  // namespace

ApplyResult ApplyMatch(const Graph& g, const GraphIndex& index, const RuleSet& rules,
                       const Match& match, CostEvaluator* cost, const ApplyOptions& options,
                       double max_cost_delta) {
  const ruledb::Rule& rule = rules.rule(match.rule).rule;
  ApplyResult res;
  Graph& ng = res.graph;
  ng = g;
  double delta = 0;

  // Source outputs in the graph, and which of them are graph outputs.
  std::vector<int> old_out;
  for (const ruledb::ValueRef& o : rule.src.outputs)
    old_out.push_back(g.node(match.nodes[o.node]).outputs[o.index]);
  std::set<ruledb::ValueRef> keep_computed;
  for (size_t i = 0; i < old_out.size(); ++i)
    if (index.is_output[old_out[i]]) keep_computed.insert(rule.dst.outputs[i]);

  // Target nodes.
  std::vector<std::vector<int>> dst_out(rule.dst.nodes.size());
  auto resolve = [&](const ruledb::ValueRef& v) {
    return v.is_input() ? match.input_vals[v.index] : dst_out[v.node][v.index];
  };
  std::vector<Node> new_nodes;
  std::set<int> new_weight_only;
  const int first_new_value = ng.num_values();
  for (size_t d = 0; d < rule.dst.nodes.size(); ++d) {
    const ruledb::PatternNode& pn = rule.dst.nodes[d];
    const specs::OpSpec& spec = specs::GetOp(pn.op);
    Node n;
    n.op = pn.op;
    n.params = pn.params;
    const specs::TensorType* in[specs::kMaxOpInputs];
    bool all_constant = true;
    for (size_t k = 0; k < pn.inputs.size(); ++k) {
      int v = resolve(pn.inputs[k]);
      n.inputs.push_back(v);
      const Value& val = ng.value(v);
      if (!val.spec_type)
        return Reject(RejectReason::kTypeError,
                      spec.name + ": input '" + val.name + "' has no static shape");
      in[k] = &*val.spec_type;
      all_constant &=
          v < first_new_value ? index.weight_only[v] != 0 : new_weight_only.count(v) > 0;
    }
    specs::TensorType out[specs::kMaxOpOutputs];
    Status st = specs::InferTypes(pn.op, pn.params, in, out);
    if (!st.ok()) return Reject(RejectReason::kTypeError, st.message());
    if (pn.op == specs::OpKind::kEnlarge && out[0] == *in[0]) {
      dst_out[d].push_back(n.inputs[0]);  // enlarging to the kernel's own size: the identity
      continue;
    }
    int32_t elem_type = ng.value(n.inputs[0]).elem_type;
    n.name = "verisub_rw_n" + std::to_string(ng.num_values());
    for (int k = 0; k < spec.num_outputs; ++k) {
      Value val;
      val.name = "verisub_rw_v" + std::to_string(ng.num_values());
      val.elem_type = elem_type;
      val.dims = out[k].shape.ToVector();
      val.rank_known = true;
      val.spec_type = out[k];
      int id = ng.AddValue(std::move(val));
      n.outputs.push_back(id);
      dst_out[d].push_back(id);
    }
    bool foldable = options.fold_constants && all_constant;
    for (int k = 0; foldable && k < spec.num_outputs; ++k) {
      foldable &= !keep_computed.count({static_cast<int>(d), k});
      foldable &= out[k].shape.NumElements() <= kFoldMaxElements;
    }
    if (foldable) {  // folded into a weight when the search ends: free
      for (int o : n.outputs) new_weight_only.insert(o);
      ++res.weight_only_nodes;
      new_nodes.push_back(std::move(n));
      continue;
    }
    auto c = cost->NodeCost(ng, n);
    if (!c.ok()) return Reject(RejectReason::kCost, c.status().message());
    delta += *c;
    new_nodes.push_back(std::move(n));
  }

  // Mapped outputs must keep their shape and element type.
  std::unordered_map<int, int> redirect;
  std::vector<int> retyped;  // replacements whose split trees differ
  for (size_t i = 0; i < old_out.size(); ++i) {
    int from = old_out[i], to = resolve(rule.dst.outputs[i]);
    const Value& a = g.value(from);
    const Value& b = ng.value(to);
    if (a.elem_type != b.elem_type || a.dims != b.dims)
      return Reject(RejectReason::kShapeMismatch, "output " + std::to_string(i) + " '" + a.name +
                                                      "' is " + runtime::DimsToString(a.dims) +
                                                      " but the target gives " +
                                                      runtime::DimsToString(b.dims));
    if (from == to) continue;
    redirect[from] = to;
    if (a.spec_type && b.spec_type && !(*a.spec_type == *b.spec_type)) retyped.push_back(to);
  }

  // Node list: unmatched old nodes (uses redirected), then the target nodes.
  std::vector<char> matched(g.num_nodes(), 0);
  int anchor = 0;
  for (int gn : match.nodes) {
    matched[gn] = 1;
    anchor = std::max(anchor, gn);
    if (IsFoldedNode(g.node(gn), index.weight_only)) continue;
    auto c = cost->NodeCost(g, g.node(gn));
    if (!c.ok()) return Reject(RejectReason::kCost, c.status().message());
    delta -= *c;
  }
  // Only dead producers of pattern inputs could lower the cost further.
  bool may_free_more = false;
  for (int v : match.input_vals) {
    if (index.producer[v] < 0) continue;
    int inside = 0;
    for (int gn : match.nodes)
      for (int in : g.node(gn).inputs) inside += in == v;
    may_free_more |= index.use_count[v] == inside;
  }
  if (!may_free_more && delta >= max_cost_delta) return Reject(RejectReason::kCostLimit, "");
  std::vector<std::shared_ptr<const Node>> all;
  std::vector<std::pair<int, int>> keys;
  for (int i = 0; i < g.num_nodes(); ++i) {
    if (matched[i]) continue;
    const auto& np = g.node_ptr(i);
    bool reads = false;
    for (int v : np->inputs) reads |= v != kNoValue && redirect.count(v);
    if (reads) {
      auto copy = std::make_shared<Node>(*np);
      for (int& v : copy->inputs)
        if (v != kNoValue && redirect.count(v)) v = redirect[v];
      all.push_back(std::move(copy));
    } else {
      all.push_back(np);
    }
    keys.push_back({i, 0});
  }
  for (size_t k = 0; k < new_nodes.size(); ++k) {
    all.push_back(std::make_shared<const Node>(std::move(new_nodes[k])));
    keys.push_back({anchor, static_cast<int>(k) + 1});
  }
  for (int& v : ng.mutable_outputs())
    if (redirect.count(v)) v = redirect[v];

  // Dead nodes (e.g. the producer of a pattern input the target no longer reads).
  std::vector<int> uses(ng.num_values(), 0);
  for (const auto& np : all)
    for (int v : np->inputs)
      if (v != kNoValue) ++uses[v];
  for (int v : ng.outputs()) ++uses[v];
  std::vector<char> dead(all.size(), 0);
  // Repeated until stable: removing a node can make its producers dead.
  bool removed = true;
  while (removed) {
    removed = false;
    for (int i = static_cast<int>(all.size()) - 1; i >= 0; --i) {
      if (dead[i]) continue;
      bool used = false;
      for (int o : all[i]->outputs) used |= o != kNoValue && uses[o] > 0;
      if (used) continue;
      dead[i] = 1;
      removed = true;
      for (int v : all[i]->inputs)
        if (v != kNoValue) --uses[v];
      bool free = keys[i].second == 0
                      ? IsFoldedNode(*all[i], index.weight_only)
                      : !all[i]->outputs.empty() && new_weight_only.count(all[i]->outputs[0]);
      if (free) continue;
      auto c = cost->NodeCost(ng, *all[i]);
      if (!c.ok()) return Reject(RejectReason::kCost, c.status().message());
      delta -= *c;
    }
  }
  std::vector<std::shared_ptr<const Node>> live;
  std::vector<std::pair<int, int>> live_keys;
  for (size_t i = 0; i < all.size(); ++i) {
    if (dead[i]) continue;
    live.push_back(all[i]);
    live_keys.push_back(keys[i]);
  }
  // The target nodes sit where the last matched node was; that order is usually already
  // topological (one linear check), otherwise Kahn's algorithm reorders or finds the cycle.
  std::vector<std::shared_ptr<const Node>> order;
  std::vector<int> positions(live.size());
  for (size_t i = 0; i < live.size(); ++i) positions[i] = static_cast<int>(i);
  std::stable_sort(positions.begin(), positions.end(),
                   [&](int a, int b) { return live_keys[a] < live_keys[b]; });
  std::vector<char> defined(ng.num_values(), 0);
  for (int v : ng.inputs()) defined[v] = 1;
  bool in_order = true;
  for (int i : positions) {
    for (int v : live[i]->inputs)
      if (v != kNoValue && !defined[v] && !ng.value(v).constant) in_order = false;
    if (!in_order) break;
    for (int o : live[i]->outputs)
      if (o != kNoValue) defined[o] = 1;
  }
  if (in_order) {
    for (int i : positions) order.push_back(live[i]);
  } else if (!TopologicalOrder(live, live_keys, ng.num_values(), &order)) {
    return Reject(RejectReason::kCycle, "the rewrite would create a cycle");
  }
  // Weights nothing reads any more are released (the value slot stays until FinalizeGraph).
  for (int v = 0; v < first_new_value; ++v)
    if (uses[v] == 0 && ng.value(v).constant && g.value(v).constant) {
      bool was_read = index.use_count[v] > 0;
      if (was_read) ng.mutable_value(v).constant.reset();
    }

  // Consumers of replaced values whose split trees changed: re-infer, shapes must not change.
  if (!retyped.empty()) {
    std::vector<char> changed(ng.num_values(), 0);
    for (int v : retyped) changed[v] = 1;
    for (auto& np : order) {
      const Node& n = *np;
      bool affected = false;
      for (int v : n.inputs) affected |= v != kNoValue && changed[v];
      if (!affected) continue;
      if (!n.op) continue;  // opaque outputs keep leaf types
      const specs::TensorType* in[specs::kMaxOpInputs];
      for (size_t k = 0; k < n.inputs.size(); ++k) in[k] = &*ng.value(n.inputs[k]).spec_type;
      specs::TensorType out[specs::kMaxOpOutputs];
      Status st = specs::InferTypes(*n.op, n.params, in, out);
      if (!st.ok()) return Reject(RejectReason::kDownstream, st.message());
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        const Value& val = ng.value(n.outputs[k]);
        if (out[k].shape.ToVector() != val.dims)
          return Reject(RejectReason::kDownstream,
                        "consumer '" + n.name + "' would change shape after the rewrite");
        if (val.spec_type && *val.spec_type == out[k]) continue;
        ng.mutable_value(n.outputs[k]).spec_type = out[k];
        changed[n.outputs[k]] = 1;
      }
    }
  }
  ng.SetNodes(std::move(order));
  res.cost_delta = delta;
  return res;
}

Status FinalizeGraph(Graph* g) {
  runtime::FoldOptions fold;
  fold.max_elements = kFoldMaxElements;
  auto folded = runtime::FoldConstants(g, fold);
  if (!folded.ok()) return folded.status().WithContext("folding weight-only nodes");
  g->RemoveDeadCode();
  std::set<std::string> names;
  for (int v = 0; v < g->num_values(); ++v) {
    if (names.insert(g->value(v).name).second) continue;
    std::string fresh = g->UniqueName(g->value(v).name);
    g->mutable_value(v).name = fresh;
    names.insert(fresh);
  }
  return Status::Ok();
}

}  // namespace verisub::rewriter
