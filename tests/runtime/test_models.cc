// Small ONNX models built in C++ for the runtime tests.
#include "tests/runtime/test_models.h"

#include <cmath>
#include <limits>
#include <random>

#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime::testing {

ModelBuilder::ModelBuilder(int64_t opset) {
  model_.set_ir_version(8);
  model_.set_producer_name("verisub-tests");
  auto* op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

namespace {

void SetType(onnx::ValueInfoProto* info, const std::string& name, const std::vector<int64_t>& dims,
             int32_t type) {
  info->set_name(name);
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) {
      dim->set_dim_value(d);
    } else {
      dim->set_dim_param("N");
    }
  }
}

}  // namespace

ModelBuilder& ModelBuilder::Input(const std::string& name, std::vector<int64_t> dims,
                                  int32_t type) {
  SetType(model_.mutable_graph()->add_input(), name, dims, type);
  return *this;
}

ModelBuilder& ModelBuilder::Output(const std::string& name, std::vector<int64_t> dims,
                                   int32_t type) {
  SetType(model_.mutable_graph()->add_output(), name, dims, type);
  return *this;
}

ModelBuilder& ModelBuilder::Weight(const std::string& name, const HostTensor& t) {
  ToTensorProto(t, name, model_.mutable_graph()->add_initializer());
  return *this;
}

ModelBuilder& ModelBuilder::RandomWeight(const std::string& name, std::vector<int64_t> dims,
                                         uint64_t seed) {
  return Weight(name, RandomTensor(std::move(dims), seed));
}

ModelBuilder& ModelBuilder::Int64Weight(const std::string& name, std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Weight(name, HostTensor::FromInts(kInt64, {n}, values));
}

onnx::NodeProto& ModelBuilder::Node(const std::string& op_type, std::vector<std::string> inputs,
                                    std::vector<std::string> outputs, const std::string& name) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_name(name.empty() ? op_type + "_" + std::to_string(node_counter_++) : name);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return *n;
}

std::string ModelBuilder::Bytes() const { return model_.SerializeAsString(); }

void SetInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void SetFloat(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void SetInts(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void SetString(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

HostTensor RandomTensor(std::vector<int64_t> dims, uint64_t seed, int32_t type) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(CountElements(dims));
  for (double& x : v) x = dist(rng);
  return HostTensor::FromDoubles(type, std::move(dims), v);
}

StatusOr<std::vector<HostTensor>> RunOneNode(
    const std::string& op, const std::vector<std::pair<std::string, HostTensor>>& in,
    std::vector<int64_t> out_dims, const std::function<void(onnx::NodeProto&)>& attrs,
    int32_t out_type, int64_t opset) {
  return RunOneNode(op, in, {{std::move(out_dims), out_type}}, attrs, opset);
}

StatusOr<std::vector<HostTensor>> RunOneNode(
    const std::string& op, const std::vector<std::pair<std::string, HostTensor>>& in,
    const std::vector<NodeOutput>& outs, const std::function<void(onnx::NodeProto&)>& attrs,
    int64_t opset) {
  ModelBuilder b(opset);
  std::vector<std::string> names, out_names;
  std::vector<HostTensor> values;
  for (const auto& [name, t] : in) {
    b.Input(name, t.dims, t.elem_type);
    names.push_back(name);
    values.push_back(t);
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    out_names.push_back(k == 0 ? "y" : "y" + std::to_string(k));
    b.Output(out_names.back(), outs[k].dims, outs[k].type);
  }
  onnx::NodeProto& n = b.Node(op, names, out_names, "node");
  if (attrs) attrs(n);
  ImportOptions options;
  options.map_to_spec_ops = false;
  options.require_static_shapes = false;
  auto g = ImportOnnxBytes(b.Bytes(), op, options);
  if (!g.ok()) return g.status();
  return Execute(*g, values);
}

std::vector<HostTensor> RandomInputs(const Graph& g, uint64_t seed) {
  std::vector<HostTensor> in;
  for (int v : g.inputs())
    in.push_back(RandomTensor(g.value(v).dims, seed++, g.value(v).elem_type));
  return in;
}

double MaxAbsDiff(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double m = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].dims != b[k].dims) return std::numeric_limits<double>::infinity();
    std::vector<double> x = a[k].ToDoubles(), y = b[k].ToDoubles();
    for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  }
  return m;
}

int CountKind(const Graph& g, const std::string& kind) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->KindName() == kind;
  return n;
}

