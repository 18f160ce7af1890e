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

RewritePlan PlanRewrite(const Graph& g, const GraphIndex& index, const RuleSet& rules,
                        const Match& match, CostEvaluator* cost, const ApplyOptions& options,
                        double max_cost_delta, const std::vector<double>* node_costs) {
  const ruledb::Rule& rule = rules.rule(match.rule).rule;
  RewritePlan plan;
  auto reject = [&plan](RejectReason r, std::string detail) {
    plan.rejected = r;
    plan.detail = std::move(detail);
    return std::move(plan);
  };
  const int first_new = g.num_values();
  auto type_of = [&](int v) -> const specs::TensorType* {
    if (v >= first_new) return &plan.new_types[v - first_new];
    const Value& val = g.value(v);
    return val.spec_type ? &*val.spec_type : nullptr;
  };
  auto elem_type_of = [&](int v) {
    return v < first_new ? g.value(v).elem_type : plan.new_elem_types[v - first_new];
  };
  auto weight_only = [&](int v) {
    return v < first_new ? index.weight_only[v] != 0 : plan.new_weight_only[v - first_new] != 0;
  };

  // Source outputs in the graph; target outputs that stay graph outputs are never folded.
  const int num_out = static_cast<int>(rule.src.outputs.size());
  std::vector<int> old_out(num_out);
  for (int i = 0; i < num_out; ++i) {
    const ruledb::ValueRef& o = rule.src.outputs[i];
    old_out[i] = g.node(match.nodes[o.node]).outputs[o.index];
  }
  auto keep_computed = [&](int d, int k) {
    for (int i = 0; i < num_out; ++i)
      if (index.is_output[old_out[i]] && rule.dst.outputs[i] == ruledb::ValueRef{d, k}) return true;
    return false;
  };

  // Target nodes, typed by the spec shape rules and priced.
  double delta = 0;
  std::vector<std::array<int, specs::kMaxOpOutputs>> dst_out(rule.dst.nodes.size());
  auto resolve = [&](const ruledb::ValueRef& v) {
    return v.is_input() ? match.input_vals[v.index] : dst_out[v.node][v.index];
  };
  for (size_t d = 0; d < rule.dst.nodes.size(); ++d) {
    const ruledb::PatternNode& pn = rule.dst.nodes[d];
    const specs::OpSpec& spec = specs::GetOp(pn.op);
    RewritePlan::NewNode n;
    n.op = pn.op;
    n.params = pn.params;
    const specs::TensorType* in[specs::kMaxOpInputs];
    bool all_constant = true;
    for (size_t k = 0; k < pn.inputs.size(); ++k) {
      int v = resolve(pn.inputs[k]);
      n.inputs.push_back(v);
      in[k] = type_of(v);
      if (!in[k])
        return reject(RejectReason::kTypeError,
                      spec.name + ": input '" + g.value(v).name + "' has no static shape");
      all_constant &= weight_only(v);
    }
    specs::TensorType out[specs::kMaxOpOutputs];
    Status st = specs::InferTypes(pn.op, pn.params, in, out);
    if (!st.ok()) return reject(RejectReason::kTypeError, st.message());
    if (pn.op == specs::OpKind::kEnlarge && out[0] == *in[0]) {
      dst_out[d][0] = n.inputs[0];  // enlarging to the kernel's own size: the identity
      continue;
    }
    int32_t elem_type = elem_type_of(n.inputs[0]);
    bool foldable = options.fold_constants && all_constant;
    for (int k = 0; foldable && k < spec.num_outputs; ++k) {
      foldable &= !keep_computed(static_cast<int>(d), k);
      foldable &= out[k].shape.NumElements() <= kFoldMaxElements;
    }
    if (foldable) {  // folded into a weight when the search ends: free
      ++plan.weight_only_nodes;
    } else {
      auto c = cost->SpecCost(pn.op, pn.params, in, static_cast<int>(pn.inputs.size()), out,
                              spec.num_outputs, elem_type, spec.name);
      if (!c.ok()) return reject(RejectReason::kCost, c.status().message());
      delta += *c;
    }
    n.first_output = static_cast<int>(plan.new_types.size());
    n.num_outputs = spec.num_outputs;
    for (int k = 0; k < spec.num_outputs; ++k) {
      dst_out[d][k] = first_new + static_cast<int>(plan.new_types.size());
      plan.new_types.push_back(std::move(out[k]));
      plan.new_elem_types.push_back(elem_type);
      plan.new_weight_only.push_back(foldable);
    }
    plan.new_nodes.push_back(std::move(n));
  }

  // Mapped outputs must keep their shape and element type.
  for (int i = 0; i < num_out; ++i) {
    int from = old_out[i], to = resolve(rule.dst.outputs[i]);
    const Value& a = g.value(from);
    const specs::TensorType* b = type_of(to);
    std::vector<int64_t> b_dims = to < first_new ? g.value(to).dims : b->shape.ToVector();
    if (a.elem_type != elem_type_of(to) || a.dims != b_dims)
      return reject(RejectReason::kShapeMismatch, "output " + std::to_string(i) + " '" + a.name +
                                                      "' is " + runtime::DimsToString(a.dims) +
                                                      " but the target gives " +
                                                      runtime::DimsToString(b_dims));
    if (from == to) continue;
    bool seen = false;
    for (const auto& [f, t] : plan.redirect) seen |= f == from;
    if (seen) continue;
    plan.redirect.push_back({from, to});
    if (a.spec_type && b && !(*a.spec_type == *b)) plan.retyped.push_back(to);
  }

  // Removed nodes: the matched ones, then producers whose every output lost its last reader
  // (e.g. the producer of a pattern input the target no longer reads), transitively. Use counts
  // change only around the match, so they are kept sparsely.
  std::vector<std::pair<int, int>> uses;  // (value, readers after the rewrite)
  auto uses_of = [&](int v) -> int& {
    for (auto& [u, n] : uses)
      if (u == v) return n;
    uses.push_back({v, index.use_count[v]});
    return uses.back().second;
  };
  for (int gn : match.nodes) {
    plan.removed.push_back(gn);
    for (int v : g.node(gn).inputs)
      if (v != kNoValue) --uses_of(v);
  }
  for (const RewritePlan::NewNode& n : plan.new_nodes)
    for (int v : n.inputs)
      if (v < first_new) ++uses_of(v);
  for (const auto& [from, to] : plan.redirect) {
    if (to >= first_new) continue;
    int inside = 0;  // reads by matched nodes go away with them
    for (int gn : match.nodes)
      for (int in : g.node(gn).inputs) inside += in == from;
    uses_of(to) += index.use_count[from] - inside;
  }
  auto is_removed = [&](int gn) {
    return std::find(plan.removed.begin(), plan.removed.end(), gn) != plan.removed.end();
  };
  for (size_t i = 0; i < plan.removed.size(); ++i) {
    const int gn = plan.removed[i];
    if (node_costs) {
      if (!IsFoldedNode(g.node(gn), index.weight_only)) delta -= (*node_costs)[gn];
    } else if (!IsFoldedNode(g.node(gn), index.weight_only)) {
      auto c = cost->NodeCost(g, g.node(gn));
      if (!c.ok()) return reject(RejectReason::kCost, c.status().message());
      delta -= *c;
    }
    // Producers of this node's inputs may have lost their last reader.
    for (int v : g.node(gn).inputs) {
      if (v == kNoValue) continue;
      int p = index.producer[v];
      if (p < 0 || is_removed(p)) continue;
      bool dead = true;
      for (int o : g.node(p).outputs) dead &= o == kNoValue || uses_of(o) == 0;
      if (!dead) continue;
      plan.removed.push_back(p);
      for (int in : g.node(p).inputs)
        if (in != kNoValue) --uses_of(in);
    }
  }
  plan.cost_delta = delta;
  if (delta >= max_cost_delta) return reject(RejectReason::kCostLimit, "");
  return plan;
}

