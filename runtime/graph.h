// The graph IR of a whole model: values (tensors) and nodes (spec operators or opaque ONNX
// operators), weights shared between graph variants (hashing: runtime/graph_hash.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "runtime/host_tensor.h"
#include "specs/layout.h"
#include "specs/op_spec.h"
#include "specs/params.h"
#include "specs/tensor.h"

namespace onnx {
class NodeProto;
}

namespace verisub::runtime {

inline constexpr int kNoValue = -1;  // an omitted optional input

// A tensor of the graph. Values are immutable once shared; the graph copies a value on write.
struct Value {
  std::string name;
  int32_t elem_type = kFloat;
  // Dimensions, -1 where unknown; meaningful only when rank_known.
  std::vector<int64_t> dims;
  bool rank_known = false;
  // Shape and split trees for the spec operators; present when the shape is static, of rank at
  // most specs::kMaxRank, with positive dimensions.
  std::optional<specs::TensorType> spec_type;
  // Weight data (an initializer or a folded constant); shared, never copied.
  std::shared_ptr<const HostTensor> constant;
  // Graph inputs only: the initializer of the same name, which ONNX (IR >= 4) makes the input's
  // default value, overridable by the caller. Kept for export; never folded.
  std::shared_ptr<const HostTensor> input_default;
  // The layout the value is stored in when the graph runs (the layout pass chooses it, a backend
  // honours it); plain unless assigned. Not part of the model's meaning: ONNX export ignores it.
  specs::Layout layout = specs::Layout::kPlain;

  bool StaticShape() const;
  // Whether a tensor of shape `d` can be this value: the rank is unknown, or it is the same and
  // every dimension the value fixes (>= 0) is equal.
  bool Accepts(const std::vector<int64_t>& d) const;
};

// An operator instance: a spec operator with its parameters, or an opaque ONNX operator kept
// verbatim (type, domain and attributes in `onnx`; its input and output names there are stale,
// `inputs` and `outputs` are authoritative).
struct Node {
  std::string name;
  std::optional<specs::OpKind> op;  // nullopt: opaque
  specs::Params params;
  std::string op_type;  // opaque only
  std::string domain;   // opaque only; "" is the default ONNX domain
  std::shared_ptr<const onnx::NodeProto> onnx;
  std::vector<int> inputs;   // value ids, kNoValue for omitted optional inputs
  std::vector<int> outputs;  // value ids

  bool opaque() const { return !op.has_value(); }
  // "conv2d" or "onnx:Softmax" (domain-qualified when not the default domain).
  std::string KindName() const;
};

// A model graph. Copying a Graph copies vectors of shared pointers only, so a search can derive
// many variants that differ in a few nodes. Nodes are kept in topological order.
class Graph {
 public:
  int AddValue(Value v);
  // A constant value holding `t`, named UniqueName(base), its type and shape `t`'s.
  int AddConstant(const std::string& base, HostTensor t);
  int AddNode(Node n);

  int num_values() const { return static_cast<int>(values_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Value& value(int id) const { return *values_[id]; }
  const Node& node(int i) const { return *nodes_[i]; }
  const std::shared_ptr<const Node>& node_ptr(int i) const { return nodes_[i]; }
  // Copy-on-write access: the value or node is cloned first, so other graphs sharing it are
  // unaffected.
  Value& mutable_value(int id);
  Node& mutable_node(int i);
  void SetNode(int i, Node n);
  // Replaces the node list (e.g. after removing or reordering nodes); must stay topological.
  void SetNodes(std::vector<std::shared_ptr<const Node>> nodes) { nodes_ = std::move(nodes); }
  const std::vector<std::shared_ptr<const Node>>& nodes() const { return nodes_; }

  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  std::vector<int>& mutable_inputs() { return inputs_; }
  std::vector<int>& mutable_outputs() { return outputs_; }

  // Opset imports of the source model (domain, version), kept for export.
  std::vector<std::pair<std::string, int64_t>>& mutable_opsets() { return opsets_; }
  const std::vector<std::pair<std::string, int64_t>>& opsets() const { return opsets_; }
  int64_t DefaultOpset() const;
  // The opset imported for `domain` ("" and "ai.onnx" are the default domain), 0 if none.
  int64_t OpsetFor(const std::string& domain) const;
  std::string name;

  // Replaces every use of value `from` (node inputs and graph outputs) by `to`.
  void ReplaceUses(int from, int to);
  // Producer node index of every value (-1 for graph inputs, weights and unused values).
  std::vector<int> Producers() const;
  // Number of node inputs and graph outputs reading every value.
  std::vector<int> UseCounts() const;
  // Per value: the node reading it when that node is its only use (it is not a graph output and
  // no other input reads it), else -1.
  std::vector<int> SoleReaders() const;
  // Drops nodes whose outputs are all unused (repeatedly) and values nothing refers to,
  // renumbering value ids.
  void RemoveDeadCode();
  // A fresh value name not used in the graph, derived from `base`.
  std::string UniqueName(const std::string& base);

 private:
  std::vector<std::shared_ptr<const Value>> values_;
  std::vector<std::shared_ptr<const Node>> nodes_;
  std::vector<int> inputs_, outputs_;
  std::vector<std::pair<std::string, int64_t>> opsets_;
  int64_t name_counter_ = 0;
};

// Invariants: ids in range, every node input defined before use (topological order, hence
// acyclic), every value produced at most once, graph inputs are not produced by nodes, spec
// nodes have their operator's arity, graph outputs defined. The error names the node.
Status CheckGraph(const Graph& g);

// The layout of every value, by id (PrepareOptions::layouts of a graph whose layouts are
// assigned).
std::vector<specs::Layout> ValueLayouts(const Graph& g);

// Recomputes every value's spec_type: spec shape rules for spec nodes (their inferred shapes
// must match the recorded dims), leaf split trees for graph inputs, weights and opaque outputs.
Status InferSpecTypes(Graph* g);

// Per-operator node counts ("conv2d" -> 53, "onnx:Softmax" -> 12), sorted by name.
std::vector<std::pair<std::string, int>> OpCounts(const Graph& g);
int CountOpaque(const Graph& g);

}  // namespace verisub::runtime
