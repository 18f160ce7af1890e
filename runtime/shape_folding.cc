// Shape-computation folding to a fixed point.
#include "runtime/shape_folding.h"

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "runtime/control_flow.h"
#include "runtime/onnx_node_inference.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime {
namespace {

bool FullyKnown(const Value& v) { return v.StaticShape() && v.elem_type != kUndefined; }

onnx::TypeProto TypeOf(const Value& v) {
  onnx::TypeProto t;
  auto* tt = t.mutable_tensor_type();
  tt->set_elem_type(v.elem_type);
  if (v.rank_known) {
    auto* shape = tt->mutable_shape();
    for (int64_t d : v.dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
    }
  }
  return t;
}

std::string Where(const Node& n) { return "node '" + n.name + "' (" + n.KindName() + ")"; }

// Merges an inferred type into `v`; returns whether anything was learnt.
StatusOr<bool> Merge(const Node& n, const onnx::TypeProto& t, Value* v) {
  if (!t.has_tensor_type()) return false;
  const auto& tt = t.tensor_type();
  bool learnt = false;
  if (tt.elem_type() != 0 && v->elem_type != tt.elem_type()) {
    if (v->elem_type != kUndefined)
      return InvalidArgument(Where(n) + ": output '" + v->name + "' is " +
                             ElemTypeName(v->elem_type) + " but ONNX shape inference gives " +
                             ElemTypeName(tt.elem_type()));
    v->elem_type = tt.elem_type();
    learnt = true;
  }
  if (!tt.has_shape()) return learnt;
  std::vector<int64_t> dims;
  for (const auto& d : tt.shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  if (!v->rank_known) {
    v->dims = dims;
    v->rank_known = true;
    return true;
  }
  bool agree = v->dims.size() == dims.size();
  for (size_t k = 0; agree && k < dims.size(); ++k)
    agree = v->dims[k] < 0 || dims[k] < 0 || v->dims[k] == dims[k];
  if (!agree)
    return InvalidArgument(Where(n) + ": output '" + v->name + "' has shape " +
                           DimsToString(v->dims) +
                           " but ONNX shape inference on its folded "
                           "inputs gives " +
                           DimsToString(dims) + " (-1 = unknown)");
  for (size_t k = 0; k < dims.size(); ++k)
    if (v->dims[k] < 0 && dims[k] >= 0) {
      v->dims[k] = dims[k];
      learnt = true;
    }
  return learnt;
}

}  // namespace

StatusOr<int> RefineOpaqueTypes(Graph* g, const ShapeFoldOptions& options) {
  int refined = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    if (!n.opaque() || !n.onnx || HasSubgraph(*n.onnx)) continue;
    bool complete = true;
    for (int o : n.outputs) complete &= o == kNoValue || FullyKnown(g->value(o));
    if (complete) continue;
    const onnx::OpSchema* schema = FindOnnxSchema(n.op_type, n.domain, g->OpsetFor(n.domain));
    if (!schema) continue;  // custom operators: their outputs stay as the model declares them
    std::vector<onnx::TypeProto> types(n.inputs.size());
    std::vector<onnx::TensorProto> data(n.inputs.size());
    std::vector<const onnx::TypeProto*> type_ptrs(n.inputs.size(), nullptr);
    std::vector<const onnx::TensorProto*> data_ptrs(n.inputs.size(), nullptr);
    bool typed = true;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] == kNoValue) continue;
      const Value& in = g->value(n.inputs[k]);
      typed &= in.elem_type != kUndefined;  // ONNX 1.12's functions assume typed inputs
      types[k] = TypeOf(in);
      type_ptrs[k] = &types[k];
      if (in.constant && in.constant->NumElements() <= options.max_data_elements) {
        ToTensorProto(*in.constant, in.name, &data[k]);
        data_ptrs[k] = &data[k];
      }
    }
    if (!typed) continue;
    auto out = InferNodeTypes(*n.onnx, *schema, type_ptrs, data_ptrs);
    if (!out.ok()) return out.status().WithContext(Where(n));
    for (size_t k = 0; k < n.outputs.size() && k < out->size(); ++k) {
      int o = n.outputs[k];
      if (o == kNoValue || FullyKnown(g->value(o))) continue;
      Value v = g->value(o);
      auto learnt = Merge(n, (*out)[k], &v);
      if (!learnt.ok()) return learnt.status();
      if (!*learnt) continue;
      g->mutable_value(o) = std::move(v);
      ++refined;
    }
  }
  return refined;
}

StatusOr<ShapeFoldReport> FoldShapes(Graph* g, const ShapeFoldOptions& options) {
  ShapeFoldReport report;
  while (true) {
    if (report.rounds >= options.max_rounds) {
      report.reached_limit = true;
      break;
    }
    ++report.rounds;
    auto folded = FoldConstants(g, options.fold);
    if (!folded.ok()) return folded.status();
    report.folded_nodes += folded->folded_nodes;
    report.skipped_no_kernel = folded->skipped_no_kernel;
    auto refined = RefineOpaqueTypes(g, options);
    if (!refined.ok()) return refined.status();
    report.refined_values += *refined;
    if (folded->folded_nodes == 0 && *refined == 0) break;
  }
  return report;
}

}  // namespace verisub::runtime
