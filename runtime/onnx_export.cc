// ONNX export of the graph IR.
#include "runtime/onnx_export.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/file_io.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "runtime/canonicalize.h"
#include "runtime/control_flow.h"
#include "runtime/memory_budget.h"
#include "runtime/onnx_kernels.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"
#include "runtime/tensor_proto.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/channel_scale.h"
#include "specs/ops/concat.h"
#include "specs/ops/reshape.h"
#include "specs/ops/transpose.h"

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
  // A control-flow node's inputs after its declared ones are the values its subgraphs read by
  // name (control_flow.h): written as those names, not as inputs.
  const size_t declared = HasSubgraph(*n.onnx) ? n.onnx->input_size() : n.inputs.size();
  for (size_t i = 0; i < declared && i < n.inputs.size(); ++i) p->add_input(ctx.Name(n.inputs[i]));
  if (declared < n.inputs.size()) {
    const std::vector<std::string> captured = CapturedNames(*n.onnx);
    if (captured.size() != n.inputs.size() - declared)
      return InternalError("node '" + n.name + "': " + std::to_string(n.inputs.size()) +
                           " inputs for " + std::to_string(declared) + " declared and " +
                           std::to_string(captured.size()) + " captured");
    std::map<std::string, std::string> renames;
    for (size_t k = 0; k < captured.size(); ++k)
      if (ctx.Name(n.inputs[declared + k]) != captured[k])
        renames[captured[k]] = ctx.Name(n.inputs[declared + k]);
    RenameCaptured(p, renames);
  }
  for (int v : n.outputs) p->add_output(ctx.Name(v));
  return Status::Ok();
}

