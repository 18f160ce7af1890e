// matmul in ONNX: MatMul, and Gemm as [transpose] matmul [+ bias] on import; MatMul
// [+ activation] on export.
#include "specs/ops/matmul.h"

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"
#include "specs/ops/transpose.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportMatMul(ImportContext& c) {
  if (!c.InputsFloatStatic(2)) return;
  c.Add(OpKind::kMatmul, Defaults(OpKind::kMatmul), {c.InId(0), c.InId(1)}, {c.Out(0)});
}

// Gemm: alpha A' B' + beta C, A' and B' transposed by transA and transB; a scale other than 1 is
// a channel_scale by a constant (a constant C's folds at import; another C with beta other than 1
// stays an ONNX Gemm).
void ImportGemm(ImportContext& c) {
  if (!c.InputsFloatStatic(2) || c.SingleOutput() == kNoValue) return c.Fail();
  const KernelContext& attrs = c.attrs();
  const float alpha = attrs.AttrFloat("alpha", 1.0f);
  const float beta = attrs.AttrFloat("beta", 1.0f);
  const bool has_c = c.Present(2) && beta != 0.0f;
  int a = c.InId(0), b = c.InId(1);
  int32_t et = c.In(0).elem_type;
  const Value& y = c.OutValue(0);
  if ((alpha != 1.0f || has_c) && (!y.StaticShape() || y.dims.size() != 2)) return c.Fail();
  auto transpose = [&](int v) {
    specs::Params p = Defaults(OpKind::kTranspose);
    p[ops::kTransposePerm] = specs::EncodePerm({1, 0});
    int t = c.NewValue(et);
    c.Add(OpKind::kTranspose, p, {v}, {t});
    return t;
  };
  // v scaled by k along `axis` (of y's columns) into `out` (a new value by default).
  auto scaled = [&](int v, float k, int axis, int out = kNoValue) {
    const int64_t n = y.dims[1];
    const int s = c.NewWeight(HostTensor::FromDoubles(et, {n}, std::vector<double>(n, k)));
    if (out == kNoValue) out = c.NewValue(et);
    c.AddChannelScale(v, s, axis, out);
    return out;
  };
  if (attrs.AttrInt("transA", 0)) a = transpose(a);
  if (attrs.AttrInt("transB", 0)) b = transpose(b);
  if (!has_c && alpha == 1.0f)
    return c.Add(OpKind::kMatmul, Defaults(OpKind::kMatmul), {a, b}, {c.Out(0)});
  int mm = c.NewValue(et);
  c.Add(OpKind::kMatmul, Defaults(OpKind::kMatmul), {a, b}, {mm});
  if (!has_c) {
    scaled(mm, alpha, 1, c.Out(0));
    return;
  }
  if (alpha != 1.0f) mm = scaled(mm, alpha, 1);
  const Value& bias = c.In(2);
  // A C scaled at run time would stay a channel_scale of an input (no bias_add to fold into).
  if (!FloatStatic(bias) || (beta != 1.0f && !bias.constant)) return c.Fail();
  int bias_id = c.InId(2);
  if (bias.dims == y.dims) {
    if (beta != 1.0f) bias_id = scaled(bias_id, beta, 1);
    c.Add(OpKind::kEwAdd, Defaults(OpKind::kEwAdd), {mm, bias_id}, {c.Out(0)});
  } else if (bias.dims == std::vector<int64_t>{y.dims[1]} ||
             bias.dims == std::vector<int64_t>{1, y.dims[1]}) {
    if (bias.dims.size() == 2) bias_id = c.AsVector(bias_id, y.dims[1]);
    if (beta != 1.0f) bias_id = scaled(bias_id, beta, 0);
    c.AddBias(mm, bias_id, 1, c.Out(0));
  } else {
    c.Fail();
  }
}

Status ExportMatmul(ExportContext& c, const Node& n) {
  c.EmitWithActivation("MatMul", n, c.InputNames(n), n.params[ops::kMatmulActivation]);
  return Status::Ok();
}

}  // namespace

void RegisterMatmul(OnnxOpTable* table) {
  table->AddImport("MatMul", ImportMatMul);
  table->AddImport("Gemm", ImportGemm);
  table->SetExport(OpKind::kMatmul, ExportMatmul);
}

}  // namespace verisub::runtime
