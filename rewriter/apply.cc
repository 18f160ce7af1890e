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
    case RejectReason::kComputedWeight:
      return "computed_weight";
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

void RewritePlan::Clear() {
  rejected = RejectReason::kNone;
  detail.clear();
  cost_delta = 0;
  weight_only_nodes = 0;
  new_nodes.clear();
  new_types.clear();
  new_elem_types.clear();
  new_weight_only.clear();
  redirect.clear();
  retyped.clear();
  removed.clear();
}

void RewritePlanner::Reject(RejectReason r, std::string detail) {
  plan_.rejected = r;
  plan_.detail = std::move(detail);
}

const RewritePlan& RewritePlanner::Plan(const Match& match, double max_cost_delta) {
  plan_.Clear();
  rule_ = &rules_.rule(match.rule).rule;
  old_out_.clear();
  for (const ruledb::ValueRef& o : rule_->src.outputs)
    old_out_.push_back(g_.node(match.nodes[o.node]).outputs[o.index]);
  unpriced_.clear();
  if (!PlanTargets(match) || !PlanOutputs() || !PlanRemovals(match)) return plan_;
  if (options_.keep_weights_constant && ComputedWeightsAdded() > 0) {
    Reject(RejectReason::kComputedWeight,
           "a convolution or matmul would read a computed weight instead of a constant one");
    return plan_;
  }
  // New nodes never priced before count at their lower bounds so far: a plan over the limit on
  // those is over it at any price, and none of them is timed. Without a limit every one is.
  if (plan_.cost_delta < max_cost_delta && !PriceUnpriced()) return plan_;
  if (plan_.cost_delta >= max_cost_delta) Reject(RejectReason::kCostLimit, "");
  return plan_;
}

bool RewritePlanner::PriceUnpriced() {
  const int first_new = g_.num_values();
  for (const Unpriced& u : unpriced_) {
    const RewritePlan::NewNode& n = plan_.new_nodes[u.node];
    const specs::TensorType* in[specs::kMaxOpInputs];
    for (int k = 0; k < n.num_inputs; ++k) {
      const int v = n.inputs[k];
      in[k] = v >= first_new ? &plan_.new_types[v - first_new] : &*g_.value(v).spec_type;
    }
    const specs::OpSpec& spec = specs::GetOp(n.op);
    auto c = cost_->SpecCost(n.op, n.params, in, n.num_inputs, &plan_.new_types[n.first_output],
                             n.num_outputs, plan_.new_elem_types[n.first_output], u.weight_inputs,
                             spec.name);
    if (!c.ok()) {
      Reject(RejectReason::kCost, c.status().message());
      return false;
    }
    plan_.cost_delta += *c - u.bound;
  }
  unpriced_.clear();
  return true;
}

namespace {

// Operators whose second operand is a weight in a model's layers, prepared at load by engines
// when it is constant.
bool TakesAWeight(specs::OpKind op) {
  return op == specs::OpKind::kConv2d || op == specs::OpKind::kConv2dBias ||
         op == specs::OpKind::kMatmul;
}

}  // namespace

int RewritePlanner::ComputedWeightsAdded() const {
  const int first_new = g_.num_values();
  int added = 0;
  for (const RewritePlan::NewNode& n : plan_.new_nodes) {
    if (!TakesAWeight(n.op) || n.num_inputs < 2) continue;
    const int w = n.inputs[1];
    added += w < first_new ? !index_.weight_only[w] : !plan_.new_weight_only[w - first_new];
  }
  for (int gn : plan_.removed) {
    const Node& n = g_.node(gn);
    if (n.op && TakesAWeight(*n.op) && n.inputs.size() >= 2 && n.inputs[1] != kNoValue)
      added -= !index_.weight_only[n.inputs[1]];
  }
  return added;
}

