// Float16 values computed in float32 (float16.h).
#include "runtime/float16.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"
#include "runtime/onnx_ops/export_context.h"

namespace verisub::runtime {
namespace {

// A float32 copy of a float16 tensor (every float16 value is a float32 value).
HostTensor Widened(const HostTensor& t) {
  HostTensor w;
  w.elem_type = kFloat;
  w.dims = t.dims;
  const std::vector<double> v = t.ToDoubles();
  w.f32.assign(v.begin(), v.end());
  return w;
}

// A Cast node of `from` into a new value of type `to` (or into `into` when given).
Node CastNode(Graph* g, int from, int32_t to, const std::string& name, int into) {
  if (into == kNoValue) {
    Value v = g->value(from);
    v.name = g->UniqueName(v.name + (to == kFloat ? "_float32" : "_float16"));
    v.elem_type = to;
    v.constant = nullptr;
    v.input_default = nullptr;
    into = g->AddValue(std::move(v));
  }
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_op_type("Cast");
  proto->set_name(name);
  ExportContext::AttrInt(proto.get(), "to", to);
  Node n;
  n.name = name;
  n.op_type = "Cast";
  n.onnx = std::move(proto);
  n.inputs = {from};
  n.outputs = {into};
  return n;
}

// The float16 attribute a node would make a value from, rewritten for float32; false where it
// cannot be (an attribute naming float16 as a type that is not a Cast's).
bool WidenAttributes(Node* n) {
  if (!n->onnx || !n->domain.empty()) return true;
  bool changed = false, ok = true;
  onnx::NodeProto proto = *n->onnx;
  for (auto& a : *proto.mutable_attribute()) {
    if (a.type() == onnx::AttributeProto::INT && a.i() == kFloat16) {
      if (n->op_type == "Cast" && a.name() == "to") {
        a.set_i(kFloat);
        changed = true;
      } else if (a.name() == "to" || a.name() == "dtype") {
        ok = false;
      }
    }
    if (a.type() == onnx::AttributeProto::TENSOR && a.t().data_type() == kFloat16) {
      if (n->op_type != "ConstantOfShape") {
        ok = false;
        continue;
      }
      onnx::TensorProto& t = *a.mutable_t();
      std::vector<float> values;
      for (int i = 0; i < t.int32_data_size(); ++i)
        values.push_back(HalfBitsToFloat(static_cast<uint16_t>(t.int32_data(i))));
      if (t.has_raw_data())
        for (size_t i = 0; i + 1 < t.raw_data().size(); i += 2)
          values.push_back(HalfBitsToFloat(
              static_cast<uint16_t>(static_cast<uint8_t>(t.raw_data()[i]) |
                                    (static_cast<uint8_t>(t.raw_data()[i + 1]) << 8))));
      t.clear_int32_data();
      t.clear_raw_data();
      t.set_data_type(kFloat);
      for (float v : values) t.add_float_data(v);
      changed = true;
    }
  }
  if (ok && changed) n->onnx = std::make_shared<const onnx::NodeProto>(std::move(proto));
  return ok;
}

}  // namespace

bool ComputeFloat16InFloat32(Graph* g) {
  bool any = false;
  for (int v = 0; v < g->num_values(); ++v) any |= g->value(v).elem_type == kFloat16;
  if (!any) return false;
  // Every node's attributes first: nothing changes unless all of them can.
  std::vector<Node> widened;
  for (int i = 0; i < g->num_nodes(); ++i) {
    Node n = g->node(i);
    if (!WidenAttributes(&n)) return false;
    widened.push_back(std::move(n));
  }
  for (int i = 0; i < g->num_nodes(); ++i) g->SetNode(i, std::move(widened[i]));
  // The interface keeps its float16 values (the same ids throughout: casts are put beside them).
  std::vector<char> is_input(g->num_values(), 0), interface(g->num_values(), 0);
  for (int v : g->inputs()) is_input[v] = interface[v] = 1;
  for (int v : g->outputs()) interface[v] = 1;
  std::vector<std::shared_ptr<const Node>> head, tail;
  // Inputs: cast on entry, every reader reads the float32 copy.
  for (int v : std::vector<int>(g->inputs())) {
    if (g->value(v).elem_type != kFloat16) continue;
    Node cast = CastNode(g, v, kFloat, g->value(v).name + "/to_float32", kNoValue);
    const int copy = cast.outputs[0];
    g->ReplaceUses(v, copy);
    std::replace(g->mutable_outputs().begin(), g->mutable_outputs().end(), copy, v);
    head.push_back(std::make_shared<const Node>(std::move(cast)));
  }
  // Outputs: computed into a float32 value, cast back into the declared one.
  const std::vector<int> producer = g->Producers();
  for (int& out : g->mutable_outputs()) {
    const int v = out;
    if (g->value(v).elem_type != kFloat16 || is_input[v] || producer[v] < 0) continue;
    Value inner = g->value(v);
    inner.name = g->UniqueName(inner.name + "_float32");
    inner.elem_type = kFloat;
    const int computed = g->AddValue(std::move(inner));
    Node& p = g->mutable_node(producer[v]);
    std::replace(p.outputs.begin(), p.outputs.end(), v, computed);
    g->ReplaceUses(v, computed);
    std::replace(g->mutable_outputs().begin(), g->mutable_outputs().end(), computed, v);
    tail.push_back(std::make_shared<const Node>(
        CastNode(g, computed, kFloat16, g->value(v).name + "/to_float16", v)));
  }
  // Everything else in between: float32 (the values added above are).
  for (int v = 0; v < static_cast<int>(interface.size()); ++v) {
    if (interface[v] || g->value(v).elem_type != kFloat16) continue;
    Value& m = g->mutable_value(v);
    m.elem_type = kFloat;
    if (m.constant) m.constant = std::make_shared<const HostTensor>(Widened(*m.constant));
  }
  std::vector<std::shared_ptr<const Node>> nodes = head;
  nodes.insert(nodes.end(), g->nodes().begin(), g->nodes().end());
  nodes.insert(nodes.end(), tail.begin(), tail.end());
  g->SetNodes(std::move(nodes));
  return true;
}

}  // namespace verisub::runtime
