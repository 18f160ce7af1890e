// SpecGraphBuilder: values, spec and opaque nodes, then type inference.
#include "runtime/spec_graph_builder.h"

#include <memory>
#include <random>

#include "onnx/onnx_pb.h"
#include "runtime/host_tensor.h"
#include "specs/registry.h"

namespace verisub::runtime {

int SpecGraphBuilder::Input(const std::string& name, std::vector<int64_t> dims) {
  Value v;
  v.name = name;
  v.dims = std::move(dims);
  v.rank_known = true;
  int id = g_.AddValue(std::move(v));
  g_.mutable_inputs().push_back(id);
  return id;
}

int SpecGraphBuilder::Weight(const std::string& name, std::vector<int64_t> dims, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> data(CountElements(dims));
  for (double& d : data) d = dist(rng);
  return Weight(name,
                std::make_shared<const HostTensor>(HostTensor::FromDoubles(kFloat, dims, data)));
}

int SpecGraphBuilder::Weight(const std::string& name, std::shared_ptr<const HostTensor> data) {
  Value v;
  v.name = name;
  v.dims = data->dims;
  v.rank_known = true;
  v.constant = std::move(data);
  return g_.AddValue(std::move(v));
}

StatusOr<std::vector<int>> SpecGraphBuilder::Ops(std::string_view op_text,
                                                 std::vector<int> inputs) {
  const size_t bracket = op_text.find('[');
  const std::string name(op_text.substr(0, bracket));
  const specs::OpSpec* spec = specs::FindOp(name);
  if (!spec) return InvalidArgument("unknown operator '" + name + "'");
  Node n;
  n.op = spec->kind;
  n.params = spec->DefaultParams();
  if (bracket != std::string_view::npos) {
    if (op_text.back() != ']') return InvalidArgument("'" + std::string(op_text) + "' lacks ']'");
    std::string_view body = op_text.substr(bracket + 1, op_text.size() - bracket - 2);
    size_t pos = 0;
    while (pos < body.size()) {
      // Values may contain commas inside [...] (perm=[1,0]).
      size_t end = pos;
      int depth = 0;
      while (end < body.size() && (body[end] != ',' || depth > 0)) {
        depth += body[end] == '[' ? 1 : body[end] == ']' ? -1 : 0;
        ++end;
      }
      std::string_view kv = body.substr(pos, end - pos);
      const size_t eq = kv.find('=');
      const specs::ParamDesc* d =
          eq == std::string_view::npos ? nullptr : spec->FindParam(kv.substr(0, eq));
      if (!d) return InvalidArgument(name + " has no parameter '" + std::string(kv) + "'");
      VERISUB_RETURN_IF_ERROR(specs::ParseParamValue(*d, kv.substr(eq + 1), &n.params)
                                  .WithContext(name + " parameter '" + std::string(kv) + "'"));
      pos = end + 1;
    }
  }
  return Op(spec->kind, n.params, std::move(inputs));
}

std::vector<int> SpecGraphBuilder::Op(specs::OpKind op, const specs::Params& params,
                                      std::vector<int> inputs) {
  const specs::OpSpec& spec = specs::GetOp(op);
  Node n;
  n.op = op;
  n.params = params;
  n.inputs = std::move(inputs);
  n.name = spec.name + std::to_string(counter_++);
  for (int k = 0; k < spec.num_outputs; ++k) {
    Value v;
    v.name = n.name + "_out" + std::to_string(k);
    n.outputs.push_back(g_.AddValue(std::move(v)));
  }
  std::vector<int> outs = n.outputs;
  g_.AddNode(std::move(n));
  return outs;
}

int SpecGraphBuilder::Opaque(const std::string& op_type, int input) {
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_op_type(op_type);
  Node n;
  n.op_type = op_type;
  n.onnx = proto;
  n.name = op_type + std::to_string(counter_++);
  n.inputs = {input};
  Value v;
  v.name = n.name + "_out";
  v.dims = g_.value(input).dims;
  v.rank_known = !v.dims.empty() || g_.value(input).rank_known;
  int out = g_.AddValue(std::move(v));
  n.outputs = {out};
  g_.AddNode(std::move(n));
  return out;
}

StatusOr<Graph> SpecGraphBuilder::Finish() const {
  Graph g = g_;
  g.mutable_opsets().push_back({"", 13});
  // Opaque outputs take their input's dims, known only once the spec nodes before them are
  // inferred: alternate until nothing changes.
  Status st;
  for (int pass = 0; pass <= g.num_nodes(); ++pass) {
    st = InferSpecTypes(&g);
    bool changed = false;
    for (int i = 0; i < g.num_nodes(); ++i) {
      const Node& n = g.node(i);
      if (n.op) continue;
      std::vector<int64_t> dims = g.value(n.inputs[0]).dims;
      int out = n.outputs[0];
      if (g.value(out).dims == dims || !g.value(n.inputs[0]).rank_known) continue;
      Value& v = g.mutable_value(out);
      v.dims = dims;
      v.rank_known = true;
      changed = true;
    }
    if (!changed) break;
  }
  VERISUB_RETURN_IF_ERROR(st);
  VERISUB_RETURN_IF_ERROR(CheckGraph(g));
  return g;
}

}  // namespace verisub::runtime
