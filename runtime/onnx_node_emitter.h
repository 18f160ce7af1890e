// Writing one ONNX node out as several on the ModelProto, before shape inference: fresh names,
// Constant nodes for scalars and small tensors, the formulas two rewriters share (GELU's erf and
// tanh forms). Used by the rewrite of ONNX Runtime's contrib operators (ort_contrib.cc) and by
// the lowering of newer opsets (onnx_newer_opsets.cc).
#pragma once

#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/export_context.h"

namespace verisub::runtime {

// The dims value `v` is declared with in `g` (an initializer's, or a graph input's, output's or
// value_info's shape; -1 for a dimension not known), nullopt when its rank is not declared.
inline std::optional<std::vector<int64_t>> DeclaredDims(const onnx::GraphProto& g,
                                                        const std::string& v) {
  for (const auto& t : g.initializer())
    if (t.name() == v) return std::vector<int64_t>(t.dims().begin(), t.dims().end());
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& vi : *list)
      if (vi.name() == v && vi.type().has_tensor_type() && vi.type().tensor_type().has_shape()) {
        std::vector<int64_t> dims;
        for (const auto& d : vi.type().tensor_type().shape().dim())
          dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
        return dims;
      }
  return std::nullopt;
}

// The element type value `v` is declared with in `g`, 0 when not declared.
inline int32_t DeclaredElemType(const onnx::GraphProto& g, const std::string& v) {
  for (const auto& t : g.initializer())
    if (t.name() == v) return t.data_type();
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& vi : *list)
      if (vi.name() == v && vi.type().has_tensor_type()) return vi.type().tensor_type().elem_type();
  return 0;
}

class NodeEmitter {
 public:
  virtual ~NodeEmitter() = default;

 protected:
  using Attrs = std::function<void(onnx::NodeProto*)>;

