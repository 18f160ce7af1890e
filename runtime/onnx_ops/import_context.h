// What an operator's ONNX importer works with: the node being mapped (inputs already rewired
// through removed Identity nodes), its attributes, and the replacement being built. Spec nodes
// are type-checked as they are added; the importer (runtime/op_mapping.cc) accepts the
// replacement only if the final outputs match the shapes ONNX inferred.
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/graph.h"
#include "runtime/onnx_kernels.h"
#include "specs/op_spec.h"
#include "specs/params.h"
#include "specs/tensor.h"

namespace verisub::runtime {

// Float or double with a static spec shape.
bool FloatStatic(const Value& v);
// The leaf spec type of a value with a static, positive shape of rank <= kMaxRank.
std::optional<specs::TensorType> LeafTypeOf(const Value& v);
bool AllOnes(const std::vector<int64_t>& v);
// Window geometry of a Conv or pool node, decided per spatial dimension: "same" when both pads
// are (k-1)/2 for an odd k, "valid" when both are zero; nullopt for anything else.
std::optional<specs::Padding> WindowPadding(const KernelContext& attrs,
                                            const std::vector<int64_t>& in_hw,
                                            const std::vector<int64_t>& k,
                                            const std::vector<int64_t>& strides);
// The pads themselves (every axis' begin, then every axis' end) from `pads` or `auto_pad`;
// nullopt for corrupt attributes.
std::optional<std::vector<int64_t>> WindowPads(const KernelContext& attrs,
                                               const std::vector<int64_t>& in_hw,
                                               const std::vector<int64_t>& k,
                                               const std::vector<int64_t>& strides);
specs::Params Defaults(specs::OpKind kind);

class ImportContext {
 public:
  ImportContext(Graph* g, const Node& node, const KernelContext& attrs)
      : g_(g), node_(node), attrs_(attrs) {}

  const Node& node() const { return node_; }
  const KernelContext& attrs() const { return attrs_; }
  const Graph& graph() const { return *g_; }

  // Inputs and outputs of the node being mapped.
  const Value& In(size_t k) const { return g_->value(node_.inputs[k]); }
  int InId(size_t k) const { return node_.inputs[k]; }
  bool Present(size_t k) const { return k < node_.inputs.size() && node_.inputs[k] != kNoValue; }
  // The first `count` inputs are present, float and static.
  bool InputsFloatStatic(size_t count) const;
  // The node's only output (its first), or kNoValue when it has several or none.
  int SingleOutput() const;
  int Out(size_t k) const { return node_.outputs[k]; }
  const Value& OutValue(size_t k) const { return g_->value(node_.outputs[k]); }

  bool failed() const { return failed_; }
  void Fail() { failed_ = true; }

  int NewValue(int32_t elem_type);
  int NewWeight(HostTensor t);
  // Adds a spec node writing `outputs` (new values or the original node's outputs).
  void Add(specs::OpKind kind, const specs::Params& p, std::vector<int> inputs,
           std::vector<int> outputs);
  // x + b along `axis` (bias_add) into `out`.
  void AddBias(int x, int b, int axis, int out);
  // x * s along `axis` (channel_scale) into `out`.
  void AddChannelScale(int x, int s, int axis, int out);
  // x's elements [start, end) along `axis` (slice) into `out`.
  void AddSlice(int x, int64_t axis, int64_t start, int64_t end, int out);
  // x (an image) padded by `pads` (top, left, bottom, right) with zeros or its edge (pad) into
  // `out` (kNoValue: a new value): the value written, or kNoValue where a pad is negative (a
  // crop).
  int AddPad(int x, const std::vector<int64_t>& pads, bool edge, int out = kNoValue);
  // x with `dims` (reshape) into `out`.
  void AddReshape(int x, const std::vector<int64_t>& dims, int out);
  // A view of value v with `dims`: the weight itself reshaped (a new small weight), or a reshape
  // node.
  int Reshaped(int v, std::vector<int64_t> dims);
  // A rank-1 view of a value with `size` elements.
  int AsVector(int v, int64_t size) { return Reshaped(v, {size}); }

  // On success, sets the original outputs' spec types and returns the new nodes.
  std::optional<std::vector<std::shared_ptr<const Node>>> Commit();

 private:
  bool IsOriginalOutput(int v) const;

  Graph* g_;
  const Node& node_;
  const KernelContext& attrs_;
  bool failed_ = false;
  std::vector<std::shared_ptr<const Node>> nodes_;
  std::vector<std::pair<int, specs::TensorType>> pending_types_;
};

}  // namespace verisub::runtime
