// Per-node cost queries and their cache.
#include "rewriter/graph_cost.h"

namespace verisub::rewriter {

using runtime::Graph;
using runtime::kNoValue;
using runtime::Node;
using runtime::Value;

namespace {

specs::Shape ShapeOf(const Value& v) {
  if (v.spec_type) return v.spec_type->shape;
  if (v.StaticShape()) {
    auto s = specs::Shape::FromVector(v.dims);
    if (s.ok()) return *s;
  }
  return specs::Shape();
}

int BytesPerElement(int32_t t) {
  switch (t) {
    case runtime::kDouble:
    case runtime::kInt64:
    case runtime::kUint64:
      return 8;
    case runtime::kFloat16:
    case runtime::kBfloat16:
    case runtime::kInt16:
    case runtime::kUint16:
      return 2;
    case runtime::kInt8:
    case runtime::kUint8:
    case runtime::kBool:
      return 1;
    default:
      return 4;
  }
}

}  // namespace

runtime::OpCostQuery NodeQuery(const Graph& g, const Node& n) {
  runtime::OpCostQuery q;
  if (n.op) {
    q.op = *n.op;
    q.params = n.params;
  } else {
    q.opaque_type = (n.domain.empty() ? "" : n.domain + ".") + n.op_type;
  }
  for (int v : n.inputs)
    if (v != kNoValue) q.inputs.push_back(ShapeOf(g.value(v)));
  for (int v : n.outputs) {
    if (v == kNoValue) continue;
    q.outputs.push_back(ShapeOf(g.value(v)));
    q.bytes_per_element = BytesPerElement(g.value(v).elem_type);
  }
  return q;
}

StatusOr<double> CostEvaluator::NodeCost(const Graph& g, const Node& n) {
  runtime::OpCostQuery q = NodeQuery(g, n);
  std::string key = q.Key();
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  auto t = model_->OpTimeUs(q);
  if (!t.ok()) return t.status().WithContext("cost of node '" + n.name + "'");
  cache_.emplace(std::move(key), *t);
  return *t;
}

std::vector<char> WeightOnlyValues(const Graph& g, int64_t max_elements) {
  std::vector<char> w(g.num_values(), 0), is_output(g.num_values(), 0);
  for (int v : g.outputs()) is_output[v] = 1;
  for (int v = 0; v < g.num_values(); ++v) w[v] = g.value(v).constant != nullptr;
  for (const auto& np : g.nodes()) {
    const Node& n = *np;
    if (!n.op) continue;
    bool all = true;
    for (int v : n.inputs) all &= v != kNoValue && w[v];
    if (!all) continue;
    for (int o : n.outputs)
      all &= !is_output[o] && g.value(o).StaticShape() &&
             runtime::CountElements(g.value(o).dims) <= max_elements;
    if (!all) continue;
    for (int o : n.outputs) w[o] = 1;
  }
  return w;
}

bool IsFoldedNode(const Node& n, const std::vector<char>& weight_only) {
  if (!n.op) return false;
  for (int o : n.outputs)
    if (o == kNoValue || !weight_only[o]) return false;
  return true;
}

StatusOr<double> CostEvaluator::GraphCost(const Graph& g) {
  double total = 0;
  std::vector<char> weight_only = WeightOnlyValues(g);
  for (const auto& n : g.nodes()) {
    if (IsFoldedNode(*n, weight_only)) continue;
    auto c = NodeCost(g, *n);
    if (!c.ok()) return c.status();
    total += *c;
  }
  return total;
}

}  // namespace verisub::rewriter
