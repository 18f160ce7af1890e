// ONNX import: parse, check, infer shapes, build the graph, fold constants, map onto spec ops.
#include "runtime/onnx_import.h"

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "runtime/constant_folding.h"
#include "runtime/op_mapping.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime {
namespace {

void ReadValueInfo(const onnx::ValueInfoProto& info, Value* v) {
  if (!info.has_type() || !info.type().has_tensor_type()) {
    v->elem_type = kUndefined;  // sequences, maps, optionals: not tensors
    return;
  }
  const auto& tt = info.type().tensor_type();
  if (tt.elem_type() != 0) v->elem_type = tt.elem_type();
  if (!tt.has_shape()) return;
  v->rank_known = true;
  v->dims.clear();
  for (const auto& d : tt.shape().dim()) v->dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
}

Status ApplyInputShapes(const ImportOptions& options, onnx::GraphProto* g) {
  for (const auto& [name, dims] : options.input_shapes) {
    bool found = false;
    for (auto& in : *g->mutable_input()) {
      if (in.name() != name) continue;
      found = true;
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    }
    if (!found) return NotFound("--input-shape names '" + name + "', which is not a graph input");
  }
  // Stale intermediate shapes could contradict the new input shapes: infer them afresh.
  if (!options.input_shapes.empty()) g->clear_value_info();
  return Status::Ok();
}

StatusOr<Graph> BuildGraph(const onnx::ModelProto& model) {
  const onnx::GraphProto& gp = model.graph();
  Graph g;
  g.name = gp.name();
  for (const auto& op : model.opset_import()) g.mutable_opsets().push_back({op.domain(), op.version()});
  std::unordered_map<std::string, int> ids;
  std::unordered_map<std::string, const onnx::ValueInfoProto*> infos;
  for (const auto& vi : gp.value_info()) infos[vi.name()] = &vi;
  for (const auto& vi : gp.output()) infos[vi.name()] = &vi;
  for (const auto& init : gp.initializer()) {
    auto t = FromTensorProto(init);
    if (!t.ok()) return t.status().WithContext("initializer '" + init.name() + "'");
    Value v;
    v.name = init.name();
    v.elem_type = t->elem_type;
    v.dims = t->dims;
    v.rank_known = true;
    v.constant = std::make_shared<const HostTensor>(std::move(*t));
    ids[v.name] = g.AddValue(std::move(v));
  }
  for (const auto& in : gp.input()) {
    if (ids.count(in.name())) continue;  // an initializer listed as an input (IR < 4 style)
    Value v;
    v.name = in.name();
    ReadValueInfo(in, &v);
    int id = g.AddValue(std::move(v));
    ids[in.name()] = id;
    g.mutable_inputs().push_back(id);
  }
  for (int i = 0; i < gp.node_size(); ++i) {
    const onnx::NodeProto& np = gp.node(i);
    Node n;
    n.name = np.name().empty() ? np.op_type() + "_" + std::to_string(i) : np.name();
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.onnx = std::make_shared<const onnx::NodeProto>(np);
    for (const auto& name : np.input()) {
      if (name.empty()) {
        n.inputs.push_back(kNoValue);
        continue;
      }
      auto it = ids.find(name);
      if (it == ids.end())
        return NotFound("node '" + n.name + "' (" + np.op_type() + ") reads '" + name +
                        "', which is not a graph input, an initializer or an earlier output "
                        "(missing initializer?)");
      n.inputs.push_back(it->second);
    }
    for (const auto& name : np.output()) {
      if (name.empty()) {
        n.outputs.push_back(kNoValue);
        continue;
      }
      if (ids.count(name))
        return InvalidArgument("node '" + n.name + "' (" + np.op_type() + ") redefines '" + name +
                               "'");
      Value v;
      v.name = name;
      v.elem_type = kUndefined;
      auto info = infos.find(name);
      if (info != infos.end()) ReadValueInfo(*info->second, &v);
      int id = g.AddValue(std::move(v));
      ids[name] = id;
      n.outputs.push_back(id);
    }
    g.AddNode(std::move(n));
  }
  for (const auto& out : gp.output()) {
    auto it = ids.find(out.name());
    if (it == ids.end()) return NotFound("graph output '" + out.name() + "' is never computed");
    g.mutable_outputs().push_back(it->second);
  }
  return g;
}

// Every value a node or the graph reads must have a static shape and a known element type.
Status CheckStaticShapes(const Graph& g) {
  std::vector<int> producer = g.Producers();
  for (int v = 0; v < g.num_values(); ++v) {
    const Value& val = g.value(v);
    if (val.StaticShape() && val.elem_type != kUndefined) continue;
    std::string why = val.elem_type == kUndefined ? "its element type" : "its shape " +
        (val.rank_known ? DimsToString(val.dims) + " (-1 = unknown)" : std::string("(unknown rank)"));
    if (producer[v] < 0)
      return InvalidArgument("graph input '" + val.name + "': " + why +
                             " is not static; give it with ImportOptions::input_shapes "
                             "(verisub-onnx --input-shape)");
    const Node& n = g.node(producer[v]);
    return InvalidArgument("node '" + n.name + "' (" + n.op_type + "): " + why + " of output '" +
                           val.name + "' cannot be inferred");
  }
  return Status::Ok();
}

}  // namespace

