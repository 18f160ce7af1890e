// GraphBuilder implementation: names, initializers and nodes of an ONNX model under construction.
#include "runtime/models/graph_builder.h"

#include <bit>
#include <cctype>
#include <cstring>
#include <utility>

#include "runtime/models/models.h"
#include "base/status.h"

namespace verisub::runtime::models {
namespace {

// Raw tensor data in ONNX is little-endian; copying host floats is only correct on such hosts.
static_assert(std::endian::native == std::endian::little, "raw_data assumes a little-endian host");

void SetFloatShape(onnx::ValueInfoProto* info, const std::string& name,
                   const std::vector<int64_t>& dims) {
  info->set_name(name);
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

}  // namespace

onnx::AttributeProto IntAttr(std::string_view name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(std::string(name));
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

onnx::AttributeProto IntsAttr(std::string_view name, std::vector<int64_t> values) {
  onnx::AttributeProto a;
  a.set_name(std::string(name));
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}

onnx::AttributeProto FloatAttr(std::string_view name, float value) {
  onnx::AttributeProto a;
  a.set_name(std::string(name));
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}

GraphBuilder::GraphBuilder(std::string_view model_name, uint64_t seed) : rng_(seed) {
  // IR 8, the version paired with opset 17 (pinned, not onnx::IR_VERSION, which moves with
  // libonnx).
  model_.set_ir_version(8);
  model_.set_producer_name("verisub-models");
  model_.set_producer_version("1");
  onnx::OperatorSetIdProto* opset = model_.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpsetVersion);
  graph_ = model_.mutable_graph();
  graph_->set_name(std::string(model_name));
}

std::string GraphBuilder::FreshName(std::string_view hint) {
  auto it = name_counts_.find(hint);
  if (it == name_counts_.end()) it = name_counts_.emplace(std::string(hint), 0).first;
  return std::string(hint) + "_" + std::to_string(it->second++);
}

std::string GraphBuilder::AddInput(std::string_view name, const std::vector<int64_t>& dims) {
  // Graph inputs keep the caller's exact name (tools feed them by name); reserve it anyway.
  VERISUB_CHECK(name_counts_.find(name) == name_counts_.end());
  name_counts_.emplace(std::string(name), 0);
  SetFloatShape(graph_->add_input(), std::string(name), dims);
  return std::string(name);
}

void GraphBuilder::AddOutput(const std::string& value, const std::vector<int64_t>& dims) {
  SetFloatShape(graph_->add_output(), value, dims);
}

onnx::TensorProto* GraphBuilder::NewFloatInitializer(std::string_view hint,
                                                     const std::vector<int64_t>& dims,
                                                     int64_t* element_count) {
  onnx::TensorProto* t = graph_->add_initializer();
  t->set_name(FreshName(hint));
  t->set_data_type(onnx::TensorProto::FLOAT);
  *element_count = 1;
  for (int64_t d : dims) {
    VERISUB_CHECK(d > 0);
    t->add_dims(d);
    *element_count *= d;
  }
  return t;
}

std::string GraphBuilder::AddUniformWeight(std::string_view hint, const std::vector<int64_t>& dims,
                                           float low, float high) {
  int64_t n = 0;
  onnx::TensorProto* t = NewFloatInitializer(hint, dims, &n);
  std::string* raw = t->mutable_raw_data();
  raw->resize(static_cast<size_t>(n) * sizeof(float));
  char* out = raw->data();
  // The top 24 bits of each draw give an exact float in [0, 1); std::uniform_real_distribution is
  // avoided because its algorithm differs between standard libraries, and the bytes must not.
  const float span = high - low;
  for (int64_t i = 0; i < n; ++i) {
    const float unit = static_cast<float>(rng_() >> 40) * (1.0f / 16777216.0f);
    const float v = low + span * unit;
    std::memcpy(out + i * sizeof(float), &v, sizeof(float));
  }
  return t->name();
}

std::string GraphBuilder::AddFilledWeight(std::string_view hint, const std::vector<int64_t>& dims,
                                          float value) {
  int64_t n = 0;
  onnx::TensorProto* t = NewFloatInitializer(hint, dims, &n);
  std::string* raw = t->mutable_raw_data();
  raw->resize(static_cast<size_t>(n) * sizeof(float));
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(raw->data() + i * sizeof(float), &value, sizeof(float));
  }
  return t->name();
}

std::string GraphBuilder::SharedScalar(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  auto it = scalars_.find(bits);
  if (it == scalars_.end()) it = scalars_.emplace(bits, AddFilledWeight("scalar", {}, value)).first;
  return it->second;
}

std::string GraphBuilder::AddInt64s(std::string_view hint, const std::vector<int64_t>& values) {
  onnx::TensorProto* t = graph_->add_initializer();
  t->set_name(FreshName(hint));
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return t->name();
}

std::string GraphBuilder::AddNode(std::string_view op_type, const std::vector<std::string>& inputs,
                                  std::vector<onnx::AttributeProto> attributes) {
  onnx::NodeProto* node = graph_->add_node();
  std::string hint(op_type);
  for (char& c : hint) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string name = FreshName(hint);
  node->set_name(name);
  node->set_op_type(std::string(op_type));
  for (const std::string& in : inputs) node->add_input(in);
  node->add_output(name);
  for (onnx::AttributeProto& a : attributes) *node->add_attribute() = std::move(a);
  return name;
}

onnx::ModelProto GraphBuilder::Finish() && { return std::move(model_); }

}  // namespace verisub::runtime::models