// An opaque ONNX node of `type` computing `outputs` from `inputs`.
Node OnnxNode(const std::string& type, const std::string& name, std::vector<int> inputs,
              std::vector<int> outputs, onnx::NodeProto proto) {
  proto.set_op_type(type);
  Node n;
  n.name = name;
  n.op_type = type;
  n.onnx = std::make_shared<const onnx::NodeProto>(std::move(proto));
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

// ONNX Runtime's contrib DynamicQuantizeMatMul(x, W, W_scale[, W_zero[, bias]]) as standard
// operators, the pattern quantize_dynamic writes and the import made it of (canonicalize.h):
// DynamicQuantizeLinear, MatMulInteger, Cast, Mul of the scales, Mul[, Add of the bias]. Every
// engine runs that; ONNX Runtime fuses it again.
void WriteOutDynamicQuantizeMatMul(const Node& n, Graph* g,
                                   std::vector<std::shared_ptr<const Node>>* nodes) {
  auto value = [&](const std::string& suffix, int32_t type, std::vector<int64_t> dims) {
    Value v;
    v.name = g->UniqueName(n.name + suffix);
    v.elem_type = type;
    v.dims = std::move(dims);
    v.rank_known = true;
    return g->AddValue(std::move(v));
  };
  auto add = [&](const std::string& type, const std::string& suffix, std::vector<int> inputs,
                 std::vector<int> outputs, onnx::NodeProto proto = {}) {
    nodes->push_back(std::make_shared<const Node>(
        OnnxNode(type, n.name + suffix, std::move(inputs), std::move(outputs), std::move(proto))));
  };
  const int x = n.inputs[0], w = n.inputs[1], w_scale = n.inputs[2];
  const int w_zero = n.inputs.size() > 3 ? n.inputs[3] : kNoValue;
  const int bias = n.inputs.size() > 4 ? n.inputs[4] : kNoValue;
  const std::vector<int64_t>& y_dims = g->value(n.outputs[0]).dims;
  const int q = value("/quantized", kUint8, g->value(x).dims), s = value("/scale", kFloat, {}),
            z = value("/zero_point", kUint8, {});
  add("DynamicQuantizeLinear", "/quantize", {x}, {q, s, z});
  const int p = value("/product", kInt32, y_dims);
  std::vector<int> operands = {q, w, z};
  if (w_zero != kNoValue) operands.push_back(w_zero);
  add("MatMulInteger", "/matmul", operands, {p});
  const int f = value("/product_float", kFloat, y_dims);
  onnx::NodeProto cast;
  ExportContext::AttrInt(&cast, "to", kFloat);
  add("Cast", "/cast", {p}, {f}, cast);
  const int c = value("/scales", kFloat, g->value(w_scale).dims);
  add("Mul", "/scales", {s, w_scale}, {c});
  const int y = bias == kNoValue ? n.outputs[0] : value("/scaled", kFloat, y_dims);
  add("Mul", "/rescale", {f, c}, {y});
  if (bias != kNoValue) add("Add", "/bias", {y, bias}, {n.outputs[0]});
}

// The forms engines run best, restored before writing (issue 23: ONNX Runtime on our output must
// not be slower than on the original): a chain of binary concats along one axis, each read only
// by the next, is one n-ary Concat again (the import splits it), and a constant per-channel scale
// followed by a constant shift on axis 1 is one BatchNormalization (mean 0, variance 1,
// epsilon 0: exactly x * scale + shift; opset 9 on) rather than a Mul and an Add.
Graph RestoreOnnxForms(const Graph& g, int64_t opset) {
  const std::vector<int> producer = g.Producers();
  const std::vector<int> sole = g.SoleReaders();
  auto spec = [&](int i, specs::OpKind k) { return i >= 0 && g.node(i).op == k; };
  auto axis_of = [&](int i) { return g.node(i).params[specs::ops::kConcatAxis]; };
  // Concats whose output only feeds a concat along the same axis: inlined into it.
  std::vector<char> inlined(g.num_nodes(), 0);
  for (int i = 0; i < g.num_nodes(); ++i) {
    if (!spec(i, specs::OpKind::kConcat)) continue;
    for (int v : g.node(i).inputs) {
      const int p = v == kNoValue ? -1 : producer[v];
      if (spec(p, specs::OpKind::kConcat) && sole[v] == i && axis_of(p) == axis_of(i))
        inlined[p] = 1;
    }
  }
  std::function<void(int, std::vector<int>*)> flatten = [&](int i, std::vector<int>* out) {
    for (int v : g.node(i).inputs) {
      const int p = v == kNoValue ? -1 : producer[v];
      if (p >= 0 && inlined[p])
        flatten(p, out);
      else
        out->push_back(v);
    }
  };
  // channel_scale then bias_add on axis 1, both by constants, the scale read only by the shift.
  std::vector<int> shift_of(g.num_nodes(), -1);
  std::vector<char> absorbed(g.num_nodes(), 0);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (opset < 9 || !spec(i, specs::OpKind::kChannelScale) ||
        n.params[specs::ops::kChannelScaleAxis] != 1 || g.value(n.inputs[0]).dims.size() < 2 ||
        !g.value(n.inputs[1]).constant)
      continue;
    const int r = sole[n.outputs[0]];
    if (!spec(r, specs::OpKind::kBiasAdd) || g.node(r).inputs[0] != n.outputs[0] ||
        g.node(r).params[specs::ops::kBiasAxis] != 1 || !g.value(g.node(r).inputs[1]).constant)
      continue;
    shift_of[i] = r;
    absorbed[r] = 1;
  }
  // reshape -> transpose -> reshape of a 4-D tensor that is a DepthToSpace (either mode) or a
  // SpaceToDepth, as the import wrote them (canonicalize.cc), intermediates read only there: the
  // ONNX operator again (ONNX Runtime's kernel for it beats its 6-D transpose).
  std::vector<std::string> pixel_shuffle(g.num_nodes());  // at the last reshape: the operator
  std::vector<int64_t> block_of(g.num_nodes(), 0);
  auto shape_of = [&](int v) { return g.value(v).dims; };
  for (int i = 0; i < g.num_nodes(); ++i) {
    if (!spec(i, specs::OpKind::kReshape)) continue;
    const int t = producer[g.node(i).inputs[0]];
    if (!spec(t, specs::OpKind::kTranspose) || sole[g.node(t).outputs[0]] != i) continue;
    const int r = producer[g.node(t).inputs[0]];
    if (!spec(r, specs::OpKind::kReshape) || sole[g.node(r).outputs[0]] != t) continue;
    const std::vector<int64_t> in = shape_of(g.node(r).inputs[0]),
                               mid = shape_of(g.node(r).outputs[0]),
                               y = shape_of(g.node(i).outputs[0]);
    const std::vector<int> p = specs::DecodePerm(g.node(t).params[specs::ops::kTransposePerm]);
    const std::vector<int64_t> perm(p.begin(), p.end());
    if (mid.size() != 6) continue;
    // The operator whose definition these three nodes are, its block size one of mid's.
    std::string op;
    int64_t b = 0;
    for (const char* kind : {"DCR", "CRD", "S2D"})
      for (int64_t block : {mid[1], mid[2], mid[3]}) {
        const std::optional<PixelShuffleForm> form = PixelShuffle(kind, in, block);
        if (op.empty() && form && form->mid == mid && form->perm == perm && form->out == y)
          op = kind, b = block;
      }
    if (op.empty()) continue;
    pixel_shuffle[i] = op;
    block_of[i] = b;
    absorbed[t] = absorbed[r] = 1;
  }
  // A channel_scale or bias_add whose vector is a reshape, read only there, of a tensor that
  // ONNX broadcasting already aligns with the axis ([1, 64, 1] for axis 1 of [1, 64, 256], as an
  // RMS norm's per-row scale arrives): Mul or Add of that tensor, as the model had it (the
  // reshapes between hid ONNX Runtime's RMS-norm fusion: T5 3% slower).
  std::vector<int> broadcast_of(g.num_nodes(), -1);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const bool scale = spec(i, specs::OpKind::kChannelScale);
    if (!scale && !spec(i, specs::OpKind::kBiasAdd)) continue;
    const Node& n = g.node(i);
    const int r = producer[n.inputs[1]];
    if (!spec(r, specs::OpKind::kReshape) || sole[n.inputs[1]] != i || shift_of[i] >= 0 ||
        absorbed[i])
      continue;
    const int u = g.node(r).inputs[0];
    const std::vector<int64_t>& x = g.value(n.inputs[0]).dims;
    const std::vector<int64_t>& ud = g.value(u).dims;
    const int64_t axis = n.params[scale ? specs::ops::kChannelScaleAxis : specs::ops::kBiasAxis];
    const int64_t rx = static_cast<int64_t>(x.size()), ru = static_cast<int64_t>(ud.size());
    bool aligned = ru <= rx && axis < rx && rx - ru <= axis && g.value(u).rank_known &&
                   g.value(u).elem_type == g.value(n.inputs[0]).elem_type;
    for (int64_t d = 0; d < ru && aligned; ++d)
      aligned = ud[d] == (rx - ru + d == axis ? x[axis] : 1);
    if (!aligned) continue;
    broadcast_of[i] = u;
    absorbed[r] = 1;
  }
  Graph out = g;
  std::vector<std::shared_ptr<const Node>> nodes;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (inlined[i] || absorbed[i]) continue;
    if (opset >= 11 && n.opaque() && n.domain == kMicrosoftDomain &&
        n.op_type == "DynamicQuantizeMatMul") {
      WriteOutDynamicQuantizeMatMul(n, &out, &nodes);
      continue;
    }
    if (broadcast_of[i] >= 0) {
      nodes.push_back(std::make_shared<const Node>(
          OnnxNode(spec(i, specs::OpKind::kChannelScale) ? "Mul" : "Add", n.name,
                   {n.inputs[0], broadcast_of[i]}, n.outputs, onnx::NodeProto())));
      continue;
    }
    // A square as Pow(x, 2), the form PyTorch writes for x ** 2 and the one ONNX Runtime's
    // RMS-norm fusion matches (T5's norm in ONNX Runtime: 3% slower written as Mul).
    if (spec(i, specs::OpKind::kEwMul) && n.inputs[0] == n.inputs[1] &&
        IsFloatType(g.value(n.inputs[0]).elem_type)) {
      const int e = out.AddConstant(
          n.name + "_two", HostTensor::FromDoubles(g.value(n.inputs[0]).elem_type, {}, {2.0}));
      nodes.push_back(std::make_shared<const Node>(
          OnnxNode("Pow", n.name, {n.inputs[0], e}, n.outputs, onnx::NodeProto())));
      continue;
    }
    if (!pixel_shuffle[i].empty()) {
      const int r = producer[g.node(producer[n.inputs[0]]).inputs[0]];
      onnx::NodeProto proto;
      ExportContext::AttrInt(&proto, "blocksize", block_of[i]);
      const bool s2d = pixel_shuffle[i] == "S2D";
      if (!s2d) ExportContext::AttrString(&proto, "mode", pixel_shuffle[i]);
      nodes.push_back(std::make_shared<const Node>(OnnxNode(s2d ? "SpaceToDepth" : "DepthToSpace",
                                                            n.name, {g.node(r).inputs[0]},
                                                            n.outputs, std::move(proto))));
      continue;
    }
    if (spec(i, specs::OpKind::kConcat) && n.inputs.size() == 2) {
      std::vector<int> inputs;
      flatten(i, &inputs);
      if (inputs.size() > 2) {
        onnx::NodeProto proto;
        ExportContext::AttrInt(&proto, "axis", axis_of(i));
        nodes.push_back(std::make_shared<const Node>(
            OnnxNode("Concat", n.name, std::move(inputs), n.outputs, std::move(proto))));
        continue;
      }
    }
    if (shift_of[i] >= 0) {
      const Node& shift = g.node(shift_of[i]);
      const int64_t channels = g.value(n.inputs[0]).dims[1];
      const HostTensor &scale = *g.value(n.inputs[1]).constant,
                       &bias = *g.value(shift.inputs[1]).constant;
      if (scale.NumElements() == channels && bias.NumElements() == channels &&
          scale.elem_type == bias.elem_type) {
        std::vector<int> inputs = {n.inputs[0]};
        const std::vector<double> zeros(channels, 0.0), ones(channels, 1.0);
        for (const auto& [base, values] :
             std::vector<std::pair<std::string, std::vector<double>>>{{"scale", scale.ToDoubles()},
                                                                      {"shift", bias.ToDoubles()},
                                                                      {"mean", zeros},
                                                                      {"variance", ones}}) {
          inputs.push_back(out.AddConstant(
              n.name + "_" + base, HostTensor::FromDoubles(scale.elem_type, {channels}, values)));
        }
        onnx::NodeProto proto;
        ExportContext::AttrFloat(&proto, "epsilon", 0.f);
        nodes.push_back(std::make_shared<const Node>(OnnxNode(
            "BatchNormalization", n.name, std::move(inputs), shift.outputs, std::move(proto))));
        continue;
      }
      nodes.push_back(g.node_ptr(i));
      nodes.push_back(g.node_ptr(shift_of[i]));  // kept as they are: its readers follow it
      continue;
    }
    nodes.push_back(g.node_ptr(i));
  }
  out.SetNodes(std::move(nodes));
  return out;
}

