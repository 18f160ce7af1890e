// ONNX import: parse, check, infer shapes, build the graph, fold constants, map onto spec ops.
#include "runtime/onnx_import.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "base/file_io.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "runtime/constant_folding.h"
#include "runtime/control_flow.h"
#include "runtime/float16.h"
#include "runtime/onnx_functions.h"
#include "runtime/onnx_newer_opsets.h"
#include "runtime/onnx_node_inference.h"
#include "runtime/onnx_written_out.h"
#include "runtime/op_mapping.h"
#include "runtime/ort_contrib.h"
#include "runtime/shape_folding.h"
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

using WeightMap = std::unordered_map<std::string, std::shared_ptr<const HostTensor>>;
// Per initializer of the main graph: its raw data where it was left in the file (see
// ParseModelLeavingWeightsInFile), else nullopt.
using RawViews = std::vector<std::optional<std::string_view>>;
// The mapped files the views lie in (the model, its external data files): shared with the
// float32 weights left in them.
using MappedFiles = std::vector<std::shared_ptr<const base::MappedFile>>;

// Floating-point initializers with at least this many bytes of raw data are read from the file
// where they lie; smaller ones (and every integer tensor: shapes, indices) are parsed into the
// proto as usual, so ONNX's checker and shape inference see their data.
constexpr size_t kLeftInFileBytes = 64 << 10;

// Gives `t` its raw data `bytes` (lying in a mapped file) by that rule: copied into the proto, or
// left in the file, the proto holding a one-byte placeholder (ONNX's checker wants one data field
// and does not compare its size with the dims). Returns the view to decode from, or nullopt.
std::optional<std::string_view> SetRawDataOrLeaveInFile(onnx::TensorProto* t,
                                                        std::string_view bytes) {
  const int32_t type = t->data_type();
  const bool floating = type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE ||
                        type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
  if (!floating || bytes.size() < kLeftInFileBytes) {
    t->set_raw_data(bytes.data(), bytes.size());
    return std::nullopt;
  }
  t->set_raw_data(std::string(1, '\0'));
  return bytes;
}

// Parses `bytes` as a ModelProto as protobuf does, except that the raw data of large
// floating-point initializers of the main graph is not copied into the proto: each weight's
// bytes are then decoded once, from the file's mapping into the tensor, instead of twice through
// a string (on this machine every fresh copy of ResNet-50's 100 MB costs about 0.3 s of page
// faults). Such a tensor holds a one-byte placeholder as raw data (ONNX's checker wants one data
// field and does not compare its size with the dims) and `*raw` its bytes in `bytes`. False when
// `bytes` is not a well-formed message.
bool ParseModelLeavingWeightsInFile(std::string_view bytes, onnx::ModelProto* model,
                                    RawViews* raw) {
  namespace io = google::protobuf::io;
  using Wire = google::protobuf::internal::WireFormatLite;
  const auto delimited = [](int field) {
    return Wire::MakeTag(field, Wire::WIRETYPE_LENGTH_DELIMITED);
  };
  const uint32_t kGraph = delimited(7), kInitializer = delimited(5), kRawData = delimited(9);
  io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  // A nested message's length, checked against what is left of the input (a longer one would
  // set no limit at all, and the message would swallow the fields after it).
  auto read_length = [&](uint32_t* length) {
    return in.ReadVarint32(length) &&
           static_cast<uint64_t>(in.CurrentPosition()) + *length <= bytes.size();
  };
  std::string model_rest, graph_rest;
  bool has_graph = false;
  std::vector<std::pair<onnx::TensorProto, std::optional<std::string_view>>> initializers;
  {
    io::StringOutputStream model_stream(&model_rest), graph_stream(&graph_rest);
    io::CodedOutputStream model_out(&model_stream), graph_out(&graph_stream);
    uint32_t length = 0;
    while (const uint32_t tag = in.ReadTag()) {
      if (tag != kGraph) {
        if (!Wire::SkipField(&in, tag, &model_out)) return false;
        continue;
      }
      has_graph = true;  // a repeated graph field merges, as protobuf's parse does
      if (!read_length(&length)) return false;
      const auto graph_limit = in.PushLimit(static_cast<int>(length));
      while (const uint32_t gtag = in.ReadTag()) {
        if (gtag != kInitializer) {
          if (!Wire::SkipField(&in, gtag, &graph_out)) return false;
          continue;
        }
        if (!read_length(&length)) return false;
        const auto tensor_limit = in.PushLimit(static_cast<int>(length));
        std::string meta;
        std::optional<std::string_view> data;
        {
          io::StringOutputStream meta_stream(&meta);
          io::CodedOutputStream meta_out(&meta_stream);
          while (const uint32_t ttag = in.ReadTag()) {
            if (ttag != kRawData) {
              if (!Wire::SkipField(&in, ttag, &meta_out)) return false;
              continue;
            }
            if (!read_length(&length)) return false;
            const int at = in.CurrentPosition();
            if (!in.Skip(static_cast<int>(length))) return false;
            data = bytes.substr(static_cast<size_t>(at), length);  // the last one wins
          }
          if (!in.ConsumedEntireMessage()) return false;
        }
        in.PopLimit(tensor_limit);
        onnx::TensorProto tensor;
        if (!tensor.ParseFromString(meta)) return false;
        if (data) data = SetRawDataOrLeaveInFile(&tensor, *data);
        initializers.emplace_back(std::move(tensor), data);
      }
      if (!in.ConsumedEntireMessage()) return false;
      in.PopLimit(graph_limit);
    }
    if (!in.ConsumedEntireMessage()) return false;
  }
  if (!model->ParseFromString(model_rest)) return false;
  if (!has_graph) return true;
  onnx::GraphProto* graph = model->mutable_graph();
  if (!graph->MergeFromString(graph_rest)) return false;
  raw->clear();
  for (auto& [tensor, data] : initializers) {
    *graph->add_initializer() = std::move(tensor);
    raw->push_back(data);
  }
  return true;
}

