// ONNX export of the graph IR.
#include "runtime/onnx_export.h"

#include <cstdio>
#include <unordered_set>

#include "base/file_io.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"
#include "runtime/memory_budget.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime {
namespace {

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

// Opaque nodes are written verbatim with their current wiring; spec nodes by their operator's
// exporter (runtime/onnx_ops/<operator>.cc).
Status ExportNode(ExportContext& ctx, onnx::GraphProto* gp, const Node& n) {
  if (!n.opaque()) return OnnxOps().Export(*n.op)(ctx, n);
  onnx::NodeProto* p = gp->add_node();
  *p = *n.onnx;
  p->clear_input();
  p->clear_output();
  for (int v : n.inputs) p->add_input(ctx.Name(v));
  for (int v : n.outputs) p->add_output(ctx.Name(v));
  return Status::Ok();
}

Status ExportGraph(const Graph& g, onnx::GraphProto* gp, int64_t opset) {
  ExportContext ctx(g, gp, opset);
  for (int v : g.inputs()) {
    SetValueInfo(g.value(v), gp->add_input());
    // An input with a default (an initializer of the same name) keeps it.
    if (g.value(v).input_default)
      ToTensorProto(*g.value(v).input_default, g.value(v).name, gp->add_initializer());
  }
  std::vector<int> uses = g.UseCounts();
  for (int v = 0; v < g.num_values(); ++v)
    if (g.value(v).constant && uses[v] > 0)
      ToTensorProto(*g.value(v).constant, g.value(v).name, gp->add_initializer());
  for (const auto& np : g.nodes()) VERISUB_RETURN_IF_ERROR(ExportNode(ctx, gp, *np));
  for (int v : g.outputs()) SetValueInfo(g.value(v), gp->add_output());
  return Status::Ok();
}

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
  VERISUB_RETURN_IF_ERROR(ExportGraph(g, gp, opset));
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