// The tensors of initializers whose data is written later, straight from the tensor (see
// ExportOnnxFile), by the initializer's index in the graph (the ones an operator's export adds,
// small shapes and the like, keep their data).
using DeferredData = std::map<int, std::shared_ptr<const HostTensor>>;

// An initializer: with its raw data, or, when `deferred` is given, with a one-byte placeholder
// instead (the ONNX checker wants one data field and does not compare its size with the dims)
// and the tensor kept in `deferred`.
void AddInitializer(const std::shared_ptr<const HostTensor>& t, const std::string& name,
                    onnx::GraphProto* gp, DeferredData* deferred) {
  onnx::TensorProto* proto = gp->add_initializer();
  if (!deferred || t->NumElements() == 0) {
    ToTensorProto(*t, name, proto);
    return;
  }
  proto->set_name(name);
  proto->set_data_type(t->elem_type);
  for (int64_t d : t->dims) proto->add_dims(d);
  proto->set_raw_data(std::string(1, '\0'));
  (*deferred)[gp->initializer_size() - 1] = t;
}

// ONNX Runtime refuses a model with two nodes of one (non-empty) name. Names come from the
// nodes a pass made out of one (a Split imported as slices "/Split_1", "/Split_2" beside the
// model's own "/Split_1"): a repeated name gets the first free "_<k>" suffix.
void UniqueNodeNames(onnx::GraphProto* gp) {
  std::unordered_set<std::string> used;
  for (const auto& n : gp->node())
    if (!n.name().empty()) used.insert(n.name());
  std::unordered_set<std::string> seen;
  for (auto& n : *gp->mutable_node()) {
    if (n.name().empty() || seen.insert(n.name()).second) continue;
    std::string name;
    for (int k = 2; name.empty() || used.count(name); ++k)
      name = n.name() + "_" + std::to_string(k);
    used.insert(name);
    seen.insert(name);
    n.set_name(name);
  }
}

