// bias_add in ONNX: imported from Conv, Gemm and broadcasting Add (their files); written as Add
// with the bias viewed as [C,1,...,1] so that ONNX broadcasting aligns it with its axis.
#include "specs/ops/bias_add.h"

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

namespace ops = specs::ops;

// bias_add along axis k of a rank-r tensor: the bias gets r-1-k trailing ones.
Status ExportBiasAdd(ExportContext& c, const Node& n) {
  std::vector<std::string> in = c.InputNames(n);
  int64_t axis = n.params[ops::kBiasAxis];
  const Value& x = c.value(n.inputs[0]);
  const Value& b = c.value(n.inputs[1]);
  std::vector<int64_t> dims = {b.dims[0]};
  for (size_t d = axis + 1; d < x.dims.size(); ++d) dims.push_back(1);
  if (dims.size() > 1) {
    if (b.constant) {
      HostTensor t = *b.constant;
      t.dims = dims;
      in[1] = c.AddInitializer(t, b.name);
    } else {
      std::string view = c.Fresh(b.name + "_view");
      c.Emit("Reshape", n.name + "_view", {in[1], c.Int64s(dims, n.name + "_shape")}, {view});
      in[1] = view;
    }
  }
  c.Emit("Add", n.name, in, {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterBiasAdd(OnnxOpTable* table) {
  table->SetExport(specs::OpKind::kBiasAdd, ExportBiasAdd);
}

}  // namespace verisub::runtime