// Decodes every initializer and checks the tensors held in node attributes. This runs before
// the ONNX checker and shape inference: those trust that a tensor's data matches its dims, and
// ONNX's shape inference can crash on a tensor whose data does not.
// `files` hold the `raw` views (the model file, its external data files). A float32 weight keeps
// its elements where they lie, its tensor holding the file open (Float32Storage::InFile: decoded
// when something reads it as floats, written by the export straight from the file); any other
// weight is decoded now and its pages dropped from the process once it is, so the peak holds
// the decoded weights and not the files beside them.
StatusOr<WeightMap> DecodeTensors(const onnx::GraphProto& gp, const RawViews& raw,
                                  const MappedFiles* files) {
  WeightMap weights;
  for (int i = 0; i < gp.initializer_size(); ++i) {
    const onnx::TensorProto& init = gp.initializer(i);
    const std::optional<std::string_view> data =
        i < static_cast<int>(raw.size()) ? raw[i] : std::nullopt;
    std::shared_ptr<const base::MappedFile> file;  // the mapping holding `data`, if any
    for (size_t k = 0; files && data && k < files->size(); ++k) {
      const char* begin = static_cast<const char*>((*files)[k]->data());
      if (data->data() >= begin && data->data() < begin + (*files)[k]->size()) file = (*files)[k];
    }
    const bool left_in_file = file && init.data_type() == onnx::TensorProto::FLOAT;
    if (file && !left_in_file) file->Populate(data->data(), data->size());
    auto t = FromTensorProto(init, data, left_in_file ? file : nullptr);
    if (file && !left_in_file) file->Release(data->data(), data->size());
    if (!t.ok()) return t.status().WithContext("initializer '" + init.name() + "'");
    weights[init.name()] = std::make_shared<const HostTensor>(std::move(*t));
  }
  for (const auto& node : gp.node())
    for (const auto& attr : node.attribute()) {
      if (!attr.has_t()) continue;
      if (!IsSupportedType(attr.t().data_type())) continue;  // left to the operator's kernel
      auto t = FromTensorProto(attr.t());
      if (!t.ok())
        return t.status().WithContext("node '" + node.name() + "' (" + node.op_type() +
                                      ") attribute '" + attr.name() + "'");
    }
  return weights;
}

