// ONNX export of the graph IR.
#include "runtime/onnx_export.h"

#include <cstdio>
#include <unordered_set>

#include "base/file_io.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "runtime/memory_budget.h"
#include "runtime/tensor_proto.h"
#include "specs/evaluate.h"
#include "specs/ops/batchnorm.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/concat.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/matmul.h"
#include "specs/ops/pooling.h"
#include "specs/ops/reshape.h"
#include "specs/ops/split.h"
#include "specs/ops/transpose.h"
#include "specs/semantics.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void SetValueInfo(const Value& v, onnx::ValueInfoProto* info) {
  info->set_name(v.name);
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(v.elem_type);
  if (!v.rank_known) return;
  auto* shape = tt->mutable_shape();
  for (int64_t d : v.dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

class Exporter {
 public:
  Exporter(const Graph& g, onnx::GraphProto* gp, int64_t opset) : g_(g), gp_(gp), opset_(opset) {
    for (int v = 0; v < g.num_values(); ++v) names_.insert(g.value(v).name);
  }

  Status Run() {
    for (int v : g_.inputs()) {
      SetValueInfo(g_.value(v), gp_->add_input());
      if (g_.value(v).input_default)
        ToTensorProto(*g_.value(v).input_default, g_.value(v).name, gp_->add_initializer());
    }
    std::vector<int> uses = g_.UseCounts();
    for (int v = 0; v < g_.num_values(); ++v)
      if (g_.value(v).constant && uses[v] > 0)
        ToTensorProto(*g_.value(v).constant, g_.value(v).name, gp_->add_initializer());
    for (const auto& np : g_.nodes()) VERISUB_RETURN_IF_ERROR(ExportNode(*np));
    for (int v : g_.outputs()) SetValueInfo(g_.value(v), gp_->add_output());
    return Status::Ok();
  }

 private:
  std::string Name(int v) const { return v == kNoValue ? "" : g_.value(v).name; }

  std::string Fresh(const std::string& base) {
    for (;;) {
      std::string n = base + "__x" + std::to_string(counter_++);
      if (names_.insert(n).second) return n;
    }
  }

  std::string AddInitializer(const HostTensor& t, const std::string& base) {
    std::string name = Fresh(base);
    ToTensorProto(t, name, gp_->add_initializer());
    return name;
  }

  std::string Int64s(const std::vector<int64_t>& v, const std::string& base) {
    return AddInitializer(HostTensor::FromInts(kInt64, {static_cast<int64_t>(v.size())}, v), base);
  }

  onnx::NodeProto* Emit(const std::string& op_type, const std::string& name,
                        std::vector<std::string> inputs, std::vector<std::string> outputs) {
    onnx::NodeProto* n = gp_->add_node();
    n->set_op_type(op_type);
    n->set_name(name);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return n;
  }

  static void AttrInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void AttrInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void AttrFloat(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }

  // Emits `op_type` producing `out`, followed by the activation when there is one.
  onnx::NodeProto* EmitWithActivation(const std::string& op_type, const Node& n,
                                      std::vector<std::string> inputs, int64_t act) {
    const std::string out = Name(n.outputs[0]);
    auto a = static_cast<specs::Activation>(act);
    if (a == specs::Activation::kNone) return Emit(op_type, n.name, inputs, {out});
    std::string tmp = Fresh(out + "_pre");
    onnx::NodeProto* main = Emit(op_type, n.name, inputs, {tmp});
    const char* act_op = a == specs::Activation::kRelu      ? "Relu"
                         : a == specs::Activation::kSigmoid ? "Sigmoid"
                                                            : "Tanh";
    Emit(act_op, n.name + "_act", {tmp}, {out});
    return main;
  }

  Status ExportNode(const Node& n) {
    if (n.opaque()) {
      onnx::NodeProto* p = gp_->add_node();
      *p = *n.onnx;
      p->clear_input();
      p->clear_output();
      for (int v : n.inputs) p->add_input(Name(v));
      for (int v : n.outputs) p->add_output(Name(v));
      return Status::Ok();
    }
    const specs::Params& p = n.params;
    std::vector<std::string> in;
    for (int v : n.inputs) in.push_back(Name(v));
    const std::string out = Name(n.outputs[0]);
    switch (*n.op) {
      case OpKind::kConv2d: {
        const Value& x = g_.value(n.inputs[0]);
        const Value& w = g_.value(n.inputs[1]);
        int64_t kh = w.dims[2], kw = w.dims[3];
        bool same = p[ops::kConvPadding] == static_cast<int64_t>(specs::Padding::kSame);
        int64_t ph = same ? (kh - 1) / 2 : 0, pw = same ? (kw - 1) / 2 : 0;
        auto* c = EmitWithActivation("Conv", n, in, p[ops::kConvActivation]);
        AttrInts(c, "kernel_shape", {kh, kw});
        AttrInts(c, "strides", {p[ops::kConvStrideH], p[ops::kConvStrideW]});
        AttrInts(c, "pads", {ph, pw, ph, pw});
        AttrInt(c, "group",
                p[ops::kConvGroup] == specs::kDepthwiseGroup ? x.dims[1] : p[ops::kConvGroup]);
        return Status::Ok();
      }
      case OpKind::kMatmul:
        EmitWithActivation("MatMul", n, in, p[ops::kMatmulActivation]);
        return Status::Ok();
      case OpKind::kEwAdd:
        Emit("Add", n.name, in, {out});
        return Status::Ok();
      case OpKind::kEwMul:
      case OpKind::kSmul:
        Emit("Mul", n.name, in, {out});
        return Status::Ok();
      case OpKind::kRelu:
        Emit("Relu", n.name, in, {out});
        return Status::Ok();
      case OpKind::kSigmoid:
        Emit("Sigmoid", n.name, in, {out});
        return Status::Ok();
      case OpKind::kTanh:
        Emit("Tanh", n.name, in, {out});
        return Status::Ok();
      case OpKind::kTranspose: {
        std::vector<int> perm = specs::DecodePerm(p[ops::kTransposePerm]);
        AttrInts(Emit("Transpose", n.name, in, {out}), "perm", {perm.begin(), perm.end()});
        return Status::Ok();
      }
      case OpKind::kConcat:
        AttrInt(Emit("Concat", n.name, in, {out}), "axis", p[ops::kConcatAxis]);
        return Status::Ok();
      case OpKind::kSplit: {
        int64_t axis = p[ops::kSplitAxis];
        std::vector<int64_t> sizes = {g_.value(n.outputs[0]).dims[axis],
                                      g_.value(n.outputs[1]).dims[axis]};
        if (opset_ >= 13) in.push_back(Int64s(sizes, n.name + "_split"));
        auto* s = Emit("Split", n.name, in, {out, Name(n.outputs[1])});
        AttrInt(s, "axis", axis);
        if (opset_ < 13) AttrInts(s, "split", sizes);
        return Status::Ok();
      }
      case OpKind::kPoolMax:
      case OpKind::kPoolAvg: {
        bool max = *n.op == OpKind::kPoolMax;
        int64_t kh = p[ops::kPoolKernelH], kw = p[ops::kPoolKernelW];
        bool same = p[ops::kPoolPadding] == static_cast<int64_t>(specs::Padding::kSame);
        int64_t ph = same ? (kh - 1) / 2 : 0, pw = same ? (kw - 1) / 2 : 0;
        auto* q =
            EmitWithActivation(max ? "MaxPool" : "AveragePool", n, in, p[ops::kPoolActivation]);
        AttrInts(q, "kernel_shape", {kh, kw});
        AttrInts(q, "strides", {p[ops::kPoolStrideH], p[ops::kPoolStrideW]});
        AttrInts(q, "pads", {ph, pw, ph, pw});
        if (!max) AttrInt(q, "count_include_pad", 1);
        return Status::Ok();
      }
      case OpKind::kReshape:
        Emit("Reshape", n.name, {in[0], Int64s(g_.value(n.outputs[0]).dims, n.name + "_shape")},
             {out});
        return Status::Ok();
      case OpKind::kBatchnorm:
        AttrFloat(Emit("BatchNormalization", n.name, in, {out}), "epsilon",
                  static_cast<float>(specs::DecodeFloat(p[ops::kBatchnormEpsilon])));
        return Status::Ok();
      case OpKind::kBiasAdd:
        return ExportBiasAdd(n, in, out);
      case OpKind::kEnlarge: {
        const Value& w = g_.value(n.inputs[0]);
        const Value& y = g_.value(n.outputs[0]);
        int64_t th = (y.dims[2] - w.dims[2]) / 2, tw = (y.dims[3] - w.dims[3]) / 2;
        std::vector<int64_t> pads = {
            0, 0, th, tw, 0, 0, y.dims[2] - w.dims[2] - th, y.dims[3] - w.dims[3] - tw};
        if (opset_ >= 11) {
          Emit("Pad", n.name, {in[0], Int64s(pads, n.name + "_pads")}, {out});
        } else {
          AttrInts(Emit("Pad", n.name, in, {out}), "pads", pads);
        }
        return Status::Ok();
      }
      case OpKind::kConstOnes:
      case OpKind::kConstIMatmul:
      case OpKind::kConstIConv:
      case OpKind::kConstPool:
        return ExportConstant(n);
      case OpKind::kNumOps:
        break;
    }
    return InternalError("cannot export node '" + n.name + "'");
  }

  // bias_add along axis k of a rank-r tensor: Add with the bias viewed as [C,1,...,1] (r-1-k
  // ones) so that ONNX broadcasting aligns it with dimension k.
  Status ExportBiasAdd(const Node& n, std::vector<std::string> in, const std::string& out) {
    int64_t axis = n.params[ops::kBiasAxis];
    const Value& x = g_.value(n.inputs[0]);
    const Value& b = g_.value(n.inputs[1]);
    std::vector<int64_t> dims = {b.dims[0]};
    for (size_t d = axis + 1; d < x.dims.size(); ++d) dims.push_back(1);
    if (dims.size() > 1) {
      if (b.constant) {
        HostTensor t = *b.constant;
        t.dims = dims;
        in[1] = AddInitializer(t, b.name);
      } else {
        std::string view = Fresh(b.name + "_view");
        Emit("Reshape", n.name + "_view", {in[1], Int64s(dims, n.name + "_shape")}, {view});
        in[1] = view;
      }
    }
    Emit("Add", n.name, in, {out});
    return Status::Ok();
  }

  // Constants depend only on a static shape: computed here and written as weights.
  Status ExportConstant(const Node& n) {
    const Value& ref = g_.value(n.inputs[0]);
    if (!ref.spec_type) return InternalError("constant node '" + n.name + "' has no static shape");
    specs::Tensor<double> in;
    in.type = *ref.spec_type;
    in.data.assign(static_cast<size_t>(ref.spec_type->shape.NumElements()), 0.0);
    const specs::Tensor<double>* ins[1] = {&in};
    specs::Tensor<double> out[specs::kMaxOpOutputs];
    VERISUB_RETURN_IF_ERROR(specs::Evaluate(specs::DoubleSemantics{}, *n.op, n.params, ins, out));
    const Value& y = g_.value(n.outputs[0]);
    HostTensor t = HostTensor::FromDoubles(y.elem_type, out[0].shape().ToVector(), out[0].data);
    ToTensorProto(t, y.name, gp_->add_initializer());
    return Status::Ok();
  }

  const Graph& g_;
  onnx::GraphProto* gp_;
  int64_t opset_;
  std::unordered_set<std::string> names_;
  int64_t counter_ = 0;
};

}  // namespace

