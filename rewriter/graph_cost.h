// Graph cost for the search: the sum of per-node times from a CostModel, cached per operator
// instance (OpCostQuery::Key), so each distinct instance is asked once per optimization.
#pragma once

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "runtime/cost/cost_model.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

// The cost query of one node: shapes from spec types (or static dims), 4-byte floats unless
// the element type says otherwise. Unknown shapes give rank-0 shapes (opaque nodes only).
runtime::OpCostQuery NodeQuery(const runtime::Graph& g, const runtime::Node& n);

// Largest weight-only result that is folded (runtime::FoldOptions' default).
inline constexpr int64_t kFoldMaxElements = int64_t{1} << 24;

// Per value: a weight, or computed only from weights by spec nodes, not a graph output and at
// most `max_elements` large. Such values are folded into weights when a search ends
// (runtime::FoldConstants), so the nodes computing them cost nothing.
std::vector<char> WeightOnlyValues(const runtime::Graph& g,
                                   int64_t max_elements = kFoldMaxElements);
// A spec node all of whose outputs are weight-only.
bool IsFoldedNode(const runtime::Node& n, const std::vector<char>& weight_only);

class CostEvaluator {
 public:
  explicit CostEvaluator(const runtime::CostModel* model) : model_(model) {}

  // The node priced on its own. `weight_only` (WeightOnlyValues of `g`) says which inputs are
  // weights; without it, inputs holding constants are.
  StatusOr<double> NodeCost(const runtime::Graph& g, const runtime::Node& n,
                            const std::vector<char>* weight_only = nullptr);
  // A spec operator instance given its types, before any node exists; `node_name` only names
  // the node in an error. Bit k of `weight_inputs`: input k is a weight.
  StatusOr<double> SpecCost(specs::OpKind op, const specs::Params& params,
                            const specs::TensorType* const* inputs, int num_inputs,
                            const specs::TensorType* outputs, int num_outputs, int32_t elem_type,
                            uint32_t weight_inputs, const std::string& node_name);
  // SpecCost's answer when the instance was priced before (*exact true), else the cost model's
  // LowerBoundUs of it (*exact false): prices nothing, times nothing.
  double SpecCostOrBound(specs::OpKind op, const specs::Params& params,
                         const specs::TensorType* const* inputs, int num_inputs,
                         const specs::TensorType* outputs, int num_outputs, int32_t elem_type,
                         uint32_t weight_inputs, bool* exact);
  // Per node in context: 0 for weight-only nodes and for nodes the cost model's engine runs
  // inside another node's kernel (CostModel::AbsorbedNodes), NodeCost otherwise.
  StatusOr<std::vector<double>> NodeCosts(const runtime::Graph& g);
  // Sum of NodeCosts.
  StatusOr<double> GraphCost(const runtime::Graph& g);
  const runtime::CostModel& model() const { return *model_; }
  int cache_size() const { return static_cast<int>(cache_.size() + spec_cache_.size()); }

 private:
  // A spec operator instance packed into words (operator, bytes per element, parameters,
  // shapes): the search prices every candidate rewrite, so this key avoids building text.
  using SpecKey =
      std::array<int64_t, 5 + specs::kParamSlots +
                              (specs::kMaxOpInputs + specs::kMaxOpOutputs) * (1 + specs::kMaxRank)>;
  struct SpecKeyHash {
    size_t operator()(const SpecKey& k) const;
  };
  StatusOr<double> Query(const runtime::OpCostQuery& q, const std::string& node_name);
  static SpecKey KeyOf(specs::OpKind op, const specs::Params& params,
                       const specs::TensorType* const* inputs, int num_inputs,
                       const specs::TensorType* outputs, int num_outputs, int32_t elem_type,
                       uint32_t weight_inputs);
  static runtime::OpCostQuery QueryOf(specs::OpKind op, const specs::Params& params,
                                      const specs::TensorType* const* inputs, int num_inputs,
                                      const specs::TensorType* outputs, int num_outputs,
                                      int32_t elem_type, uint32_t weight_inputs);

  const runtime::CostModel* model_;
  std::unordered_map<std::string, double> cache_;  // opaque operators, by OpCostQuery::Key()
  std::unordered_map<SpecKey, double, SpecKeyHash> spec_cache_;
  std::unordered_map<SpecKey, double, SpecKeyHash> bound_cache_;  // LowerBoundUs of instances
};

}  // namespace verisub::rewriter