// Target nodes, typed by the spec shape rules and priced.
bool RewritePlanner::PlanTargets(const Match& match) {
  const int first_new = g_.num_values();
  const ruledb::PatternGraph& dst = rule_->dst;
  dst_out_.assign(dst.nodes.size(), {});
  auto resolve = [&](const ruledb::ValueRef& v) {
    return v.is_input() ? match.input_vals[v.index] : dst_out_[v.node][v.index];
  };
  // Target outputs that stay graph outputs are never folded.
  auto keep_computed = [&](int d, int k) {
    for (size_t i = 0; i < old_out_.size(); ++i)
      if (index_.is_output[old_out_[i]] && dst.outputs[i] == ruledb::ValueRef{d, k}) return true;
    return false;
  };
  for (size_t d = 0; d < dst.nodes.size(); ++d) {
    const ruledb::PatternNode& pn = dst.nodes[d];
    const specs::OpSpec& spec = specs::GetOp(pn.op);
    RewritePlan::NewNode n;
    n.op = pn.op;
    n.params = pn.params;
    n.num_inputs = static_cast<int>(pn.inputs.size());
    const specs::TensorType* in[specs::kMaxOpInputs];
    bool all_constant = true;
    uint32_t weight_inputs = 0;  // bit k: input k is a weight
    for (int k = 0; k < n.num_inputs; ++k) {
      int v = resolve(pn.inputs[k]);
      n.inputs[k] = v;
      if (v >= first_new) {
        in[k] = &plan_.new_types[v - first_new];
        const bool w = plan_.new_weight_only[v - first_new] != 0;
        all_constant &= w;
        weight_inputs |= static_cast<uint32_t>(w) << k;
        continue;
      }
      const Value& val = g_.value(v);
      if (!val.spec_type) {
        Reject(RejectReason::kTypeError,
               spec.name + ": input '" + val.name + "' has no static shape");
        return false;
      }
      in[k] = &*val.spec_type;
      const bool w = index_.weight_only[v] != 0;
      all_constant &= w;
      weight_inputs |= static_cast<uint32_t>(w) << k;
    }
    specs::TensorType out[specs::kMaxOpOutputs];
    Status st = specs::InferTypes(pn.op, pn.params, in, out);
    if (!st.ok()) {
      Reject(RejectReason::kTypeError, st.message());
      return false;
    }
    if (pn.op == specs::OpKind::kEnlarge && out[0] == *in[0]) {
      dst_out_[d][0] = n.inputs[0];  // enlarging to the kernel's own size: the identity
      continue;
    }
    const int v0 = n.inputs[0];
    const int32_t elem_type =
        v0 < first_new ? g_.value(v0).elem_type : plan_.new_elem_types[v0 - first_new];
    bool foldable = options_.fold_constants && all_constant;
    for (int k = 0; foldable && k < spec.num_outputs; ++k) {
      foldable &= !keep_computed(static_cast<int>(d), k);
      foldable &= out[k].shape.NumElements() <= kFoldMaxElements;
    }
    if (foldable) {  // folded into a weight when the search ends: free
      ++plan_.weight_only_nodes;
    } else {
      // Priced exactly (PriceUnpriced) only if the plan can stay under its limit.
      bool exact = false;
      const double c = cost_->SpecCostOrBound(pn.op, pn.params, in, n.num_inputs, out,
                                              spec.num_outputs, elem_type, weight_inputs, &exact);
      if (!exact) unpriced_.push_back({static_cast<int>(plan_.new_nodes.size()), weight_inputs, c});
      plan_.cost_delta += c;
    }
    n.first_output = static_cast<int>(plan_.new_types.size());
    n.num_outputs = spec.num_outputs;
    for (int k = 0; k < spec.num_outputs; ++k) {
      dst_out_[d][k] = first_new + static_cast<int>(plan_.new_types.size());
      plan_.new_types.push_back(std::move(out[k]));
      plan_.new_elem_types.push_back(elem_type);
      plan_.new_weight_only.push_back(foldable);
    }
    plan_.new_nodes.push_back(n);
  }
  // The replacement of every source output.
  for (size_t i = 0; i < old_out_.size(); ++i) {
    int to = resolve(dst.outputs[i]);
    if (to == old_out_[i]) continue;
    bool seen = false;
    for (const auto& [f, t] : plan_.redirect) seen |= f == old_out_[i];
    if (!seen) plan_.redirect.push_back({old_out_[i], to});
  }
  return true;
}

// Mapped outputs must keep their shape and element type.
bool RewritePlanner::PlanOutputs() {
  const int first_new = g_.num_values();
  for (const auto& [from, to] : plan_.redirect) {
    const Value& a = g_.value(from);
    const specs::TensorType* b = nullptr;
    int32_t b_elem;
    bool same_dims;
    if (to < first_new) {
      const Value& tv = g_.value(to);
      b = tv.spec_type ? &*tv.spec_type : nullptr;
      b_elem = tv.elem_type;
      same_dims = a.dims == tv.dims;
    } else {
      b = &plan_.new_types[to - first_new];
      b_elem = plan_.new_elem_types[to - first_new];
      same_dims = static_cast<int>(a.dims.size()) == b->shape.rank &&
                  std::equal(a.dims.begin(), a.dims.end(), b->shape.dims.begin());
    }
    if (a.elem_type != b_elem || !same_dims) {
      std::vector<int64_t> b_dims = to < first_new ? g_.value(to).dims : b->shape.ToVector();
      int i =
          static_cast<int>(std::find(old_out_.begin(), old_out_.end(), from) - old_out_.begin());
      Reject(RejectReason::kShapeMismatch, "output " + std::to_string(i) + " '" + a.name + "' is " +
                                               runtime::DimsToString(a.dims) +
                                               " but the target gives " +
                                               runtime::DimsToString(b_dims));
      return false;
    }
    if (a.spec_type && b && !(*a.spec_type == *b)) plan_.retyped.push_back(to);
  }
  return true;
}

