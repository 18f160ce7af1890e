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

StatusOr<double> CostEvaluator::NodeCost(const Graph& g, const Node& n,
                                         const std::vector<char>* weight_only) {
  if (!n.op) return Query(NodeQuery(g, n), n.name);
  uint32_t weights = 0;
  for (size_t k = 0; k < n.inputs.size() && k < 32; ++k) {
    const int v = n.inputs[k];
    if (v == kNoValue) continue;
    if (weight_only ? (*weight_only)[v] != 0 : g.value(v).constant != nullptr) weights |= 1u << k;
  }
  const specs::TensorType* in[specs::kMaxOpInputs];
  specs::TensorType out[specs::kMaxOpOutputs];
  bool typed = n.inputs.size() <= specs::kMaxOpInputs && n.outputs.size() <= specs::kMaxOpOutputs;
  for (size_t k = 0; typed && k < n.inputs.size(); ++k) {
    typed = n.inputs[k] != kNoValue && g.value(n.inputs[k]).spec_type.has_value();
    if (typed) in[k] = &*g.value(n.inputs[k]).spec_type;
  }
  for (size_t k = 0; typed && k < n.outputs.size(); ++k) {
    typed = n.outputs[k] != kNoValue && g.value(n.outputs[k]).spec_type.has_value();
    if (typed) out[k] = *g.value(n.outputs[k]).spec_type;
  }
  if (!typed) return Query(NodeQuery(g, n), n.name);
  return SpecCost(*n.op, n.params, in, static_cast<int>(n.inputs.size()), out,
                  static_cast<int>(n.outputs.size()), g.value(n.outputs.back()).elem_type, weights,
                  n.name);
}

size_t CostEvaluator::SpecKeyHash::operator()(const SpecKey& k) const {
  // Words are packed from the front: hashing stops at the trailing zeros.
  size_t end = k.size();
  while (end > 0 && k[end - 1] == 0) --end;
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < end; ++i) {
    h = (h ^ static_cast<uint64_t>(k[i])) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  return static_cast<size_t>(h);
}

CostEvaluator::SpecKey CostEvaluator::KeyOf(specs::OpKind op, const specs::Params& params,
                                            const specs::TensorType* const* inputs, int num_inputs,
                                            const specs::TensorType* outputs, int num_outputs,
                                            int32_t elem_type, uint32_t weight_inputs) {
  SpecKey key{};  // unused words stay zero, so equal instances give equal keys
  size_t w = 0;
  key[w++] = static_cast<int64_t>(op);
  key[w++] = weight_inputs;
  key[w++] = BytesPerElement(elem_type);
  key[w++] = num_inputs;
  key[w++] = num_outputs;
  for (int64_t p : params.v) key[w++] = p;
  auto put = [&](const specs::Shape& s) {
    key[w++] = s.rank;
    for (int i = 0; i < s.rank; ++i) key[w++] = s.dims[i];
  };
  for (int k = 0; k < num_inputs; ++k) put(inputs[k]->shape);
  for (int k = 0; k < num_outputs; ++k) put(outputs[k].shape);
  return key;
}

runtime::OpCostQuery CostEvaluator::QueryOf(specs::OpKind op, const specs::Params& params,
                                            const specs::TensorType* const* inputs, int num_inputs,
                                            const specs::TensorType* outputs, int num_outputs,
                                            int32_t elem_type, uint32_t weight_inputs) {
  runtime::OpCostQuery q;
  q.op = op;
  q.params = params;
  for (int k = 0; k < num_inputs; ++k) q.inputs.push_back(inputs[k]->shape);
  for (int k = 0; k < num_outputs; ++k) q.outputs.push_back(outputs[k].shape);
  q.bytes_per_element = BytesPerElement(elem_type);
  q.weight_inputs = weight_inputs;
  return q;
}

StatusOr<double> CostEvaluator::SpecCost(specs::OpKind op, const specs::Params& params,
                                         const specs::TensorType* const* inputs, int num_inputs,
                                         const specs::TensorType* outputs, int num_outputs,
                                         int32_t elem_type, uint32_t weight_inputs,
                                         const std::string& node_name) {
  const SpecKey key =
      KeyOf(op, params, inputs, num_inputs, outputs, num_outputs, elem_type, weight_inputs);
  auto it = spec_cache_.find(key);
  if (it != spec_cache_.end()) return it->second;
  auto t = model_->OpTimeUs(
      QueryOf(op, params, inputs, num_inputs, outputs, num_outputs, elem_type, weight_inputs));
  if (!t.ok()) return t.status().WithContext("cost of node '" + node_name + "'");
  spec_cache_.emplace(key, *t);
  return *t;
}

double CostEvaluator::SpecCostOrBound(specs::OpKind op, const specs::Params& params,
                                      const specs::TensorType* const* inputs, int num_inputs,
                                      const specs::TensorType* outputs, int num_outputs,
                                      int32_t elem_type, uint32_t weight_inputs, bool* exact) {
  const SpecKey key =
      KeyOf(op, params, inputs, num_inputs, outputs, num_outputs, elem_type, weight_inputs);
  if (auto it = spec_cache_.find(key); it != spec_cache_.end()) {
    *exact = true;
    return it->second;
  }
  *exact = false;
  auto [bound, added] = bound_cache_.try_emplace(key, 0.0);
  if (added)
    bound->second = model_->LowerBoundUs(
        QueryOf(op, params, inputs, num_inputs, outputs, num_outputs, elem_type, weight_inputs));
  return bound->second;
}

StatusOr<double> CostEvaluator::Query(const runtime::OpCostQuery& q, const std::string& node_name) {
  std::string key = q.Key();
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  auto t = model_->OpTimeUs(q);
  if (!t.ok()) return t.status().WithContext("cost of node '" + node_name + "'");
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

StatusOr<std::vector<double>> CostEvaluator::NodeCosts(const Graph& g) {
  std::vector<double> out(g.num_nodes(), 0.0);
  const std::vector<char> weight_only = WeightOnlyValues(g);
  const std::vector<char> absorbed = model_->AbsorbedNodes(g);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (IsFoldedNode(n, weight_only)) continue;
    if (!absorbed.empty() && absorbed[i]) continue;
    auto c = NodeCost(g, n, &weight_only);
    if (!c.ok()) return c.status();
    out[i] = *c;
  }
  return out;
}

StatusOr<double> CostEvaluator::GraphCost(const Graph& g) {
  auto costs = NodeCosts(g);
  if (!costs.ok()) return costs.status();
  double total = 0;
  for (double c : *costs) total += c;
  return total;
}

}  // namespace verisub::rewriter
