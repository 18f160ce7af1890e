// GraphBuilder: appends nodes, inputs and seeded random initializers to an ONNX model, so that
// each benchmark-model file only says which layers it stacks.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace verisub::runtime::models {

onnx::AttributeProto IntAttr(std::string_view name, int64_t value);
onnx::AttributeProto IntsAttr(std::string_view name, std::vector<int64_t> values);
onnx::AttributeProto FloatAttr(std::string_view name, float value);

class GraphBuilder {
 public:
  // `seed` fixes every random initializer: the same calls give byte-identical models.
  GraphBuilder(std::string_view model_name, uint64_t seed);

  // Declares a float32 graph input and returns its name.
  std::string AddInput(std::string_view name, const std::vector<int64_t>& dims);
  // Declares `value` a float32 graph output with the given (fully static) shape.
  void AddOutput(const std::string& value, const std::vector<int64_t>& dims);

  // Float32 initializer drawn uniformly from [low, high).
  std::string AddUniformWeight(std::string_view hint, const std::vector<int64_t>& dims, float low,
                               float high);
  // Float32 initializer with every element `value` (dims may be empty for a scalar).
  std::string AddFilledWeight(std::string_view hint, const std::vector<int64_t>& dims, float value);
  // A 0-d float32 initializer holding `value`, created once per value and then shared, as
  // exporters share constants such as Clip bounds or the GELU 0.5.
  std::string SharedScalar(float value);
  // 1-D int64 initializer, e.g. the target shape of a Reshape.
  std::string AddInt64s(std::string_view hint, const std::vector<int64_t>& values);

  // Appends a node with one output and returns the output's name.
  std::string AddNode(std::string_view op_type, const std::vector<std::string>& inputs,
                      std::vector<onnx::AttributeProto> attributes = {});

  // Hands over the finished model; the builder must not be used afterwards.
  onnx::ModelProto Finish() &&;

 private:
  // A name not used before in this graph: `<hint>_<n>`, counted per hint so names read well.
  std::string FreshName(std::string_view hint);
  onnx::TensorProto* NewFloatInitializer(std::string_view hint, const std::vector<int64_t>& dims,
                                         int64_t* element_count);

  onnx::ModelProto model_;
  onnx::GraphProto* graph_;
  std::mt19937_64 rng_;
  std::map<std::string, int64_t, std::less<>> name_counts_;
  std::map<uint32_t, std::string> scalars_;  // keyed by the float's bit pattern
};

}  // namespace verisub::runtime::models
