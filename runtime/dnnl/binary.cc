// Binary elementwise operators with broadcasting (spec ewadd, ewmul, bias_add, channel_scale,
// smul; ONNX Add, Mul, Sub, Div, Max, Min): the full-size operand keeps its layout, the other is
// broadcast.
#include "runtime/dnnl/builder.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/channel_scale.h"

namespace verisub::runtime::dnnl_backend {
namespace {

std::optional<dnnl::algorithm> AlgOf(const Node& n, bool* commutative) {
  using A = dnnl::algorithm;
  using K = specs::OpKind;
  *commutative = true;
  if (n.op == K::kEwAdd || n.op == K::kBiasAdd || n.op_type == "Add") return A::binary_add;
  if (n.op == K::kEwMul || n.op == K::kSmul || n.op == K::kChannelScale || n.op_type == "Mul")
    return A::binary_mul;
  if (n.op_type == "Max") return A::binary_max;
  if (n.op_type == "Min") return A::binary_min;
  *commutative = false;
  if (n.op_type == "Sub") return A::binary_sub;
  if (n.op_type == "Div") return A::binary_div;
  return std::nullopt;
}

Status BinaryKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!b.AllDnnl() || n.inputs.size() != 2 || n.outputs.size() != 1)
    return Unimplemented("binary: inputs");
  bool commutative = false;
  auto alg = AlgOf(n, &commutative);
  if (!alg) return Unimplemented("binary: operator");
  int a = n.inputs[0], c = n.inputs[1], y = n.outputs[0];
  const auto& yd = b.dims(y);
  const size_t rank = yd.size();
  auto padded = [&](int v) {
    std::vector<int64_t> d = b.dims(v);
    if (d.size() > rank) return std::vector<int64_t>();
    d.insert(d.begin(), rank - d.size(), 1);
    return d;
  };
  std::vector<int64_t> ad = padded(a), cd = padded(c);
  if (n.op == specs::OpKind::kBiasAdd || n.op == specs::OpKind::kChannelScale) {
    int axis =
        static_cast<int>(n.op == specs::OpKind::kBiasAdd ? n.params[specs::ops::kBiasAxis]
                                                         : n.params[specs::ops::kChannelScaleAxis]);
    cd.assign(rank, 1);
    cd[axis] = yd[axis];
  }
  if (ad != yd && cd == yd && commutative) {
    std::swap(a, c);
    std::swap(ad, cd);
  }
  if (ad != yd || cd.size() != rank) return Unimplemented("binary: broadcast of the first input");
  // Data inputs are read in the output's type (bfloat16 where assigned); broadcast operands
  // (biases, scales) stay float32.
  const memory::data_type type = b.OutputType(y);
  Desc src0 = b.dims(a) == yd ? WithType(b.StoredDesc(a), type) : PlainDesc(yd, type);
  if (b.constant(a)) src0 = PlainDesc(yd, type);
  Desc src1 = cd == yd && !b.constant(c) ? src0 : PlainDesc(cd);
  if (cd == yd && b.constant(c)) src1 = src0;
  Desc dst(memory::dims(yd.begin(), yd.end()), type, memory::format_tag::any);
  dnnl::binary::desc desc(*alg, src0, src1, dst);
  dnnl::binary::primitive_desc pd(desc, b.engine());
  b.Read(DNNL_ARG_SRC_0, a, src0);
  b.Read(DNNL_ARG_SRC_1, c, src1);
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());
  b.Emit(dnnl::binary(pd));
  return Status::Ok();
}

}  // namespace

void AddBinaryKernels(KernelRegistry* r) {
  for (const char* k : {"ewadd", "ewmul", "bias_add", "channel_scale", "smul", "onnx:Add",
                        "onnx:Mul", "onnx:Sub", "onnx:Div", "onnx:Max", "onnx:Min"})
    r->Add(k, BinaryKernel);
}

}  // namespace verisub::runtime::dnnl_backend