StatusOr<Graph> BuildGraph(const onnx::ModelProto& model, const WeightMap& weights) {
  const onnx::GraphProto& gp = model.graph();
  Graph g;
  g.name = gp.name();
  for (const auto& op : model.opset_import())
    g.mutable_opsets().push_back({op.domain(), op.version()});
  std::unordered_map<std::string, int> ids;
  std::unordered_map<std::string, const onnx::ValueInfoProto*> infos;
  for (const auto& vi : gp.value_info()) infos[vi.name()] = &vi;
  for (const auto& vi : gp.output()) infos[vi.name()] = &vi;
  // From IR 4 on, an initializer named like a graph input is that input's default value and the
  // input stays an input (ONNX Runtime: CanOverrideInitializer). Before IR 4 every initializer
  // had to be listed as an input, and such inputs are weights.
  std::unordered_map<std::string, int> overridable;
  if (model.ir_version() >= 4)
    for (int i = 0; i < gp.input_size(); ++i) overridable[gp.input(i).name()] = i;
  std::unordered_map<std::string, bool> seen_init;
  for (const auto& init : gp.initializer()) {
    if (seen_init[init.name()])
      return InvalidArgument("initializer '" + init.name() + "' is defined twice");
    seen_init[init.name()] = true;
    if (overridable.count(init.name())) continue;
    const auto& t = weights.at(init.name());
    Value v;
    v.name = init.name();
    v.elem_type = t->elem_type;
    v.dims = t->dims;
    v.rank_known = true;
    v.constant = t;
    std::string name = v.name;
    ids[name] = g.AddValue(std::move(v));
  }
  for (const auto& in : gp.input()) {
    if (ids.count(in.name())) {
      if (g.value(ids[in.name()]).constant) continue;  // a weight listed as an input (IR < 4)
      return InvalidArgument("graph input '" + in.name() + "' is listed twice");
    }
    Value v;
    v.name = in.name();
    ReadValueInfo(in, &v);
    if (auto w = weights.find(in.name()); w != weights.end() && overridable.count(in.name())) {
      v.input_default = w->second;
      if (!v.rank_known) {
        v.elem_type = w->second->elem_type;
        v.dims = w->second->dims;
        v.rank_known = true;
      }
    }
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
    // What the node's subgraphs read from this graph: inputs after the declared ones.
    if (HasSubgraph(np))
      for (const auto& name : CapturedNames(np)) {
        auto it = ids.find(name);
        if (it == ids.end())
          return NotFound("node '" + n.name + "' (" + np.op_type() + ") reads '" + name +
                          "' in a subgraph, which is not defined before the node");
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

// ONNX's shape inference divides by strides and block sizes and trusts kernel shapes and
// dilations (convPoolShapeInference: a stride of 0 is a SIGFPE); our kernels do the same. The
// attributes that size a window are checked here, for every operator that has them, before any
// inference function sees the node.
Status CheckWindowAttributes(const onnx::NodeProto& np) {
  static const char* const kWindowOps[] = {
      "Conv",   "ConvTranspose", "ConvInteger",  "QLinearConv",  "MaxPool", "AveragePool",
      "LpPool", "MaxUnpool",     "DepthToSpace", "SpaceToDepth", "Col2Im"};
  if (!np.domain().empty() && np.domain() != "ai.onnx") return Status::Ok();
  bool window = false;
  for (const char* op : kWindowOps) window |= np.op_type() == op;
  if (!window) return Status::Ok();
  for (const auto& a : np.attribute()) {
    const std::string& name = a.name();
    int64_t min = 0;
    if (name == "strides" || name == "dilations" || name == "kernel_shape" || name == "blocksize" ||
        name == "group") {
      min = 1;
    } else if (name == "pads" || name == "output_padding") {
      min = 0;
    } else {
      continue;
    }
    // At most 2^24 as well: ONNX's inference multiplies them (a DepthToSpace blocksize of 2^40
    // squared is 0 in int64, and ONNX 1.12 divides by it; found by fuzzing).
    constexpr int64_t kMax = int64_t{1} << 24;
    auto bad = [&](int64_t v) {
      return InvalidArgument("attribute '" + name + "' has the value " + std::to_string(v) +
                             "; it must be at least " + std::to_string(min) + " and at most " +
                             std::to_string(kMax));
    };
    if (a.type() == onnx::AttributeProto::INTS || a.ints_size() > 0) {
      for (int64_t v : a.ints())
        if (v < min || v > kMax) return bad(v);
    } else if (a.type() == onnx::AttributeProto::INT || a.has_i()) {
      if (a.i() < min || a.i() > kMax) return bad(a.i());
    }
  }
  return Status::Ok();
}

// Axes index the dimensions of the first input (or, for operators that add one, of a tensor
// one rank larger): anything outside [-rank-1, rank] is wrong for every operator, and ONNX's
// inference functions do not all check (found by fuzzing: LayerNormalization with axis
// INT64_MAX is a segfault in ONNX 1.12's inference).
Status CheckAxisAttributes(const onnx::NodeProto& np, int64_t rank) {
  if (!np.domain().empty() && np.domain() != "ai.onnx") return Status::Ok();
  for (const auto& a : np.attribute()) {
    int64_t extra = 1;
    std::vector<int64_t> values;
    if (a.name() == "axis" && (a.type() == onnx::AttributeProto::INT || a.has_i())) {
      values = {a.i()};
    } else if (a.name() == "axes") {
      values.assign(a.ints().begin(), a.ints().end());
      extra = std::max<int64_t>(1, a.ints_size());  // Unsqueeze: axes of the output
    } else {
      continue;
    }
    for (int64_t v : values)
      if (v < -rank - extra || v > rank + extra - 1)
        return InvalidArgument("attribute '" + a.name() + "' has the value " + std::to_string(v) +
                               ", out of range for an input of rank " + std::to_string(rank));
  }
  return Status::Ok();
}

// Convolutions and pools need a data tensor of rank >= 3 and, for convolutions, a weight of the
// same rank; ONNX's inference functions read the weight's dims without checking (found by
// fuzzing: a rank-2 weight of ConvTranspose is a null dereference in ONNX 1.12).
Status CheckWindowRanks(const onnx::NodeProto& np,
                        const std::unordered_map<std::string, onnx::TypeProto>& types) {
  if (!np.domain().empty() && np.domain() != "ai.onnx") return Status::Ok();
  const std::string& op = np.op_type();
  if (op == "Gemm") {
    // Found by fuzzing: Gemm-6's inference reads dim 1 of a rank-1 B (a crash in libonnx).
    for (int i = 0; i < 2 && i < np.input_size(); ++i) {
      auto it = types.find(np.input(i));
      if (it == types.end() || !it->second.has_tensor_type() ||
          !it->second.tensor_type().has_shape())
        continue;
      int r = it->second.tensor_type().shape().dim_size();
      if (r != 2)
        return InvalidArgument("input " + std::to_string(i) + " has rank " + std::to_string(r) +
                               "; Gemm needs rank 2");
    }
    return Status::Ok();
  }
  int weight = -1;
  if (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger") weight = 1;
  if (op == "QLinearConv") weight = 3;
  const bool pool = op == "MaxPool" || op == "AveragePool" || op == "LpPool" ||
                    op == "MaxRoiPool" || op == "MaxUnpool";
  if (weight < 0 && !pool) return Status::Ok();
  auto rank = [&](int i) -> int {
    if (i >= np.input_size() || np.input(i).empty()) return -1;
    auto it = types.find(np.input(i));
    if (it == types.end() || !it->second.has_tensor_type() || !it->second.tensor_type().has_shape())
      return -1;
    return it->second.tensor_type().shape().dim_size();
  };
  const int x = rank(0);
  if (x >= 0 && x < 3)
    return InvalidArgument("input 0 has rank " + std::to_string(x) + "; " + op +
                           " needs rank 3 or more");
  if (weight >= 0) {
    const int w = rank(weight);
    if (w >= 0 && (w < 3 || (x >= 0 && w != x)))
      return InvalidArgument("the weight (input " + std::to_string(weight) + ") has rank " +
                             std::to_string(w) + ", the data rank " + std::to_string(x));
  }
  return Status::Ok();
}

// Every node's window attributes, in subgraphs too (ONNX's inference recurses into them).
Status CheckWindowAttributesEverywhere(const onnx::GraphProto& g) {
  for (const auto& np : g.node()) {
    VERISUB_RETURN_IF_ERROR(
        CheckWindowAttributes(np).WithContext("node '" + np.name() + "' (" + np.op_type() + ")"));
    for (const auto& a : np.attribute()) {
      if (a.has_g()) VERISUB_RETURN_IF_ERROR(CheckWindowAttributesEverywhere(a.g()));
      for (const auto& sub : a.graphs())
        VERISUB_RETURN_IF_ERROR(CheckWindowAttributesEverywhere(sub));
    }
  }
  return Status::Ok();
}

// ONNX's own shape inference (1.12) dereferences a missing input type in some operators'
// inference functions, which crashes on corrupt models and on known operators reading the
// output of an unknown (custom-domain) one. This pass replays the per-node type inference with
// every input type checked first: inference errors name the node, and the result says whether
// ONNX's pass (which adds data propagation) can run safely.
StatusOr<bool> GuardTypeInference(const onnx::ModelProto& model) {
  const onnx::GraphProto& gp = model.graph();
  std::unordered_map<std::string, int> opsets;
  for (const auto& op : model.opset_import())
    opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = static_cast<int>(op.version());
  std::unordered_map<std::string, onnx::TypeProto> types;
  std::unordered_map<std::string, const onnx::TensorProto*> data;
  for (const auto& in : gp.input()) types[in.name()] = in.type();
  for (const auto& init : gp.initializer()) {
    onnx::TypeProto t;
    t.mutable_tensor_type()->set_elem_type(init.data_type());
    auto* shape = t.mutable_tensor_type()->mutable_shape();
    for (int64_t d : init.dims()) shape->add_dim()->set_dim_value(d);
    types[init.name()] = t;
    data[init.name()] = &init;
  }
  bool onnx_pass_safe = true;
  for (const auto& np : gp.node()) {
    std::string where = "node '" + np.name() + "' (" + np.op_type() + ")";
    std::string domain = np.domain() == "ai.onnx" ? "" : np.domain();
    bool has_graph = false;
    for (const auto& a : np.attribute()) has_graph |= a.has_g() || a.graphs_size() > 0;
    auto version = opsets.find(domain);
    const onnx::OpSchema* schema =
        version == opsets.end() ? nullptr : FindOnnxSchema(np.op_type(), domain, version->second);
    if (!schema || has_graph) {
      // Unknown operators and control flow: outputs get an empty type; a known operator that
      // reads one is refused below rather than handed to ONNX's inference.
      for (const auto& o : np.output())
        if (!o.empty()) types[o] = onnx::TypeProto();
      continue;
    }
    std::vector<const onnx::TypeProto*> in_types;
    std::vector<const onnx::TensorProto*> in_data;
    bool untyped_input = false;
    for (const auto& in : np.input()) {
      in_types.push_back(nullptr);
      in_data.push_back(nullptr);
      if (in.empty()) continue;
      auto it = types.find(in);
      if (it == types.end())
        return NotFound(where + " reads '" + in +
                        "', which is not a graph input, an initializer or an earlier output "
                        "(missing initializer?)");
      if (it->second.value_case() == onnx::TypeProto::VALUE_NOT_SET) untyped_input = true;
      in_types.back() = &it->second;
      auto d = data.find(in);
      if (d != data.end()) in_data.back() = d->second;
    }
    VERISUB_RETURN_IF_ERROR(CheckWindowRanks(np, types).WithContext(where));
    if (np.input_size() > 0 && !np.input(0).empty()) {
      auto t = types.find(np.input(0));
      if (t != types.end() && t->second.has_tensor_type() && t->second.tensor_type().has_shape())
        VERISUB_RETURN_IF_ERROR(
            CheckAxisAttributes(np, t->second.tensor_type().shape().dim_size()).WithContext(where));
    }
    if (untyped_input) {
      // ONNX's pass would hand this node a missing type; the graph-level inference after
      // folding types it if its inputs become known.
      onnx_pass_safe = false;
      for (const auto& o : np.output())
        if (!o.empty()) types[o] = onnx::TypeProto();
      continue;
    }
    auto out = InferNodeTypes(np, *schema, in_types, in_data);
    if (!out.ok()) return out.status().WithContext(where);
    if (IsStft(np)) onnx_pass_safe = false;  // ONNX's pass would type it wrong
    for (int i = 0; i < np.output_size(); ++i)
      if (!np.output(i).empty()) types[np.output(i)] = std::move((*out)[i]);
    // A Constant's tensor is data for the nodes that read it, as an initializer's is: a Reshape
    // to a Constant shape that ONNX's pass (with data propagation) finds wrong, followed by a
    // Reshape to its Shape, crashed libonnx 1.12.
    if (domain.empty() && np.op_type() == "Constant" && np.output_size() == 1)
      for (const auto& a : np.attribute())
        if (a.name() == "value" && a.has_t()) data[np.output(0)] = &a.t();
  }
  return onnx_pass_safe;
}

// The import behind ImportOnnxModel and ImportOnnxFile (`raw`: see DecodeTensors, views into
// `*files`; the import lets go of them once the weights are decoded, and each file stays mapped
// while a float32 weight left in it lives).
StatusOr<Graph> ImportModel(onnx::ModelProto model, const std::string& source,
                            const ImportOptions& options, RawViews raw, MappedFiles* files);

// Initializers stored outside the model file (ONNX external data: a model over protobuf's 2 GiB
// keeps its weights in files beside it) are read like those inside it: each data file is mapped
// once into `files`, and each such tensor's bytes are copied into it or left in the file with a
// view in `raw` (SetRawDataOrLeaveInFile). Locations are relative to the model's folder and may
// not leave it.
// Each data file may have up to `max_file_bytes`.
Status MapExternalData(const std::string& model_path, onnx::GraphProto* gp, RawViews* raw,
                       MappedFiles* files, uint64_t max_file_bytes, uint64_t* external_bytes);

// `path` mapped read-only and parsed into `model` with its large weights left in the mapping
// (`raw`: views into it, valid while the returned mapping lives).
StatusOr<base::MappedFile> MapAndParseModel(const std::string& path, onnx::ModelProto* model,
                                            RawViews* raw) {
  auto mapped = base::MappedFile::Open(path);
  if (!mapped.ok()) return mapped.status();
  if (mapped->size() > static_cast<size_t>(INT_MAX) ||
      !ParseModelLeavingWeightsInFile(
          std::string_view(static_cast<const char*>(mapped->data()), mapped->size()), model, raw))
    return DataLoss(path + ": not an ONNX model (protobuf parse failed; truncated or corrupt?)");
  return mapped;
}

}  // namespace

namespace {

DeclaredInput Declared(const onnx::ValueInfoProto& v) {
  DeclaredInput d;
  d.name = v.name();
  d.elem_type = v.type().has_tensor_type() ? v.type().tensor_type().elem_type() : 0;
  const bool shaped = v.type().has_tensor_type() && v.type().tensor_type().has_shape();
  d.ranked = shaped;
  if (shaped)
    for (const auto& dim : v.type().tensor_type().shape().dim())
      d.dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : -1);
  return d;
}

DeclaredInterface InterfaceOf(const onnx::ModelProto& model) {
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  DeclaredInterface out;
  for (const auto& in : model.graph().input())
    if (!initializers.count(in.name())) out.inputs.push_back(Declared(in));
  for (const auto& o : model.graph().output()) out.outputs.push_back(Declared(o));
  return out;
}

}  // namespace

StatusOr<std::vector<DeclaredInput>> ReadDeclaredInputs(const std::string& path) {
  VERISUB_ASSIGN_OR_RETURN(DeclaredInterface d, ReadDeclaredInterface(path, true));
  return d.inputs;
}

StatusOr<DeclaredInterface> ReadDeclaredInterface(const std::string& data, bool is_path) {
  onnx::ModelProto model;
  if (!is_path) {
    if (!model.ParseFromString(data)) return DataLoss("<bytes>: not an ONNX model (no ModelProto)");
    return InterfaceOf(model);
  }
  RawViews raw;  // the weights stay in the file: only the graph's declarations are read
  VERISUB_ASSIGN_OR_RETURN(base::MappedFile mapped, MapAndParseModel(data, &model, &raw));
  return InterfaceOf(model);
}

StatusOr<Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return InvalidArgument(path + ": is a directory, not an ONNX model");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open file");
  if (in.peek() == std::ifstream::traits_type::eof())
    return DataLoss(path + ": empty file, not an ONNX model");
  // The parsed model holds at least the file's bytes (weights dominate): refused before parsing.
  const auto file_bytes = std::filesystem::file_size(path, ec);
  if (!ec && options.memory.max_total_bytes > 0 &&
      file_bytes > static_cast<uintmax_t>(options.memory.max_total_bytes))
    return FailedPrecondition(path + ": the model file has " + std::to_string(file_bytes) +
                              " bytes, importing it needs at least as many, over the memory "
                              "budget of " +
                              std::to_string(options.memory.max_total_bytes) +
                              " bytes in all (--max-memory-mb; MemoryBudget)");
  // Parsed from a read-only mapping of the file: no second copy of it in our memory (weights
  // dominate), and each large weight is decoded from the mapping straight into its tensor
  // (ParseModelLeavingWeightsInFile; a stream parse grew each weight string block by block:
  // seconds on AlexNet's 244 MB).
  in.close();
  onnx::ModelProto model;
  RawViews raw;  // views into the mapping: it stays open until the weights are decoded
  VERISUB_ASSIGN_OR_RETURN(base::MappedFile mapped, MapAndParseModel(path, &model, &raw));
  MappedFiles files;
  files.push_back(std::make_shared<const base::MappedFile>(std::move(mapped)));
  uint64_t external_bytes = 0;
  VERISUB_RETURN_IF_ERROR(
      MapExternalData(path, model.mutable_graph(), &raw, &files,
                      options.memory.max_total_bytes > 0
                          ? static_cast<uint64_t>(options.memory.max_total_bytes)
                          : uint64_t{1} << 40,
                      &external_bytes)
          .WithContext(path));
  if (external_bytes > 0 && options.memory.max_total_bytes > 0 &&
      file_bytes + external_bytes > static_cast<uintmax_t>(options.memory.max_total_bytes))
    return FailedPrecondition(path + ": the model and its external data have " +
                              std::to_string(file_bytes + external_bytes) +
                              " bytes, importing them needs at least as many, over the memory "
                              "budget of " +
                              std::to_string(options.memory.max_total_bytes) +
                              " bytes in all (--max-memory-mb; MemoryBudget)");
  return ImportModel(std::move(model), path, options, std::move(raw), &files);
}

StatusOr<Graph> ImportOnnxBytes(const std::string& bytes, const std::string& source,
                                const ImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.empty()) return DataLoss(source + ": empty file, not an ONNX model");
  // The file import's parse (the fuzzers reach it through here), the weights read from `bytes`.
  RawViews raw;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !ParseModelLeavingWeightsInFile(bytes, &model, &raw))
    return DataLoss(source + ": not an ONNX model (protobuf parse failed; truncated or corrupt?)");
  return ImportModel(std::move(model), source, options, std::move(raw), nullptr);
}

