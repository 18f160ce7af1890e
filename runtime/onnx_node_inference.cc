// Per-node ONNX type and shape inference.
#include "runtime/onnx_node_inference.h"

#include <optional>
#include <unordered_map>

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime {

const onnx::OpSchema* FindOnnxSchema(const std::string& op_type, const std::string& domain,
                                     int64_t opset) {
  return onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset),
                                        domain == "ai.onnx" ? "" : domain);
}

namespace {

// The single value of an integer initializer, or nullopt.
std::optional<int64_t> ScalarData(const onnx::TensorProto* t) {
  if (!t) return std::nullopt;
  auto h = FromTensorProto(*t);
  if (!h.ok() || h->NumElements() != 1 || !IsIntegerType(h->elem_type)) return std::nullopt;
  return h->IntAt(0);
}

// STFT's output [batch, frames, bins, 2] as the operator defines it: frames = (length -
// frame_length) / frame_step + 1 (ONNX 1.12 counts them after halving the frame for onesided),
// bins = frame_length / 2 + 1 when onesided (its default, 1). Dims not known stay unset.
onnx::TypeProto StftTypes(const onnx::NodeProto& node,
                          const std::vector<const onnx::TypeProto*>& types,
                          const std::vector<const onnx::TensorProto*>& data) {
  onnx::TypeProto out;
  if (types.empty() || !types[0] || !types[0]->has_tensor_type()) return out;
  const auto& signal = types[0]->tensor_type();
  out.mutable_tensor_type()->set_elem_type(signal.elem_type());
  auto at = [&](size_t i) { return i < data.size() ? data[i] : nullptr; };
  std::optional<int64_t> frame = ScalarData(at(3)), step = ScalarData(at(1));
  if (types.size() > 2 && types[2] && types[2]->tensor_type().shape().dim_size() == 1 &&
      types[2]->tensor_type().shape().dim(0).has_dim_value())
    frame = types[2]->tensor_type().shape().dim(0).dim_value();
  int64_t onesided = 1;
  for (const auto& a : node.attribute())
    if (a.name() == "onesided") onesided = a.i();
  if (!signal.has_shape() || signal.shape().dim_size() < 2) return out;
  auto* shape = out.mutable_tensor_type()->mutable_shape();
  *shape->add_dim() = signal.shape().dim(0);
  auto* frames = shape->add_dim();
  const auto& length = signal.shape().dim(1);
  if (frame && step && *step > 0 && length.has_dim_value() && length.dim_value() >= *frame)
    frames->set_dim_value((length.dim_value() - *frame) / *step + 1);
  auto* bins = shape->add_dim();
  if (frame && *frame > 0) bins->set_dim_value(onesided ? *frame / 2 + 1 : *frame);
  shape->add_dim()->set_dim_value(2);
  return out;
}

}  // namespace

bool IsStft(const onnx::NodeProto& node) {
  return (node.domain().empty() || node.domain() == "ai.onnx") && node.op_type() == "STFT";
}

StatusOr<std::vector<onnx::TypeProto>> InferNodeTypes(
    const onnx::NodeProto& node, const onnx::OpSchema& schema,
    const std::vector<const onnx::TypeProto*>& input_types,
    const std::vector<const onnx::TensorProto*>& input_data) {
  if (IsStft(node)) return std::vector<onnx::TypeProto>{StftTypes(node, input_types, input_data)};
  // ONNX's context looks inputs up by name: give them fresh ones ("" stays omitted).
  onnx::NodeProto copy = node;
  copy.clear_input();
  std::unordered_map<std::string, onnx::TypeProto> types;  // node-based: pointers stay valid
  std::unordered_map<std::string, onnx::TypeProto*> type_ptrs;
  std::unordered_map<std::string, const onnx::TensorProto*> data;
  for (size_t i = 0; i < input_types.size(); ++i) {
    if (!input_types[i]) {
      copy.add_input("");
      continue;
    }
    std::string name = "in" + std::to_string(i);
    copy.add_input(name);
    type_ptrs[name] = &(types[name] = *input_types[i]);
    if (i < input_data.size() && input_data[i]) data[name] = input_data[i];
  }
  onnx::shape_inference::InferenceContextImpl ctx(copy, type_ptrs, data, {});
  if (schema.has_type_and_shape_inference_function()) {
    try {
      schema.GetTypeAndShapeInferenceFunction()(ctx);
    } catch (const std::exception& e) {
      return InvalidArgument(std::string("ONNX shape inference: ") + e.what());
    }
  }
  std::vector<onnx::TypeProto> out(node.output_size());
  for (int i = 0; i < node.output_size(); ++i)
    if (const onnx::TypeProto* t = ctx.getOutputType(i)) out[i] = *t;
  return out;
}

}  // namespace verisub::runtime