Status ExportGraph(const Graph& original, onnx::GraphProto* gp, int64_t opset,
                   DeferredData* deferred) {
  const Graph g = RestoreOnnxForms(original, opset);
  ExportContext ctx(g, gp, opset);
  for (int v : g.inputs()) {
    SetValueInfo(g.value(v), gp->add_input());
    // An input with a default (an initializer of the same name) keeps it.
    if (g.value(v).input_default)
      AddInitializer(g.value(v).input_default, g.value(v).name, gp, deferred);
  }
  std::vector<int> uses = g.UseCounts();
  for (int v = 0; v < g.num_values(); ++v)
    if (g.value(v).constant && uses[v] > 0)
      AddInitializer(g.value(v).constant, g.value(v).name, gp, deferred);
  for (const auto& np : g.nodes()) VERISUB_RETURN_IF_ERROR(ExportNode(ctx, gp, *np));
  for (int v : g.outputs()) SetValueInfo(g.value(v), gp->add_output());
  UniqueNodeNames(gp);
  return Status::Ok();
}

Status ExportModel(const Graph& g, onnx::ModelProto* model, DeferredData* deferred) {
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
  VERISUB_RETURN_IF_ERROR(ExportGraph(g, gp, opset, deferred));
  try {
    onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    return InternalError(std::string("exported model fails the ONNX checker: ") + e.what());
  }
  return Status::Ok();
}

