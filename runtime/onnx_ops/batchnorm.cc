// batchnorm in ONNX: BatchNormalization in inference form (training_mode=0, spatial), both ways;
// with constant statistics it imports as channel_scale then bias_add instead.
#include "specs/ops/batchnorm.h"

#include <cmath>

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

// Constant statistics: y = x * k + (beta - mean * k) with k = scale / sqrt(var + epsilon),
// computed here in double and stored in x's element type, so that the rules see a per-channel
// scale and shift that fold into a preceding convolution or matmul.
bool ImportFolded(ImportContext& c, double epsilon) {
  const Value& x = c.In(0);
  std::vector<double> stats[4];
  for (size_t i = 0; i < 4; ++i) {
    const Value& v = c.In(i + 1);
    if (!v.constant || v.dims.size() != 1 || v.dims[0] != x.dims[1]) return false;
    stats[i] = v.constant->ToDoubles();
  }
  const auto& [scale, bias, mean, var] = stats;
  std::vector<double> k(scale.size()), shift(scale.size());
  for (size_t ch = 0; ch < k.size(); ++ch) {
    k[ch] = scale[ch] / std::sqrt(var[ch] + epsilon);
    shift[ch] = bias[ch] - mean[ch] * k[ch];
  }
  const std::vector<int64_t> dims = {x.dims[1]};
  const int scaled = c.NewValue(x.elem_type);
  c.AddChannelScale(c.InId(0), c.NewWeight(HostTensor::FromDoubles(x.elem_type, dims, k)), 1,
                    scaled);
  c.AddBias(scaled, c.NewWeight(HostTensor::FromDoubles(x.elem_type, dims, shift)), 1, c.Out(0));
  return true;
}

void ImportBatchNormalization(ImportContext& c) {
  if (!c.InputsFloatStatic(5) || c.SingleOutput() == kNoValue) return;
  const KernelContext& attrs = c.attrs();
  if (attrs.AttrInt("training_mode", 0) != 0 || attrs.AttrInt("spatial", 1) != 1) return;
  if (c.In(0).dims.size() >= 2 && ImportFolded(c, attrs.AttrFloat("epsilon", 1e-5f))) return;
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