int64_t MaxSupportedOpset() {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find("");
  return it == map.end() ? 0 : it->second.second;
}

StatusOr<Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return DataLoss(path + ": read error");
  return ImportOnnxBytes(buf.str(), path, options);
}

StatusOr<Graph> ImportOnnxBytes(const std::string& bytes, const std::string& source,
                                const ImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.empty()) return DataLoss(source + ": empty file, not an ONNX model");
  if (!model.ParseFromString(bytes))
    return DataLoss(source + ": not an ONNX model (protobuf parse failed; truncated or corrupt?)");
  return ImportOnnxModel(std::move(model), source, options);
}

StatusOr<Graph> ImportOnnxModel(onnx::ModelProto model, const std::string& source,
                                const ImportOptions& options) {
  auto fail = [&](const Status& st) { return st.WithContext(source); };
  if (!model.has_graph()) return fail(DataLoss("not an ONNX model (no graph)"));
  int64_t opset = -1;
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
  if (opset < 0) return fail(InvalidArgument("the model imports no default-domain (ai.onnx) opset"));
  if (opset < kMinOpset || opset > MaxSupportedOpset())
    return fail(Unimplemented("unsupported opset " + std::to_string(opset) + " (supported: " +
                              std::to_string(kMinOpset) + " to " +
                              std::to_string(MaxSupportedOpset()) + ")"));
  VERISUB_RETURN_IF_ERROR(fail(ApplyInputShapes(options, model.mutable_graph())));
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return fail(InvalidArgument(std::string("ONNX checker: ") + e.what()));
  }
  try {
    onnx::ShapeInferenceOptions si(/*check_type=*/true, /*strict_mode=*/1, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), si);
  } catch (const std::exception& e) {
    return fail(InvalidArgument(std::string("ONNX shape inference: ") + e.what()));
  }
  auto graph = BuildGraph(model);
  if (!graph.ok()) return fail(graph.status());
  Graph g = std::move(*graph);
  if (options.fold_constants) {
    FoldOptions fo;
    fo.max_elements = options.fold_max_elements;
    auto report = FoldConstants(&g, fo);
    if (!report.ok()) return fail(report.status());
  }
  if (options.require_static_shapes) VERISUB_RETURN_IF_ERROR(fail(CheckStaticShapes(g)));
  if (options.map_to_spec_ops) {
    VERISUB_RETURN_IF_ERROR(fail(MapToSpecOps(&g)));
    if (options.fold_constants) {  // e.g. the transpose of a Gemm's constant B
      FoldOptions fo;
      fo.max_elements = options.fold_max_elements;
      auto report = FoldConstants(&g, fo);
      if (!report.ok()) return fail(report.status());
    }
  }
  VERISUB_RETURN_IF_ERROR(fail(InferSpecTypes(&g)));
  VERISUB_RETURN_IF_ERROR(fail(CheckGraph(g)));
  return g;
}

}  // namespace verisub::runtime
