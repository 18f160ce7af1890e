// Helpers shared by the operators' ONNX exporters.
#include "runtime/onnx_ops/export_context.h"

#include "onnx/onnx_pb.h"
#include "runtime/canonicalize.h"
#include "runtime/onnx_ops/op_table.h"
#include "runtime/tensor_proto.h"
#include "specs/evaluate.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/pad.h"
#include "specs/ops/pooling.h"
#include "specs/ops/reduce_axis.h"
#include "specs/semantics.h"

namespace verisub::runtime {

namespace {

// The padding parameter of a window operator, or -1 for another node.
int64_t WindowPaddingParam(const Node& n) {
  namespace ops = specs::ops;
  if (n.op == specs::OpKind::kConv2d || n.op == specs::OpKind::kConv2dBias)
    return n.params[ops::kConvPadding];
  if (n.op == specs::OpKind::kPoolMax || n.op == specs::OpKind::kPoolAvg)
    return n.params[ops::kPoolPadding];
  return -1;
}

// The pad mode a window takes as its own padding: zeros for a convolution and an average (the
// spec's average counts them), edge copies for a max.
specs::ops::PadMode FoldableMode(const Node& window) {
  return window.op == specs::OpKind::kPoolMax ? specs::ops::PadMode::kEdge
                                              : specs::ops::PadMode::kZero;
}

}  // namespace

void ExportContext::IndexReaders() const {
  if (!producer_.empty()) return;
  producer_ = g_.Producers();
  sole_reader_ = g_.SoleReaders();
}

std::optional<FoldedPad> ExportContext::PadFoldedInto(const Node& window) const {
  if (WindowPaddingParam(window) != static_cast<int64_t>(specs::Padding::kValid) ||
      window.inputs.empty() || window.inputs[0] == kNoValue)
    return std::nullopt;
  IndexReaders();
  const int v = window.inputs[0];
  if (sole_reader_[v] < 0 || producer_[v] < 0) return std::nullopt;
  const std::optional<std::vector<int64_t>> pads =
      SpecPads(g_.node(producer_[v]), FoldableMode(window));
  if (!pads) return std::nullopt;
  return FoldedPad{g_.node(producer_[v]).inputs[0], *pads};
}

bool ExportContext::PadFoldsIntoItsWindow(const Node& pad) const {
  if (pad.op != specs::OpKind::kPad || pad.outputs.size() != 1) return false;
  IndexReaders();
  const int r = sole_reader_[pad.outputs[0]];
  if (r < 0) return false;
  const Node& window = g_.node(r);
  return window.inputs[0] == pad.outputs[0] && PadFoldedInto(window).has_value();
}

ExportContext::ExportContext(const Graph& g, onnx::GraphProto* gp, int64_t opset)
    : g_(g), gp_(gp), opset_(opset) {
  for (int v = 0; v < g.num_values(); ++v) names_.insert(g.value(v).name);
}

std::vector<std::string> ExportContext::InputNames(const Node& n) const {
  std::vector<std::string> in;
  for (int v : n.inputs) in.push_back(Name(v));
  return in;
}

std::string ExportContext::Fresh(const std::string& base) {
  for (;;) {
    std::string n = base + "__x" + std::to_string(counter_++);
    if (names_.insert(n).second) return n;
  }
}

std::string ExportContext::AddInitializer(const HostTensor& t, const std::string& base) {
  std::string name = Fresh(base);
  ToTensorProto(t, name, gp_->add_initializer());
  return name;
}

void ExportContext::AddNamedInitializer(const HostTensor& t, const std::string& name) {
  ToTensorProto(t, name, gp_->add_initializer());
}

std::string ExportContext::Int64s(const std::vector<int64_t>& v, const std::string& base) {
  return AddInitializer(HostTensor::FromInts(kInt64, {static_cast<int64_t>(v.size())}, v), base);
}

onnx::NodeProto* ExportContext::Emit(const std::string& op_type, const std::string& name,
                                     std::vector<std::string> inputs,
                                     std::vector<std::string> outputs) {
  onnx::NodeProto* n = gp_->add_node();
  n->set_op_type(op_type);
  n->set_name(name);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

onnx::NodeProto* ExportContext::EmitWithActivation(const std::string& op_type, const Node& n,
                                                   std::vector<std::string> inputs, int64_t act) {
  const std::string out = Name(n.outputs[0]);
  auto a = static_cast<specs::Activation>(act);
  if (a == specs::Activation::kNone) return Emit(op_type, n.name, inputs, {out});
  const OnnxActivationFn* write = OnnxOps().ActivationExport(a);
  VERISUB_CHECK(write != nullptr);  // every activation of a fusing operator's domain has one
  std::string tmp = Fresh(out + "_pre");
  onnx::NodeProto* main = Emit(op_type, n.name, inputs, {tmp});
  (*write)(*this, n.name + "_act", tmp, out, value(n.outputs[0]).elem_type);
  return main;
}

void ExportContext::AttrInts(onnx::NodeProto* n, const std::string& name,
                             const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void ExportContext::AttrInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void ExportContext::AttrFloat(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void ExportContext::AttrString(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

Status ExportConstant(ExportContext& ctx, const Node& n) {
  const Value& ref = ctx.value(n.inputs[0]);
  if (!ref.spec_type) return InternalError("constant node '" + n.name + "' has no static shape");
  specs::Tensor<double> in;
  in.type = *ref.spec_type;
  in.data.assign(static_cast<size_t>(ref.spec_type->shape.NumElements()), 0.0);
  const specs::Tensor<double>* ins[1] = {&in};
  specs::Tensor<double> out[specs::kMaxOpOutputs];
  VERISUB_RETURN_IF_ERROR(specs::Evaluate(specs::DoubleSemantics{}, *n.op, n.params, ins, out));
  const Value& y = ctx.value(n.outputs[0]);
  HostTensor t = HostTensor::FromDoubles(y.elem_type, out[0].shape().ToVector(), out[0].data);
  ctx.AddNamedInitializer(t, y.name);
  return Status::Ok();
}

std::string VectorAlongAxis(ExportContext& c, const Node& n, size_t k, int64_t axis) {
  const Value& x = c.value(n.inputs[0]);
  const Value& v = c.value(n.inputs[k]);
  std::string name = c.Name(n.inputs[k]);
  std::vector<int64_t> dims = {v.dims[0]};
  for (size_t d = axis + 1; d < x.dims.size(); ++d) dims.push_back(1);
  if (dims.size() == 1) return name;
  if (v.constant) {
    HostTensor t = *v.constant;
    t.dims = dims;
    return c.AddInitializer(t, v.name);
  }
  std::string view = c.Fresh(v.name + "_view");
  c.Emit("Reshape", n.name + "_view", {name, c.Int64s(dims, n.name + "_shape")}, {view});
  return view;
}

Status ExportOneAxisReduce(ExportContext& c, const Node& n, const std::string& op_type,
                           int64_t axes_input_from) {
  const std::vector<int64_t> axes = {n.params[specs::ops::kReduceAxis]};
  std::vector<std::string> in = c.InputNames(n);
  if (c.opset() >= axes_input_from) in.push_back(c.Int64s(axes, n.name + "_axes"));
  auto* node = c.Emit(op_type, n.name, in, {c.Name(n.outputs[0])});
  if (c.opset() < axes_input_from) ExportContext::AttrInts(node, "axes", axes);
  ExportContext::AttrInt(node, "keepdims", 1);
  return Status::Ok();
}

}  // namespace verisub::runtime