// Bytes of a deferred initializer's raw data (its tensor's own element type).
uint64_t RawDataBytes(const HostTensor& t) {
  return static_cast<uint64_t>(TensorBytes(t.dims, ElemTypeSize(t.elem_type)));
}

// A length-delimited field's tag and length.
std::string FieldHeader(int field, uint64_t length) {
  using Wire = google::protobuf::internal::WireFormatLite;
  using Coded = google::protobuf::io::CodedOutputStream;
  uint8_t buf[16];
  uint8_t* end =
      Coded::WriteVarint32ToArray(Wire::MakeTag(field, Wire::WIRETYPE_LENGTH_DELIMITED), buf);
  end = Coded::WriteVarint64ToArray(length, end);
  return std::string(reinterpret_cast<char*>(buf), static_cast<size_t>(end - buf));
}

// Writes `raw`, the bytes of `t` (RawTensorBytes): a weight still in its model file is written
// straight from the mapping, its pages mapped in one call and dropped from the process after.
Status WriteRaw(const base::PieceWriter& write, const HostTensor& t, std::string_view raw) {
  return t.f32.WithBytes([&](std::string_view) { return write(raw); });
}

// Writes `model` in protobuf's wire format, each deferred initializer's raw data straight from
// its tensor: ModelProto's fields but the graph (7), then the graph: its fields but the
// initializers (5), then each initializer as its fields but the raw data (9), then the raw data.
// Protobuf parsers accept fields in any order, and re-serializing what they parse gives exactly
// SerializeToString of the model with its data (the test checks it).
// `total` (when given) hears the serialized size before the first piece is written.
Status WriteModel(onnx::ModelProto model, const DeferredData& deferred,
                  const base::PieceWriter& write,
                  const std::function<Status(uint64_t bytes)>& total = nullptr) {
  std::unique_ptr<onnx::GraphProto> graph(model.release_graph());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  initializers.Swap(graph->mutable_initializer());
  const size_t n = static_cast<size_t>(initializers.size());
  // Per initializer: its fields (all of them where its data is not deferred), the deferred data's
  // size, the whole tensor's size.
  std::vector<std::string> meta(n);
  std::vector<uint64_t> raw_bytes(n, 0), tensor_bytes(n);
  std::vector<const HostTensor*> data(n, nullptr);
  uint64_t graph_bytes = graph->ByteSizeLong();
  for (size_t i = 0; i < n; ++i) {
    onnx::TensorProto& t = initializers[static_cast<int>(i)];
    if (auto it = deferred.find(static_cast<int>(i)); it != deferred.end()) {
      data[i] = it->second.get();
      t.clear_raw_data();
      raw_bytes[i] = RawDataBytes(*data[i]);
    }
    meta[i] = t.SerializeAsString();
    tensor_bytes[i] =
        meta[i].size() + (data[i] ? FieldHeader(9, raw_bytes[i]).size() + raw_bytes[i] : 0);
    graph_bytes += FieldHeader(5, tensor_bytes[i]).size() + tensor_bytes[i];
  }
  const std::string head = model.SerializeAsString();
  if (head.size() + graph_bytes + 16 > static_cast<uint64_t>(INT_MAX))
    return FailedPrecondition("the model has " + std::to_string(head.size() + graph_bytes) +
                              " bytes, over protobuf's 2 GiB: write it with its weights as "
                              "external data (ExportFileOptions::max_inline_bytes)");
  const std::string graph_header = FieldHeader(7, graph_bytes);
  if (total) VERISUB_RETURN_IF_ERROR(total(head.size() + graph_header.size() + graph_bytes));
  VERISUB_RETURN_IF_ERROR(write(head));
  VERISUB_RETURN_IF_ERROR(write(graph_header));
  VERISUB_RETURN_IF_ERROR(write(graph->SerializeAsString()));
  std::string scratch;
  for (size_t i = 0; i < n; ++i) {
    VERISUB_RETURN_IF_ERROR(write(FieldHeader(5, tensor_bytes[i])));
    VERISUB_RETURN_IF_ERROR(write(meta[i]));
    if (!data[i]) continue;
    const std::string_view raw = RawTensorBytes(*data[i], &scratch);
    if (raw.size() != raw_bytes[i])
      return InternalError("export: initializer '" + initializers[static_cast<int>(i)].name() +
                           "' has " + std::to_string(raw.size()) + " bytes of data, expected " +
                           std::to_string(raw_bytes[i]));
    VERISUB_RETURN_IF_ERROR(write(FieldHeader(9, raw_bytes[i])));
    VERISUB_RETURN_IF_ERROR(WriteRaw(write, *data[i], raw));
  }
  return Status::Ok();
}

