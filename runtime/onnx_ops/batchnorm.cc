// batchnorm in ONNX: BatchNormalization in inference form (training_mode=0, spatial), both ways.
#include "specs/ops/batchnorm.h"

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportBatchNormalization(ImportContext& c) {
  if (!c.InputsFloatStatic(5) || c.SingleOutput() == kNoValue) return;
  const KernelContext& attrs = c.attrs();
  if (attrs.AttrInt("training_mode", 0) != 0 || attrs.AttrInt("spatial", 1) != 1) return;
  specs::Params p = Defaults(OpKind::kBatchnorm);
  p[ops::kBatchnormEpsilon] = specs::EncodeFloat(attrs.AttrFloat("epsilon", 1e-5f));
  const std::vector<int>& in = c.node().inputs;
  c.Add(OpKind::kBatchnorm, p, {in.begin(), in.begin() + 5}, {c.Out(0)});
}

Status ExportBatchnorm(ExportContext& c, const Node& n) {
  c.AttrFloat(c.Emit("BatchNormalization", n.name, c.InputNames(n), {c.Name(n.outputs[0])}),
              "epsilon", static_cast<float>(specs::DecodeFloat(n.params[ops::kBatchnormEpsilon])));
  return Status::Ok();
}

}  // namespace

void RegisterBatchnorm(OnnxOpTable* table) {
  table->AddImport("BatchNormalization", ImportBatchNormalization);
  table->SetExport(OpKind::kBatchnorm, ExportBatchnorm);
}

}  // namespace verisub::runtime
