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

StatusOr<double> CostEvaluator::GraphCost(const Graph& g) {
  double total = 0;
  for (const auto& n : g.nodes()) {
    auto c = NodeCost(g, *n);
    if (!c.ok()) return c.status();
    total += *c;
  }
  return total;
}

}  // namespace verisub::rewriter