// ONNX external data: every deferred initializer's bytes in PATH.data (each at an offset aligned
// to 64 bytes, 4096 from 1 MiB on), the tensor naming its location (the file's name, relative to
// the model), offset and length; then the model, now small, written as usual. The data file first,
// so that a model file that exists has its data beside it; when the model cannot be written the
// data goes too.
Status WriteWithExternalData(onnx::ModelProto model, const DeferredData& deferred,
                             const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    return FailedPrecondition(path +
                              ": a model over 2 GiB is written with its weights in a "
                              "file beside it (ONNX external data): give a regular file's path");
  const std::string data_name = fs::path(path).filename().string() + ".data";
  const std::string data_path = (fs::path(path).parent_path() / data_name).string();
  // A tensor of 1 MiB or more starts on a 4 KiB page, as ONNX Runtime writes external data
  // itself (ModelSavingOptions' align_threshold and on_disk_alignment_factor): on the CPU it maps
  // such tensors from the file instead of reading them into buffers of its own.
  constexpr uint64_t kAlign = 64, kPage = 4096, kPageAlignFrom = uint64_t{1} << 20;
  std::vector<std::pair<uint64_t, const HostTensor*>> pieces;  // offset, tensor
  uint64_t offset = 0;
  for (const auto& [index, t] : deferred) {
    const uint64_t length = RawDataBytes(*t);
    const uint64_t align = length >= kPageAlignFrom ? kPage : kAlign;
    offset = (offset + align - 1) / align * align;
    onnx::TensorProto* proto = model.mutable_graph()->mutable_initializer(index);
    proto->clear_raw_data();
    proto->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const std::string& key, const std::string& value) {
      auto* e = proto->add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    add("location", data_name);
    add("offset", std::to_string(offset));
    add("length", std::to_string(length));
    pieces.emplace_back(offset, t.get());
    offset += length;
  }
  VERISUB_RETURN_IF_ERROR(base::WriteFileAtomically(data_path, [&](const base::PieceWriter& write) {
    std::string scratch;
    uint64_t at = 0;
    for (const auto& [start, t] : pieces) {
      if (start > at) VERISUB_RETURN_IF_ERROR(write(std::string(start - at, '\0')));
      const std::string_view raw = RawTensorBytes(*t, &scratch);
      VERISUB_RETURN_IF_ERROR(WriteRaw(write, *t, raw));
      at = start + raw.size();
    }
    return Status::Ok();
  }));
  std::string bytes;
  Status written = model.SerializeToString(&bytes)
                       ? base::WriteFileAtomically(path, bytes)
                       : InternalError(path + ": protobuf serialization failed");
  if (!written.ok()) fs::remove(data_path, ec);
  return written;
}

}  // namespace