StatusOr<Graph> ImportOnnxModel(onnx::ModelProto model, const std::string& source,
                                const ImportOptions& options) {
  return ImportModel(std::move(model), source, options, {}, nullptr);
}

namespace {

Status MapExternalData(const std::string& model_path, onnx::GraphProto* gp, RawViews* raw,
                       MappedFiles* files, uint64_t max_file_bytes, uint64_t* external_bytes) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(model_path).parent_path();
  std::unordered_map<std::string, size_t> opened;  // location -> index in `files`
  for (int i = 0; i < gp->initializer_size(); ++i) {
    onnx::TensorProto* t = gp->mutable_initializer(i);
    if (t->data_location() != onnx::TensorProto::EXTERNAL) continue;
    const std::string what = "initializer '" + t->name() + "' (external data)";
    std::string location;
    uint64_t offset = 0, length = 0;
    bool has_length = false;
    for (const auto& entry : t->external_data()) {
      auto number = [&](uint64_t* out) -> Status {
        const std::string& v = entry.value();
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size())
          return DataLoss(what + ": " + entry.key() + " '" + v + "' is not a byte count");
        return Status::Ok();
      };
      if (entry.key() == "location") {
        location = entry.value();
      } else if (entry.key() == "offset") {
        VERISUB_RETURN_IF_ERROR(number(&offset));
      } else if (entry.key() == "length") {
        VERISUB_RETURN_IF_ERROR(number(&length));
        has_length = true;
      }  // "checksum" and keys of later versions are not needed to read the data
    }
    if (location.empty()) return DataLoss(what + " names no location");
    const fs::path rel(location);
    bool escapes = rel.is_absolute() || location.find('\0') != std::string::npos;
    for (const fs::path& part : rel) escapes |= part == "..";
    if (escapes)
      return InvalidArgument(what + ": location '" + location +
                             "' is not a path inside the model's folder");
    auto it = opened.find(location);
    if (it == opened.end()) {
      auto mapped = base::MappedFile::Open((dir / rel).string(), max_file_bytes);
      if (!mapped.ok()) return mapped.status().WithContext(what);
      *external_bytes += mapped->size();
      files->push_back(std::make_shared<const base::MappedFile>(std::move(mapped).value()));
      it = opened.emplace(location, files->size() - 1).first;
    }
    const base::MappedFile& f = *(*files)[it->second];
    if (offset > f.size())
      return DataLoss(what + ": offset " + std::to_string(offset) + " is past the end of '" +
                      location + "' (" + std::to_string(f.size()) + " bytes)");
    if (!has_length) length = f.size() - offset;
    if (length > f.size() - offset)
      return DataLoss(what + ": " + std::to_string(length) + " bytes from offset " +
                      std::to_string(offset) + " run past the end of '" + location + "' (" +
                      std::to_string(f.size()) + " bytes)");
    t->clear_external_data();
    t->clear_data_location();
    const std::optional<std::string_view> view = SetRawDataOrLeaveInFile(
        t, std::string_view(static_cast<const char*>(f.data()) + offset, length));
    if (!view) continue;
    if (raw->size() < static_cast<size_t>(gp->initializer_size()))
      raw->resize(static_cast<size_t>(gp->initializer_size()));
    (*raw)[static_cast<size_t>(i)] = view;
  }
  return Status::Ok();
}