std::string SmallCnnBytes() {
  ModelBuilder b(13);
  b.Input("image", {2, 3, 8, 8}).Output("probs", {2, 5});
  b.RandomWeight("w1", {8, 3, 3, 3}, 1).RandomWeight("b1", {8}, 2);
  b.RandomWeight("bn_scale", {8}, 3).RandomWeight("bn_bias", {8}, 4);
  b.RandomWeight("bn_mean", {8}, 5);
  b.Weight("bn_var", HostTensor::FromDoubles(kFloat, {8}, std::vector<double>(8, 0.7)));
  b.RandomWeight("w2", {8, 8, 3, 3}, 6)
      .RandomWeight("fc_w", {5, 8}, 7)
      .RandomWeight("fc_b", {5}, 8);
  auto& c1 = b.Node("Conv", {"image", "w1", "b1"}, {"c1"}, "conv1");
  SetInts(c1, "pads", {1, 1, 1, 1});
  SetInts(c1, "kernel_shape", {3, 3});
  b.Node("BatchNormalization", {"c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"bn1"}, "bn1");
  b.Node("Relu", {"bn1"}, {"r1"}, "relu1");
  auto& mp = b.Node("MaxPool", {"r1"}, {"p1"}, "pool1");
  SetInts(mp, "kernel_shape", {3, 3});
  SetInts(mp, "pads", {1, 1, 1, 1});
  SetInts(mp, "strides", {2, 2});
  auto& c2 = b.Node("Conv", {"p1", "w2"}, {"c2"}, "conv2");
  SetInts(c2, "pads", {1, 1, 1, 1});
  b.Node("Add", {"c2", "p1"}, {"res"}, "residual");
  b.Node("Relu", {"res"}, {"r2"}, "relu2");
  b.Node("GlobalAveragePool", {"r2"}, {"gap"}, "gap");
  b.Node("Flatten", {"gap"}, {"flat"}, "flatten");
  auto& fc = b.Node("Gemm", {"flat", "fc_w", "fc_b"}, {"logits"}, "fc");
  SetInt(fc, "transB", 1);
  auto& sm = b.Node("Softmax", {"logits"}, {"probs"}, "softmax");
  SetInt(sm, "axis", 1);
  return b.Bytes();
}

std::string SmallTransformerBytes() {
  const int64_t s = 4, h = 8, heads = 2, d = h / heads;
  ModelBuilder b(17);
  b.Input("x", {1, s, h}).Output("y", {1, s, h});
  b.RandomWeight("wqkv", {h, 3 * h}, 11).RandomWeight("bqkv", {3 * h}, 12);
  b.RandomWeight("wo", {h, h}, 13).RandomWeight("bo", {h}, 14);
  b.RandomWeight("ln_s", {h}, 15).RandomWeight("ln_b", {h}, 16);
  b.Int64Weight("idx0", {0}).Int64Weight("idx1", {1}).Int64Weight("head_tail", {heads, d});
  b.Weight("sqrt_d", HostTensor::FromDoubles(kFloat, {}, {std::sqrt(double(d))}));
  b.Weight("half", HostTensor::FromDoubles(kFloat, {}, {0.5}));
  b.Weight("one", HostTensor::FromDoubles(kFloat, {}, {1.0}));
  b.Weight("rsqrt2", HostTensor::FromDoubles(kFloat, {}, {1.0 / std::sqrt(2.0)}));
  b.Node("MatMul", {"x", "wqkv"}, {"qkv0"}, "qkv_mm");
  b.Node("Add", {"qkv0", "bqkv"}, {"qkv"}, "qkv_bias");
  auto& sp = b.Node("Split", {"qkv"}, {"q", "k", "v"}, "split_qkv");
  SetInt(sp, "axis", 2);
  // Head shape from Shape/Gather/Concat: folds into a constant at load.
  b.Node("Shape", {"q"}, {"qshape"}, "shape");
  auto& g0 = b.Node("Gather", {"qshape", "idx0"}, {"batch"}, "gather_b");
  SetInt(g0, "axis", 0);
  auto& g1 = b.Node("Gather", {"qshape", "idx1"}, {"seq"}, "gather_s");
  SetInt(g1, "axis", 0);
  auto& cc = b.Node("Concat", {"batch", "seq", "head_tail"}, {"hshape"}, "head_shape");
  SetInt(cc, "axis", 0);
  for (const char* t : {"q", "k", "v"}) {
    std::string n = t;
    b.Node("Reshape", {n, "hshape"}, {n + "4"}, "reshape_" + n);
    auto& tr = b.Node("Transpose", {n + "4"}, {n + "h"}, "transpose_" + n);
    SetInts(tr, "perm",
            n == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
  }
  b.Node("MatMul", {"qh", "kh"}, {"scores0"}, "scores");
  b.Node("Div", {"scores0", "sqrt_d"}, {"scores"}, "scale");
  auto& sm = b.Node("Softmax", {"scores"}, {"attn"}, "softmax");
  SetInt(sm, "axis", -1);
  b.Node("MatMul", {"attn", "vh"}, {"ctx4"}, "context");
  auto& tc = b.Node("Transpose", {"ctx4"}, {"ctx_t"}, "transpose_ctx");
  SetInts(tc, "perm", {0, 2, 1, 3});
  b.Int64Weight("ctx_shape", {1, s, h});
  b.Node("Reshape", {"ctx_t", "ctx_shape"}, {"ctx"}, "merge_heads");
  b.Node("MatMul", {"ctx", "wo"}, {"o0"}, "out_mm");
  b.Node("Add", {"o0", "bo"}, {"o"}, "out_bias");
  // GELU with Erf.
  b.Node("Mul", {"o", "rsqrt2"}, {"g0"}, "gelu_scale");
  b.Node("Erf", {"g0"}, {"g1"}, "gelu_erf");
  b.Node("Add", {"g1", "one"}, {"g2"}, "gelu_add");
  b.Node("Mul", {"o", "g2"}, {"g3"}, "gelu_mul");
  b.Node("Mul", {"g3", "half"}, {"g4"}, "gelu_half");
  b.Node("Add", {"g4", "x"}, {"res"}, "residual");
  auto& ln = b.Node("LayerNormalization", {"res", "ln_s", "ln_b"}, {"y"}, "layernorm");
  SetInt(ln, "axis", -1);
  SetFloat(ln, "epsilon", 1e-5f);
  return b.Bytes();
}

}  // namespace verisub::runtime::testing