Status ExportOnnxModel(const Graph& g, onnx::ModelProto* model) {
  return ExportModel(g, model, nullptr);
}

// The weights are not copied into the proto and then into a serialized string (two fresh copies
// of every weight: on the 2-core machine each costs about 0.3 s per 100 MB of page faults):
// WriteModel writes them from the graph's tensors.
Status ExportOnnxFile(const Graph& g, const std::string& path, const ExportFileOptions& options) {
  onnx::ModelProto model;
  DeferredData deferred;
  VERISUB_RETURN_IF_ERROR(ExportModel(g, &model, &deferred).WithContext(path));
  uint64_t bytes = model.ByteSizeLong();
  for (const auto& [index, t] : deferred)
    bytes += RawDataBytes(*t) + 22;  // two field headers around its data at most (WriteModel)
  if (bytes <= options.max_inline_bytes)
    return base::WriteFileAtomically(path, [&](const base::PieceWriter& write) {
      return WriteModel(std::move(model), deferred, write).WithContext(path);
    });
  return WriteWithExternalData(std::move(model), deferred, path);
}

Status ExportOnnxToBuffer(const Graph& g,
                          const std::function<StatusOr<char*>(uint64_t bytes)>& allocate) {
  onnx::ModelProto model;
  DeferredData deferred;
  VERISUB_RETURN_IF_ERROR(ExportModel(g, &model, &deferred));
  char* out = nullptr;
  uint64_t size = 0, at = 0;
  VERISUB_RETURN_IF_ERROR(WriteModel(
      std::move(model), deferred,
      [&](std::string_view piece) -> Status {
        if (piece.size() > size - at)
          return InternalError("export: the model's pieces outgrew its computed size");
        std::memcpy(out + at, piece.data(), piece.size());
        at += piece.size();
        return Status::Ok();
      },
      [&](uint64_t bytes) -> Status {
        auto buffer = allocate(bytes);
        if (!buffer.ok()) return buffer.status();
        out = *buffer;
        size = bytes;
        return Status::Ok();
      }));
  if (at != size)
    return InternalError("export: " + std::to_string(at) + " bytes written of " +
                         std::to_string(size));
  return Status::Ok();
}

}  // namespace verisub::runtime