StatusOr<Graph> ImportModel(onnx::ModelProto model, const std::string& source,
                            const ImportOptions& options, RawViews raw, MappedFiles* files) {
  auto fail = [&](const Status& st) { return st.WithContext(source); };
  if (!model.has_graph()) return fail(DataLoss("not an ONNX model (no graph)"));
  int64_t opset = -1;
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
  if (opset < 0)
    return fail(InvalidArgument("the model imports no default-domain (ai.onnx) opset"));
  if (opset < kMinOpset || opset > kNewestReadOpset)
    return fail(Unimplemented("unsupported opset " + std::to_string(opset) +
                              " (supported: " + std::to_string(kMinOpset) + " to " +
                              std::to_string(kNewestReadOpset) + ")"));
  if (model.functions_size() > 0) {  // model-local functions: their bodies in place of calls
    auto inlined = InlineLocalFunctions(&model);
    if (!inlined.ok()) return fail(inlined.status());
  }
  // Newer than 17: lowered to 17, the opset the kernels, mappings and patterns are written for
  // (and the newest Debian 12's ONNX 1.12 knows), whatever ONNX library is linked.
  if (opset > kLoweredOpset) {
    auto lowered = LowerNewerOpset(&model, opset);
    if (!lowered.ok()) return fail(lowered.status());
    opset = kLoweredOpset;
  }
  VERISUB_RETURN_IF_ERROR(fail(ApplyInputShapes(options.input_shapes, model.mutable_graph())));
  if (options.require_static_shapes)
    VERISUB_RETURN_IF_ERROR(fail(CheckInputShapesStatic(model.graph())));
  if (!raw.empty() && static_cast<int>(raw.size()) != model.graph().initializer_size())
    return fail(InternalError("initializers changed before they were decoded"));
  auto weights = DecodeTensors(model.graph(), raw, files);
  raw.clear();
  if (files) files->clear();
  if (!weights.ok()) return fail(weights.status());
  if (std::string why = HardwareSpecificOrtNode(model.graph()); !why.empty())
    return fail(Unimplemented(why));
  RewriteOrtContribOps(&model, opset);
  WriteOutOperators(&model, opset);
  // ONNX 1.12's checker wants a shape on every tensor input and output of the main graph, where
  // the format (and ONNX Runtime, and later checkers) allow a tensor of unknown rank: such a
  // declaration gets an empty shape for the check only, taken off again after it.
  std::vector<onnx::TypeProto_Tensor*> shapeless;
  for (auto* list :
       {model.mutable_graph()->mutable_input(), model.mutable_graph()->mutable_output()})
    for (auto& vi : *list)
      if (vi.has_type() && vi.type().has_tensor_type() && !vi.type().tensor_type().has_shape())
        shapeless.push_back(vi.mutable_type()->mutable_tensor_type());
  for (auto* t : shapeless) t->mutable_shape();
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return fail(InvalidArgument(std::string("ONNX checker: ") + e.what()));
  }
  for (auto* t : shapeless) t->clear_shape();
  VERISUB_RETURN_IF_ERROR(fail(CheckWindowAttributesEverywhere(model.graph())));
  auto onnx_pass_safe = GuardTypeInference(model);
  if (!onnx_pass_safe.ok()) return fail(onnx_pass_safe.status());
  if (*onnx_pass_safe) {
    try {
      onnx::ShapeInferenceOptions si(/*check_type=*/true, /*strict_mode=*/1, /*data_prop=*/true);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), si);
    } catch (const std::exception& e) {
      return fail(InvalidArgument(std::string("ONNX shape inference: ") + e.what()));
    }
  }
  auto graph = BuildGraph(model, *weights);
  if (!graph.ok()) return fail(graph.status());
  Graph g = std::move(*graph);
  VERISUB_RETURN_IF_ERROR(fail(CheckMemoryBudget(g, options.memory, /*executor=*/false)));
  if (options.fold_constants) {
    ShapeFoldOptions so;
    so.fold.max_elements = options.fold_max_elements;
    so.fold.keep_dequantized_weights = true;
    so.max_rounds = options.max_shape_fold_rounds;
    auto report = FoldShapes(&g, so);
    if (!report.ok()) return fail(report.status());
  }
  if (options.float16_as_float32) ComputeFloat16InFloat32(&g);
  if (options.map_to_spec_ops && opset >= kMinMappedOpset) {
    VERISUB_RETURN_IF_ERROR(fail(MapToSpecOps(&g)));
    if (options.fold_constants) {  // e.g. the transpose of a Gemm's constant B
      FoldOptions fo;
      fo.max_elements = options.fold_max_elements;
      fo.keep_dequantized_weights = true;
      auto report = FoldConstants(&g, fo);
      if (!report.ok()) return fail(report.status());
    }
  }
  VERISUB_RETURN_IF_ERROR(fail(InferSpecTypes(&g)));
  VERISUB_RETURN_IF_ERROR(fail(CheckGraph(g)));
  // A graph that computes nothing is no model (an empty or truncated export).
  if (g.outputs().empty()) return fail(InvalidArgument("the graph has no outputs"));
  return g;
}

}  // namespace

}  // namespace verisub::runtime