ApplyResult BuildRewrite(const Graph& g, const GraphIndex& index, const Match& match,
                         RewritePlan plan) {
  ApplyResult res;
  res.cost_delta = plan.cost_delta;
  res.weight_only_nodes = plan.weight_only_nodes;
  Graph& ng = res.graph;
  ng = g;
  const int first_new = g.num_values();
  for (size_t i = 0; i < plan.new_types.size(); ++i) {
    Value val;
    val.name = "verisub_rw_v" + std::to_string(first_new + i);
    val.elem_type = plan.new_elem_types[i];
    val.dims = plan.new_types[i].shape.ToVector();
    val.rank_known = true;
    val.spec_type = std::move(plan.new_types[i]);
    ng.AddValue(std::move(val));
  }
  auto redirected = [&plan](int v) {
    for (const auto& [from, to] : plan.redirect)
      if (from == v) return to;
    return v;
  };

  // Node list: kept old nodes (uses redirected), then the target nodes where the last matched
  // node was.
  std::vector<char> removed(g.num_nodes(), 0);
  for (int gn : plan.removed) removed[gn] = 1;
  int anchor = 0;
  for (int gn : match.nodes) anchor = std::max(anchor, gn);
  std::vector<std::shared_ptr<const Node>> live;
  std::vector<std::pair<int, int>> keys;
  for (int i = 0; i < g.num_nodes(); ++i) {
    if (removed[i]) continue;
    const auto& np = g.node_ptr(i);
    bool reads = false;
    for (int v : np->inputs) reads |= v != kNoValue && redirected(v) != v;
    if (reads) {
      auto copy = std::make_shared<Node>(*np);
      for (int& v : copy->inputs)
        if (v != kNoValue) v = redirected(v);
      live.push_back(std::move(copy));
    } else {
      live.push_back(np);
    }
    keys.push_back({i, 0});
  }
  for (size_t k = 0; k < plan.new_nodes.size(); ++k) {
    RewritePlan::NewNode& pn = plan.new_nodes[k];
    auto n = std::make_shared<Node>();
    n->op = pn.op;
    n->params = pn.params;
    n->inputs = std::move(pn.inputs);
    for (int o = 0; o < pn.num_outputs; ++o) n->outputs.push_back(first_new + pn.first_output + o);
    n->name = "verisub_rw_n" + std::to_string(n->outputs[0]);
    live.push_back(std::move(n));
    keys.push_back({anchor, static_cast<int>(k) + 1});
  }
  for (int& v : ng.mutable_outputs()) v = redirected(v);

  // The target nodes sit where the last matched node was; that order is usually already
  // topological (one linear check), otherwise Kahn's algorithm reorders or finds the cycle.
  std::vector<std::shared_ptr<const Node>> order;
  std::vector<int> positions(live.size());
  for (size_t i = 0; i < live.size(); ++i) positions[i] = static_cast<int>(i);
  std::stable_sort(positions.begin(), positions.end(),
                   [&](int a, int b) { return keys[a] < keys[b]; });
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
  } else if (!TopologicalOrder(live, keys, ng.num_values(), &order)) {
    return Reject(RejectReason::kCycle, "the rewrite would create a cycle");
  }
  // Weights nothing reads any more are released (the value slot stays until FinalizeGraph).
  std::vector<int> uses(ng.num_values(), 0);
  for (const auto& np : order)
    for (int v : np->inputs)
      if (v != kNoValue) ++uses[v];
  for (int v : ng.outputs()) ++uses[v];
  for (int v = 0; v < g.num_values(); ++v)
    if (uses[v] == 0 && index.use_count[v] > 0 && g.value(v).constant)
      ng.mutable_value(v).constant.reset();

  // Consumers of replaced values whose split trees changed: re-infer, shapes must not change.
  if (!plan.retyped.empty()) {
    std::vector<char> changed(ng.num_values(), 0);
    for (int v : plan.retyped) changed[v] = 1;
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
  return res;
}

ApplyResult ApplyMatch(const Graph& g, const GraphIndex& index, const RuleSet& rules,
                       const Match& match, CostEvaluator* cost, const ApplyOptions& options,
                       double max_cost_delta) {
  RewritePlan plan = PlanRewrite(g, index, rules, match, cost, options, max_cost_delta);
  if (plan.rejected != RejectReason::kNone) return Reject(plan.rejected, std::move(plan.detail));
  return BuildRewrite(g, index, match, std::move(plan));
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
