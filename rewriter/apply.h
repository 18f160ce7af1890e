// Applying a match: builds a new graph (the input graph is never edited) with the rule's target
// in place of the matched source, or says why the rewrite is rejected.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "rewriter/graph_cost.h"
#include "rewriter/matcher.h"
#include "rewriter/rule_set.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

struct ApplyOptions {
  // Target nodes computed from weights only (e.g. the concatenated kernels of merged
  // convolutions) cost nothing: FinalizeGraph folds them into weights. Off, they are priced.
  bool fold_constants = true;
  // Rejects a rewrite that leaves more convolutions and matmuls reading a computed weight (their
  // second operand not computed from weights only) than it removes: for a model written for
  // another engine, which prepares constant weights at load (ONNX Runtime's NCHWc convolutions
  // reorder them once, its GEMMs prepack them) and runs its own kernels, which our measured
  // costs do not price. The squeeze-excite gate folded into the next 1x1 convolution's weight
  // runs EfficientNet-B0 1.06x faster in verisub-run, and EfficientNet-v2-S's written model at
  // 0.97x in ONNX Runtime (its broadcast Mul of the weight and the Reshapes around the scale
  // cost 0.8 ms more than the feature-map Mul saved).
  // Activation-by-activation products (attention) match on both sides and stay rewritable.
  bool keep_weights_constant = false;
};

enum class RejectReason {
  kNone,
  kTypeError,       // a target node's shape rule fails on the bound input types
  kShapeMismatch,   // a target output's shape or element type differs from the source output's
  kCycle,           // the rewritten graph has a cycle (TASO Fig. 6)
  kDownstream,      // a consumer's shape rule fails or changes after the rewrite (split trees)
  kCost,            // the cost model cannot price a target node
  kCostLimit,       // the result would cost more than the caller's limit (checked before building)
  kComputedWeight,  // ApplyOptions::keep_weights_constant: a weight would become computed
};
inline constexpr int kNumRejectReasons = 8;
const char* RejectReasonName(RejectReason r);

struct ApplyResult {
  RejectReason rejected = RejectReason::kNone;
  std::string detail;         // why, when rejected
  runtime::Graph graph;       // the rewritten graph, when not rejected
  double cost_delta = 0;      // cost(graph) - cost(input graph)
  int weight_only_nodes = 0;  // target nodes computed from weights only (folded at the end)
};

// A rewrite worked out without building the graph: the target nodes (new values numbered from
// the input graph's num_values(), in creation order), the uses to redirect, the nodes left dead
// and the exact cost change. Cheap enough to compute for every match of a search.
struct RewritePlan {
  struct NewNode {
    specs::OpKind op = specs::OpKind::kNumOps;
    specs::Params params;
    // Value ids; new values count from the input graph's num_values().
    std::array<int, specs::kMaxOpInputs> inputs{};
    int num_inputs = 0;
    int first_output = 0;  // index of its first output in new_types
    int num_outputs = 0;
  };
  RejectReason rejected = RejectReason::kNone;
  std::string detail;
  // Exact, except under a limit (RewritePlanner::Plan's max_cost_delta): a plan rejected for its
  // cost (kCostLimit) may hold lower bounds of the costs of new nodes never priced before
  // (CostModel::LowerBoundUs), which were enough to reject it.
  double cost_delta = 0;
  int weight_only_nodes = 0;
  std::vector<NewNode> new_nodes;
  // Per new value (id = input num_values() + position): type, element type, and whether it is
  // folded into a weight when the search ends.
  std::vector<specs::TensorType> new_types;
  std::vector<int32_t> new_elem_types;
  std::vector<char> new_weight_only;
  std::vector<std::pair<int, int>> redirect;  // (source output, replacement), distinct sources
  std::vector<int> retyped;                   // replacements whose split trees differ
  std::vector<int> removed;                   // input node indices: matched or left dead

  void Clear();
};

// Plans rewrites of matches on one graph, reusing its buffers from plan to plan (a search plans
// every match of every graph it expands). `index` must describe `g`; `node_costs`, when given,
// holds cost->NodeCosts(g).
class RewritePlanner {
 public:
  RewritePlanner(const runtime::Graph& g, const GraphIndex& index, const RuleSet& rules,
                 CostEvaluator* cost, const ApplyOptions& options = {},
                 const std::vector<double>* node_costs = nullptr)
      : g_(g),
        index_(index),
        rules_(rules),
        cost_(cost),
        options_(options),
        node_costs_(node_costs) {}

  // Plans `match`; rejects with kCostLimit when the cost change is at least `max_cost_delta`,
  // without pricing new nodes whose lower bounds (CostModel::LowerBoundUs) already put it there.
  // The cycle check and the re-inference of consumers need the built graph and happen in
  // BuildRewrite. The plan stays valid until the next call.
  const RewritePlan& Plan(const Match& match, double max_cost_delta = 1e300);

 private:
  bool PlanTargets(const Match& match);
  bool PlanOutputs();
  bool PlanRemovals(const Match& match);
  // Prices the new nodes PlanTargets counted at their lower bounds; false when one cannot be.
  bool PriceUnpriced();
  void Reject(RejectReason r, std::string detail);
  // Convolutions and matmuls reading a computed weight after the plan, minus before.
  int ComputedWeightsAdded() const;
  int& UsesAfter(int v);

  const runtime::Graph& g_;
  const GraphIndex& index_;
  const RuleSet& rules_;
  CostEvaluator* cost_;
  const ApplyOptions options_;
  const std::vector<double>* node_costs_;
  RewritePlan plan_;
  // Scratch of one plan: source outputs, target node outputs, sparse use counts after it.
  std::vector<int> old_out_;
  std::vector<std::array<int, specs::kMaxOpOutputs>> dst_out_;
  std::vector<std::pair<int, int>> uses_;
  const ruledb::Rule* rule_ = nullptr;
  // New nodes counted at their lower bounds until priced (index in plan_.new_nodes).
  struct Unpriced {
    int node;
    uint32_t weight_inputs;
    double bound;
  };
  std::vector<Unpriced> unpriced_;
};

// Builds the graph of an accepted plan of `match` on `g` (the input graph is never edited).
ApplyResult BuildRewrite(const runtime::Graph& g, const GraphIndex& index, const Match& match,
                         const RewritePlan& plan);

// RewritePlanner::Plan, then BuildRewrite. The result is topologically ordered and free of dead
// nodes; new values and nodes get names starting with "verisub_rw" (made unique by FinalizeGraph).
// An enlarge target node that would not change its kernel's size is the identity and is not
// created.
ApplyResult ApplyMatch(const runtime::Graph& g, const GraphIndex& index, const RuleSet& rules,
                       const Match& match, CostEvaluator* cost, const ApplyOptions& options = {},
                       double max_cost_delta = 1e300);

// Folds weight-only nodes (runtime::FoldConstants), drops unused values (renumbering) and gives
// every value a unique name: what a search result needs before export.
Status FinalizeGraph(runtime::Graph* g);

}  // namespace verisub::rewriter
