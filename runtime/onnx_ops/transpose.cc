// transpose in ONNX: Transpose (a missing perm reverses the dimensions) both ways.
#include "specs/ops/transpose.h"

#include <algorithm>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportTranspose(ImportContext& c) {
  if (!c.InputsFloatStatic(1)) return;
  std::vector<int64_t> perm = c.attrs().AttrInts("perm");
  int rank = static_cast<int>(c.In(0).dims.size());
  if (perm.empty())
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  if (static_cast<int>(perm.size()) != rank) return;
  std::vector<int> p(perm.begin(), perm.end());
  std::vector<int> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int d = 0; d < rank; ++d)
    if (sorted[d] != d) return;
  specs::Params params = Defaults(OpKind::kTranspose);
  params[ops::kTransposePerm] = specs::EncodePerm(p);
  c.Add(OpKind::kTranspose, params, {c.InId(0)}, {c.Out(0)});
}

Status ExportTranspose(ExportContext& c, const Node& n) {
  std::vector<int> perm = specs::DecodePerm(n.params[ops::kTransposePerm]);
  c.AttrInts(c.Emit("Transpose", n.name, c.InputNames(n), {c.Name(n.outputs[0])}), "perm",
             {perm.begin(), perm.end()});
  return Status::Ok();
}

}  // namespace

void RegisterTranspose(OnnxOpTable* table) {
  table->AddImport("Transpose", ImportTranspose);
  table->SetExport(OpKind::kTranspose, ExportTranspose);
}

}  // namespace verisub::runtime