Status ExportOnnxModel(const Graph& g, onnx::ModelProto* model) {
  // A graph built through the API has not met the importer's budget: checked here before any
  // tensor (a constant operator's data) is materialized.
  VERISUB_RETURN_IF_ERROR(CheckMemoryBudget(g, MemoryBudget{}, /*executor=*/false));
  model->Clear();
  model->set_ir_version(onnx::IR_VERSION);
  model->set_producer_name("verisub");
  int64_t opset = g.DefaultOpset() > 0 ? g.DefaultOpset() : kDefaultExportOpset;
  bool has_default = false;
  for (const auto& [domain, version] : g.opsets()) {
    auto* op = model->add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
    has_default |= domain.empty() || domain == "ai.onnx";
  }
  if (!has_default) {
    auto* op = model->add_opset_import();
    op->set_domain("");
    op->set_version(opset);
  }
  onnx::GraphProto* gp = model->mutable_graph();
  gp->set_name(g.name.empty() ? "verisub" : g.name);
  VERISUB_RETURN_IF_ERROR(Exporter(g, gp, opset).Run());
  try {
    onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    return InternalError(std::string("exported model fails the ONNX checker: ") + e.what());
  }
  return Status::Ok();
}

Status ExportOnnxFile(const Graph& g, const std::string& path) {
  onnx::ModelProto model;
  VERISUB_RETURN_IF_ERROR(ExportOnnxModel(g, &model).WithContext(path));
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return InternalError(path + ": the model cannot be serialized (over protobuf's 2 GiB?)");
  return base::WriteFileAtomically(path, bytes);
}

}  // namespace verisub::runtime