  // A name fresh names must avoid.
  void Take(const std::string& s) {
    if (!s.empty()) names_.insert(s);
  }
  // Every name a graph uses, its subgraphs' included.
  void TakeNames(const onnx::GraphProto& g) {
    for (const auto& n : g.node()) {
      Take(n.name());
      for (const auto& s : n.input()) Take(s);
      for (const auto& s : n.output()) Take(s);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) TakeNames(a.g());
        for (const auto& sub : a.graphs()) TakeNames(sub);
      }
    }
    for (const auto& t : g.initializer()) Take(t.name());
    for (const auto& v : g.input()) Take(v.name());
    for (const auto& v : g.output()) Take(v.name());
    for (const auto& v : g.value_info()) Take(v.name());
  }
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  const std::string& In(int k) const { return node_->input(k); }
  bool Has(int k) const { return k < node_->input_size() && !node_->input(k).empty(); }
  const onnx::AttributeProto* Attr(const std::string& name) const {
    for (const auto& a : node_->attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  int64_t Int(const std::string& name, int64_t fallback) const {
    const auto* a = Attr(name);
    return a ? a->i() : fallback;
  }
  float Float(const std::string& name, float fallback) const {
    const auto* a = Attr(name);
    return a ? a->f() : fallback;
  }
  std::string String(const std::string& name, const std::string& fallback) const {
    const auto* a = Attr(name);
    return a ? a->s() : fallback;
  }

  // A node `op` of `inputs` into `output` (a fresh value named after the replaced node when
  // empty); returns its output.
  std::string Emit(const std::string& op, const std::vector<std::string>& inputs,
                   std::string output = "", const Attrs& attrs = {}) {
    if (output.empty()) output = Fresh(node_->output(0) + "/" + op);
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(Fresh(node_->name().empty() ? output : node_->name() + "/" + op));
    for (const std::string& in : inputs) n.add_input(in);
    n.add_output(output);
    if (attrs) attrs(&n);
    out_->push_back(std::move(n));
    return output;
  }
  // A Concat of `inputs` along `axis` (into `output` when given).
  std::string Concat(const std::vector<std::string>& inputs, int64_t axis,
                     std::string output = "") {
    return Emit("Concat", inputs, std::move(output),
                [axis](onnx::NodeProto* c) { ExportContext::AttrInt(c, "axis", axis); });
  }
  // A tensor as a Constant node; returns its value's name.
  std::string Constant(const std::string& what, onnx::TensorProto t) {
    const std::string name = Fresh(node_->output(0) + "/" + what);
    Emit("Constant", {}, name, [t = std::move(t)](onnx::NodeProto* n) {
      auto* a = n->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      *a->mutable_t() = t;
    });
    return name;
  }
  // A float tensor of `dims` as a Constant node.
  std::string Tensor(const std::string& what, const std::vector<int64_t>& dims,
                     const std::vector<float>& values) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t.add_dims(d);
    for (float v : values) t.add_float_data(v);
    return Constant(what, std::move(t));
  }
  // A float scalar as a Constant node.
  std::string Scalar(const std::string& what, double v) {
    return Tensor(what, {}, {static_cast<float>(v)});
  }
  // An int64 (or int32) tensor as a Constant node.
  std::string Ints(const std::string& what, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& values, bool int32 = false) {
    onnx::TensorProto t;
    t.set_data_type(int32 ? onnx::TensorProto::INT32 : onnx::TensorProto::INT64);
    for (int64_t d : dims) t.add_dims(d);
    for (int64_t v : values) {
      if (int32)
        t.add_int32_data(static_cast<int32_t>(v));
      else
        t.add_int64_data(v);
    }
    return Constant(what, std::move(t));
  }

  // A float scalar to combine with `like` (by default float32, whatever `like` holds).
  virtual std::string ScalarLike(const std::string& what, double v, const std::string& like) {
    (void)like;
    return Scalar(what, v);
  }

  // 0.5 x (1 + erf(x / sqrt 2)) into `output`, as PyTorch exports it (FusePatterns makes a gelu
  // of it).
  void GeluOf(const std::string& x, const std::string& output) {
    const std::string scaled = Emit("Mul", {x, ScalarLike("inv_sqrt2", 1.0 / std::sqrt(2.0), x)});
    const std::string erf = Emit("Erf", {scaled});
    const std::string one_plus = Emit("Add", {erf, ScalarLike("one", 1.0, x)});
    const std::string prod = Emit("Mul", {x, one_plus});
    Emit("Mul", {prod, ScalarLike("half", 0.5, x)}, output);
  }
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) into `output`.
  void TanhGeluOf(const std::string& x, const std::string& output) {
    const std::string cube = Emit("Mul", {x, Emit("Mul", {x, x})});
    const std::string inner = Emit("Add", {x, Emit("Mul", {cube, ScalarLike("c", 0.044715, x)})});
    const std::string arg =
        Emit("Mul", {inner, ScalarLike("sqrt_2_over_pi", std::sqrt(2.0 / M_PI), x)});
    const std::string one_plus = Emit("Add", {Emit("Tanh", {arg}), ScalarLike("one", 1.0, x)});
    Emit("Mul", {Emit("Mul", {x, one_plus}), ScalarLike("half", 0.5, x)}, output);
  }

  // x * (1 / sqrt(mean(x^2 over the axes from `axis` on) + epsilon)) * scale into `output`, as
  // T5's and LLaMA's exports write an RMS norm (the reciprocal maps where a broadcast Div does
  // not); a non-negative axis views x as [d0 .. d(axis-1), -1] (Shape's
  // start and end: opset 15 and up).
  void RmsNormOf(const std::string& x, const std::string& scale, int64_t axis, float epsilon,
                 const std::string& output) {
    std::string v = x;
    std::vector<int64_t> axes;
    if (axis < 0) {
      for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
    } else {
      const std::string lead = Emit("Shape", {x}, "", [axis](onnx::NodeProto* c) {
        ExportContext::AttrInt(c, "start", 0);
        ExportContext::AttrInt(c, "end", axis);
      });
      const std::string view = Concat({lead, Ints("rest", {1}, {-1})}, 0);
      v = Emit("Reshape", {x, view});
      axes = {-1};
    }
    const std::string sq = Emit("Pow", {v, ScalarLike("two", 2.0, x)});
    const std::string mean = Emit("ReduceMean", {sq}, "", [axes](onnx::NodeProto* c) {
      ExportContext::AttrInts(c, "axes", axes);
    });
    const std::string dev = Emit("Sqrt", {Emit("Add", {mean, ScalarLike("epsilon", epsilon, x)})});
    std::string normalized = Emit("Mul", {v, Emit("Reciprocal", {dev})});
    if (axis >= 0) normalized = Emit("Reshape", {normalized, Emit("Shape", {x})});
    Emit("Mul", {normalized, scale}, output);
  }

  std::set<std::string> names_;
  const onnx::NodeProto* node_ = nullptr;
  std::vector<onnx::NodeProto>* out_ = nullptr;
};

}  // namespace verisub::runtime
