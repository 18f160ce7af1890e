// What an operator's ONNX exporter works with: the graph being written, fresh names, and helpers
// that emit nodes, attributes and initializers into the GraphProto.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"
#include "runtime/host_tensor.h"

namespace onnx {
class GraphProto;
class NodeProto;
}  // namespace onnx

namespace verisub::runtime {

// A spec pad a window writes as its own pads (ONNX's Conv, MaxPool and AveragePool take
// asymmetric ones; ONNX Runtime would run a Pad node of its own before a max pool): the pad's
// input and its pads (top, left, bottom, right).
struct FoldedPad {
  int input;
  std::vector<int64_t> pads;
};

class ExportContext {
 public:
  ExportContext(const Graph& g, onnx::GraphProto* gp, int64_t opset);

  const Graph& graph() const { return g_; }
  int64_t opset() const { return opset_; }
  const Value& value(int v) const { return g_.value(v); }
  // The name of value v ("" for an omitted input).
  std::string Name(int v) const { return v == kNoValue ? "" : g_.value(v).name; }
  // Names of the node's inputs.
  std::vector<std::string> InputNames(const Node& n) const;
  // A name used nowhere in the graph or the output, derived from `base`.
  std::string Fresh(const std::string& base);

  // Adds an initializer under a fresh name derived from `base` and returns the name.
  std::string AddInitializer(const HostTensor& t, const std::string& base);
  // Adds an initializer named exactly `name`.
  void AddNamedInitializer(const HostTensor& t, const std::string& name);
  std::string Int64s(const std::vector<int64_t>& v, const std::string& base);

  onnx::NodeProto* Emit(const std::string& op_type, const std::string& name,
                        std::vector<std::string> inputs, std::vector<std::string> outputs);
  // Emits `op_type` writing the node's first output, followed by the activation when `act` (a
  // specs::Activation) is not none.
  onnx::NodeProto* EmitWithActivation(const std::string& op_type, const Node& n,
                                      std::vector<std::string> inputs, int64_t act);

  // The pad `window` (a conv2d or pool of valid padding) writes as its own: where it reads the
  // output of a spec pad that nothing else reads and that is no graph output, of the mode the
  // window takes (zeros for a convolution or an average, edge copies for a max).
  std::optional<FoldedPad> PadFoldedInto(const Node& window) const;
  // Whether pad node `pad` is so folded into its reader (and written by it, not on its own).
  bool PadFoldsIntoItsWindow(const Node& pad) const;

  static void AttrInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v);
  static void AttrInt(onnx::NodeProto* n, const std::string& name, int64_t v);
  static void AttrFloat(onnx::NodeProto* n, const std::string& name, float v);
  static void AttrString(onnx::NodeProto* n, const std::string& name, const std::string& v);

 private:
  const Graph& g_;
  // The graph's producers and sole readers, found once, when a window first asks (PadFoldedInto).
  void IndexReaders() const;
  mutable std::vector<int> producer_, sole_reader_;
  onnx::GraphProto* gp_;
  int64_t opset_;
  std::unordered_set<std::string> names_;
  int64_t counter_ = 0;
};

// Input k of n, a vector, viewed so that ONNX broadcasting aligns it with dimension `axis` of
// input 0 (bias_add, channel_scale): [C] followed by one 1 per later dimension. A constant is
// written as a reshaped initializer, anything else through a Reshape node.
std::string VectorAlongAxis(ExportContext& ctx, const Node& n, size_t k, int64_t axis);

// Conv [+ activation] for conv2d and conv2d_bias (whose third input is Conv's bias).
Status ExportConvNode(ExportContext& ctx, const Node& n);

// reduce_sum and reduce_max (one axis, kept): `op_type` with keepdims=1, the axis an int64 input
// from opset `axes_input_from` and an attribute before.
Status ExportOneAxisReduce(ExportContext& ctx, const Node& n, const std::string& op_type,
                           int64_t axes_input_from);

// The exporter of every constant operator: computed from its static shape, written as a weight.
Status ExportConstant(ExportContext& ctx, const Node& n);

}  // namespace verisub::runtime