int& RewritePlanner::UsesAfter(int v) {
  for (auto& [u, n] : uses_)
    if (u == v) return n;
  uses_.push_back({v, index_.use_count[v]});
  return uses_.back().second;
}

// Removed nodes: the matched ones, then producers whose every output lost its last reader (e.g.
// the producer of a pattern input the target no longer reads), transitively. Use counts change
// only around the match, so they are kept sparsely.
bool RewritePlanner::PlanRemovals(const Match& match) {
  const int first_new = g_.num_values();
  uses_.clear();
  std::vector<int>& removed = plan_.removed;
  for (int gn : match.nodes) {
    removed.push_back(gn);
    for (int v : g_.node(gn).inputs)
      if (v != kNoValue) --UsesAfter(v);
  }
  for (const RewritePlan::NewNode& n : plan_.new_nodes)
    for (int k = 0; k < n.num_inputs; ++k)
      if (n.inputs[k] < first_new) ++UsesAfter(n.inputs[k]);
  for (const auto& [from, to] : plan_.redirect) {
    if (to >= first_new) continue;
    int inside = 0;  // reads by matched nodes go away with them
    for (int gn : match.nodes)
      for (int in : g_.node(gn).inputs) inside += in == from;
    UsesAfter(to) += index_.use_count[from] - inside;
  }
  for (size_t i = 0; i < removed.size(); ++i) {
    const int gn = removed[i];
    const Node& n = g_.node(gn);
    if (!IsFoldedNode(n, index_.weight_only)) {
      if (node_costs_) {
        plan_.cost_delta -= (*node_costs_)[gn];
      } else {
        auto c = cost_->NodeCost(g_, n, &index_.weight_only);
        if (!c.ok()) {
          Reject(RejectReason::kCost, c.status().message());
          return false;
        }
        plan_.cost_delta -= *c;
      }
    }
    // Producers of this node's inputs may have lost their last reader.
    for (int v : n.inputs) {
      if (v == kNoValue) continue;
      int p = index_.producer[v];
      if (p < 0 || std::find(removed.begin(), removed.end(), p) != removed.end()) continue;
      bool dead = true;
      for (int o : g_.node(p).outputs) dead &= o == kNoValue || UsesAfter(o) == 0;
      if (!dead) continue;
      removed.push_back(p);
      for (int in : g_.node(p).inputs)
        if (in != kNoValue) --UsesAfter(in);
    }
  }
  return true;
}

ApplyResult BuildRewrite(const Graph& g, const GraphIndex& index, const Match& match,
                         const RewritePlan& plan) {
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
    val.spec_type = plan.new_types[i];
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
    const RewritePlan::NewNode& pn = plan.new_nodes[k];
    auto n = std::make_shared<Node>();
    n->op = pn.op;
    n->params = pn.params;
    n->inputs.assign(pn.inputs.begin(), pn.inputs.begin() + pn.num_inputs);
    for (int o = 0; o < pn.num_outputs; ++o) n->outputs.push_back(first_new + pn.first_output + o);
    n->name = "verisub_rw_n" + std::to_string(n->outputs[0]);
    live.push_back(std::move(n));
    keys.push_back({anchor, static_cast<int>(k) + 1});
  }
  // A graph output keeps its name (callers fetch outputs by name): a new value that replaces it
  // takes the name over from the value it replaces, which nothing reads any more. An output
  // replaced by an existing value keeps its name through RestoreInterface at the end.
  std::vector<int> times_output(ng.num_values(), 0);
  for (int v : ng.outputs()) ++times_output[redirected(v)];
  for (int& v : ng.mutable_outputs()) {
    const int to = redirected(v);
    if (to != v && to >= first_new && times_output[to] == 1) {
      std::string name = ng.value(v).name;
      ng.mutable_value(v).name = ng.value(to).name;
      ng.mutable_value(to).name = std::move(name);
    }
    v = to;
  }

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
  RewritePlanner planner(g, index, rules, cost, options);
  const RewritePlan& plan = planner.Plan(match, max_cost_delta);
  if (plan.rejected != RejectReason::kNone) return Reject(plan.rejected, plan.detail);
  return BuildRewrite(g, index, match, plan);
}

Status FinalizeGraph(Graph* g) {
  runtime::FoldOptions fold;
  fold.max_elements = kFoldMaxElements;
  fold.keep_dequantized_weights = true;  // int8 weights stay int8 in the model written
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
