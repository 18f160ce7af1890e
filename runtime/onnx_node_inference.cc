// Per-node ONNX type and shape inference.
#include "runtime/onnx_node_inference.h"

#include <unordered_map>

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace verisub::runtime {

const onnx::OpSchema* FindOnnxSchema(const std::string& op_type, const std::string& domain,
                                     int64_t opset) {
  return onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset),
                                        domain == "ai.onnx" ? "" : domain);
}

StatusOr<std::vector<onnx::TypeProto>> InferNodeTypes(
    const onnx::NodeProto& node, const onnx::OpSchema& schema,
    const std::vector<const onnx::TypeProto*>& input_types,
    const std::vector<const onnx::TensorProto*>& input_data) {
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
