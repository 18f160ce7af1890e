// Test graph builder.
#include "tests/rewriter/test_graphs.h"

#include <gtest/gtest.h>

#include <random>

#include "onnx/onnx_pb.h"
#include "rewriter/rule_source.h"
#include "specs/registry.h"

namespace verisub::rewriter::testing {

using runtime::Graph;
using runtime::HostTensor;
using runtime::Node;
using runtime::Value;

void GraphBuilder::Fail(const Status& st) {
  if (report_) ADD_FAILURE() << st.message();
  if (status_.ok()) status_ = st;
}

int GraphBuilder::Input(const std::string& name, std::vector<int64_t> dims) {
  Value v;
  v.name = name;
  v.dims = dims;
  v.rank_known = true;
  int id = g_.AddValue(std::move(v));
  g_.mutable_inputs().push_back(id);
  return id;
}

int GraphBuilder::Weight(const std::string& name, std::vector<int64_t> dims, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  int64_t count = runtime::CountElements(dims);
  if (count < 0 || count > (int64_t{1} << 24)) {
    Fail(
        InvalidArgument("weight '" + name + "': bad or huge shape " + runtime::DimsToString(dims)));
    dims = {1};
    count = 1;
  }
  std::vector<double> data(count);
  for (double& d : data) d = dist(rng);
  Value v;
  v.name = name;
  v.dims = dims;
  v.rank_known = true;
  v.constant =
      std::make_shared<const HostTensor>(HostTensor::FromDoubles(runtime::kFloat, dims, data));
  return g_.AddValue(std::move(v));
}

std::vector<int> GraphBuilder::Ops(std::string_view op_text, std::vector<int> inputs) {
  size_t bracket = op_text.find('[');
  std::string name(op_text.substr(0, bracket));
  const specs::OpSpec* spec = specs::FindOp(name);
  if (!spec) {
    Fail(InvalidArgument("unknown operator '" + name + "'"));
    return {};
  }
  Node n;
  n.op = spec->kind;
  n.params = spec->DefaultParams();
  if (bracket != std::string_view::npos) {
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
      size_t eq = kv.find('=');
      const specs::ParamDesc* d =
          eq == std::string_view::npos ? nullptr : spec->FindParam(kv.substr(0, eq));
      if (!d) {
        Fail(InvalidArgument("bad parameter '" + std::string(kv) + "'"));
      } else if (Status st = specs::ParseParamValue(*d, kv.substr(eq + 1), &n.params); !st.ok()) {
        Fail(st.WithContext(std::string(kv)));
      }
      pos = end + 1;
    }
  }
  n.inputs = inputs;
  n.name = name + std::to_string(counter_++);
  for (int k = 0; k < spec->num_outputs; ++k) {
    Value v;
    v.name = n.name + "_out" + std::to_string(k);
    n.outputs.push_back(g_.AddValue(std::move(v)));
  }
  std::vector<int> outs = n.outputs;
  g_.AddNode(std::move(n));
  return outs;
}

int GraphBuilder::Opaque(const std::string& op_type, int input) {
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

Graph GraphBuilder::Finish() {
  (void)TryFinish();  // reports its errors to the running test
  return finished_;
}

StatusOr<Graph> GraphBuilder::TryFinish() {
  finished_ = g_;
  if (!status_.ok()) return status_;
  for (int i = 0; i < g_.num_nodes(); ++i) {
    const Node& n = g_.node(i);
    const int arity = n.op ? specs::GetOp(*n.op).num_inputs : 1;
    if (static_cast<int>(n.inputs.size()) != arity) {
      Fail(InvalidArgument("node '" + n.name + "' takes " + std::to_string(arity) +
                           " inputs, has " + std::to_string(n.inputs.size())));
      return status_;
    }
  }
  Graph g = g_;
  g.mutable_opsets().push_back({"", 13});
  // Opaque outputs take their input's dims, known only once the spec nodes before them are
  // inferred: alternate until nothing changes.
  Status st;
  for (int pass = 0; pass <= g.num_nodes(); ++pass) {
    st = runtime::InferSpecTypes(&g);
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
  finished_ = g;
  if (!st.ok()) {
    Fail(st);
    return st;
  }
  Status check = runtime::CheckGraph(g);
  if (!check.ok()) {
    Fail(check);
    return check;
  }
  return g;
}

std::shared_ptr<const RuleSet> Rules(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  auto rules = ParseRulesText(text, "test");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  if (!rules.ok()) return nullptr;
  RuleSetOptions options;
  options.proved_only = false;
  auto set = RuleSet::Compile(std::move(rules).value(), options);
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? *set : nullptr;
}

std::shared_ptr<const RuleSet> HandwrittenRules() {
  auto rules = LoadRules("data/rules/handwritten.txt");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  if (!rules.ok()) return nullptr;
  RuleSetOptions options;
  options.proved_only = false;
  auto set = RuleSet::Compile(std::move(rules).value(), options);
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? *set : nullptr;
}

int CountOp(const Graph& g, const std::string& kind) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->KindName() == kind;
  return n;
}

}  // namespace verisub::rewriter::testing
