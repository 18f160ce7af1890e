// Restoring a rewritten graph's input and output names.
#include "rewriter/interface.h"

#include <memory>

#include "onnx/onnx_pb.h"

namespace verisub::rewriter {

using runtime::Graph;
using runtime::Node;
using runtime::Value;

GraphInterface InterfaceOf(const Graph& g) {
  GraphInterface i;
  for (int v : g.inputs()) i.inputs.push_back(g.value(v).name);
  for (int v : g.outputs()) i.outputs.push_back(g.value(v).name);
  return i;
}

Status RestoreInterface(const GraphInterface& want, Graph* g) {
  if (InterfaceOf(*g).inputs != want.inputs)
    return InternalError("the rewritten graph's inputs differ from the model's");
  if (g->outputs().size() != want.outputs.size())
    return InternalError("the rewritten graph has " + std::to_string(g->outputs().size()) +
                         " outputs, the model " + std::to_string(want.outputs.size()));
  std::vector<char> is_input(g->num_values(), 0);
  for (int v : g->inputs()) is_input[v] = 1;
  std::vector<int> times_output(g->num_values(), 0);
  for (int v : g->outputs()) ++times_output[v];
  for (size_t k = 0; k < want.outputs.size(); ++k) {
    const std::string& name = want.outputs[k];
    int v = g->outputs()[k];
    if (g->value(v).name == name) continue;
    // Whatever holds the name now (a value left over from before the rewrite) gives it up.
    for (int w = 0; w < g->num_values(); ++w) {
      if (w == v || g->value(w).name != name) continue;
      if (is_input[w]) return InternalError("output '" + name + "' became a graph input");
      g->mutable_value(w).name = g->UniqueName(name);
    }
    if (!is_input[v] && times_output[v] == 1) {
      g->mutable_value(v).name = name;
      continue;
    }
    Value out = g->value(v);
    out.name = name;
    out.constant.reset();
    int id = g->AddValue(std::move(out));
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type("Identity");
    Node n;
    n.name = g->UniqueName("verisub_output_" + name);
    n.op_type = "Identity";
    n.onnx = std::move(proto);
    n.inputs = {v};
    n.outputs = {id};
    g->AddNode(std::move(n));
    --times_output[v];
    g->mutable_outputs()[k] = id;
  }
  return Status::Ok();
}

}  // namespace verisub::rewriter
