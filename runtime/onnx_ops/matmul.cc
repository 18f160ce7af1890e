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

void ImportGemm(ImportContext& c) {
  if (!c.InputsFloatStatic(2) || c.SingleOutput() == kNoValue) return c.Fail();
  const KernelContext& attrs = c.attrs();
  bool has_c = c.Present(2);
  if (attrs.AttrFloat("alpha", 1.0f) != 1.0f || (has_c && attrs.AttrFloat("beta", 1.0f) != 1.0f))
    return c.Fail();
  int a = c.InId(0), b = c.InId(1);
  int32_t et = c.In(0).elem_type;
  auto transpose = [&](int v) {
    specs::Params p = Defaults(OpKind::kTranspose);
    p[ops::kTransposePerm] = specs::EncodePerm({1, 0});
    int t = c.NewValue(et);
    c.Add(OpKind::kTranspose, p, {v}, {t});
    return t;
  };
  if (attrs.AttrInt("transA", 0)) a = transpose(a);
  if (attrs.AttrInt("transB", 0)) b = transpose(b);
  if (!has_c) return c.Add(OpKind::kMatmul, Defaults(OpKind::kMatmul), {a, b}, {c.Out(0)});
  const Value& bias = c.In(2);
  const Value& y = c.OutValue(0);
  if (!FloatStatic(bias) || y.dims.size() != 2) return c.Fail();
  int mm = c.NewValue(et);
  c.Add(OpKind::kMatmul, Defaults(OpKind::kMatmul), {a, b}, {mm});
  if (bias.dims == y.dims) {
    c.Add(OpKind::kEwAdd, Defaults(OpKind::kEwAdd), {mm, c.InId(2)}, {c.Out(0)});
  } else if (bias.dims == std::vector<int64_t>{y.dims[1]}) {
    c.AddBias(mm, c.InId(2), 1, c.Out(0));
  } else if (bias.dims == std::vector<int64_t>{1, y.dims[1]}) {
    c.AddBias(mm, c.AsVector(c.InId(2), y.dims[1]), 1, c.Out(0));
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
