// Builds small ONNX models in C++ for the runtime tests.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "onnx/onnx_pb.h"
#include "runtime/graph.h"
#include "runtime/host_tensor.h"

namespace verisub::runtime::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13);

  // Dimensions of -1 become symbolic ("N").
  ModelBuilder& Input(const std::string& name, std::vector<int64_t> dims, int32_t type = kFloat);
  // Dimensions of -1 become symbolic ("N").
  ModelBuilder& Output(const std::string& name, std::vector<int64_t> dims, int32_t type = kFloat);
  ModelBuilder& Weight(const std::string& name, const HostTensor& t);
  // A float weight with deterministic pseudo-random values in [-1, 1].
  ModelBuilder& RandomWeight(const std::string& name, std::vector<int64_t> dims, uint64_t seed);
  ModelBuilder& Int64Weight(const std::string& name, std::vector<int64_t> values);
  onnx::NodeProto& Node(const std::string& op_type, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string& name = "");

  onnx::ModelProto& model() { return model_; }
  std::string Bytes() const;

 private:
  onnx::ModelProto model_;
  int node_counter_ = 0;
};

void SetInt(onnx::NodeProto& n, const std::string& name, int64_t v);
void SetFloat(onnx::NodeProto& n, const std::string& name, float v);
void SetInts(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v);
void SetString(onnx::NodeProto& n, const std::string& name, const std::string& v);

HostTensor RandomTensor(std::vector<int64_t> dims, uint64_t seed, int32_t type = kFloat);
// One ONNX node `op` (of `opset`) over graph inputs named and valued as `in`, output "y" declared
// with `out_dims` (-1: symbolic) and `out_type`, run by the reference executor as imported (no
// mapping onto spec operators, shapes may be known only at run time); `attrs` sets attributes.
StatusOr<std::vector<HostTensor>> RunOneNode(
    const std::string& op, const std::vector<std::pair<std::string, HostTensor>>& in,
    std::vector<int64_t> out_dims, const std::function<void(onnx::NodeProto&)>& attrs,
    int32_t out_type = kFloat, int64_t opset = 16);
// The same for a node of several outputs ("y", "y1", "y2"...), each declared with its dims (-1:
// symbolic) and type.
struct NodeOutput {
  std::vector<int64_t> dims;
  int32_t type = kFloat;
};
StatusOr<std::vector<HostTensor>> RunOneNode(
    const std::string& op, const std::vector<std::pair<std::string, HostTensor>>& in,
    const std::vector<NodeOutput>& outs, const std::function<void(onnx::NodeProto&)>& attrs,
    int64_t opset);
// Random inputs for every graph input (static shapes required).
std::vector<HostTensor> RandomInputs(const Graph& g, uint64_t seed);
// Largest |a - b| over two equally shaped float tensor lists; +inf when shapes differ.
double MaxAbsDiff(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b);
// Number of nodes of a kind ("conv2d", "onnx:Softmax").
int CountKind(const Graph& g, const std::string& kind);

// A small CNN (Conv+bias, BatchNorm, Relu, MaxPool, residual Add, GlobalAveragePool, Flatten,
// Gemm with transB, Softmax), the shape of the benchmark image models.
std::string SmallCnnBytes();
// A small transformer block (MatMul+bias, Reshape/Transpose heads, Softmax, Div, Erf-GELU,
// LayerNormalization, a Shape-Gather-Concat-Reshape chain that constant folding removes).
std::string SmallTransformerBytes();

}  // namespace verisub::runtime::testing
