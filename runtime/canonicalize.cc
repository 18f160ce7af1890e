// Import-time canonicalization of exporter forms.
#include "runtime/canonicalize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <tuple>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/scalar_constant.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/elementwise.h"
#include "specs/ops/pad.h"
#include "specs/registry.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;

bool IsFloat(int32_t t) { return t == kFloat || t == kDouble; }

// A weight holding floats only (any shape, no element zero when `nonzero`).
const HostTensor* FloatConstant(const Graph& g, int v, bool nonzero) {
  if (v == kNoValue || !g.value(v).constant) return nullptr;
  const HostTensor& t = *g.value(v).constant;
  if (!IsFloat(t.elem_type)) return nullptr;
  if (nonzero)
    for (int64_t i = 0; i < CountElements(t.dims); ++i)
      if (t.DoubleAt(i) == 0.0) return nullptr;
  return &t;
}

bool Near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::abs(b); }

// A float constant of one element, 1.
bool IsOne(const Graph& g, int v) {
  const HostTensor* t = FloatConstant(g, v, true);
  return t && CountElements(t->dims) == 1 && t->DoubleAt(0) == 1.0;
}

// Opaque node i as ONNX operator `new_type` on `inputs`, its attributes kept.
void Retype(Graph* g, int i, const char* new_type, std::vector<int> inputs) {
  Node& m = g->mutable_node(i);
  auto proto = std::make_shared<onnx::NodeProto>(*m.onnx);
  proto->set_op_type(new_type);
  m.onnx = std::move(proto);
  m.op_type = new_type;
  m.inputs = std::move(inputs);
}

// Rewrites opaque `op_type` node i into `new_type` with input 1 replaced by f(constant).
template <class F>
void RewriteWithConstant(Graph* g, int i, const char* new_type, F f) {
  const Node& n = g->node(i);
  const HostTensor& c = *g->value(n.inputs[1]).constant;
  std::vector<double> values = c.ToDoubles();
  for (double& v : values) v = f(v);
  const int wid = g->AddConstant(g->value(n.inputs[1]).name + "_canonical",
                                 HostTensor::FromDoubles(c.elem_type, c.dims, values));
  Retype(g, i, new_type, {n.inputs[0], wid});
}

class PatternFuser {
 public:
  explicit PatternFuser(Graph* g) : g_(g), producer_(g->Producers()), uses_(g->UseCounts()) {}

  int Run() {
    int fused = 0;
    for (int i = 0; i < g_->num_nodes(); ++i) {
      const Node& n = g_->node(i);
      if (n.opaque() || n.outputs.size() != 1) continue;
      std::optional<int> x;
      OpKind kind = OpKind::kNumOps;
      if (*n.op == OpKind::kEwMul && (x = SiluInput(n)))
        kind = OpKind::kSilu;
      else if ((x = GeluInput(n)))
        kind = OpKind::kGelu;
      else if ((x = GeluTanhInput(n)))
        kind = OpKind::kGeluTanh;
      if (!x) continue;
      Node r;
      r.name = n.name;
      r.op = kind;
      r.params = specs::GetOp(kind).DefaultParams();
      r.inputs = {*x};
      r.outputs = n.outputs;
      int out = n.outputs[0];
      g_->SetNode(i, std::move(r));
      g_->mutable_value(out).spec_type = g_->value(*x).spec_type;  // unary: the input's type
      ++fused;
    }
    if (fused > 0) g_->RemoveDeadCode();
    return fused;
  }

 private:
  // The spec node producing v, read only once, of kind `kind`; null otherwise.
  const Node* Only(int v, OpKind kind) const {
    if (v == kNoValue || producer_[v] < 0 || uses_[v] != 1) return nullptr;
    const Node& p = g_->node(producer_[v]);
    return !p.opaque() && *p.op == kind ? &p : nullptr;
  }
  const Node* OnlyOpaque(int v, const char* op_type) const {
    if (v == kNoValue || producer_[v] < 0 || uses_[v] != 1) return nullptr;
    const Node& p = g_->node(producer_[v]);
    return p.opaque() && p.domain.empty() && p.op_type == op_type ? &p : nullptr;
  }

  // ewmul(x, sigmoid(x)) in either order.
  std::optional<int> SiluInput(const Node& mul) const {
    for (int side = 0; side < 2; ++side) {
      const Node* s = Only(mul.inputs[1 - side], OpKind::kSigmoid);
      if (s != nullptr && s->inputs[0] == mul.inputs[side]) return mul.inputs[side];
    }
    return std::nullopt;
  }

  // 1 + f(...): an opaque Add of the scalar 1 in either order, or the bias_add of ones that the
  // import makes of it; returns the node of kind `f` (read only there), or null.
  const Node* OnePlus(int v, OpKind f) const {
    if (const Node* add = OnlyOpaque(v, "Add"); add != nullptr && add->inputs.size() == 2) {
      for (int side = 0; side < 2; ++side) {
        auto one = ScalarConstant(*g_, add->inputs[1 - side]);
        if (one && *one == 1.0) return Only(add->inputs[side], f);
      }
      return nullptr;
    }
    const Node* bias = Only(v, OpKind::kBiasAdd);
    if (bias == nullptr) return nullptr;
    const HostTensor* ones = g_->value(bias->inputs[1]).constant.get();
    if (ones == nullptr) return nullptr;
    for (double e : ones->ToDoubles())
      if (e != 1.0) return nullptr;
    return Only(bias->inputs[0], f);
  }

  // v = smul(x, c) with c near `factor`, read only there: returns x.
  std::optional<int> ScaledBy(int v, double factor) const {
    const Node* scale = Only(v, OpKind::kSmul);
    if (scale == nullptr) return std::nullopt;
    auto c = ScalarConstant(*g_, scale->inputs[1]);
    if (c && Near(*c, factor)) return scale->inputs[0];
    return std::nullopt;
  }

  // 1 + erf(x / sqrt 2), as 1 + erf(smul(x, 1/sqrt 2)): returns x.
  std::optional<int> OnePlusErf(int v) const {
    const Node* erf = OnePlus(v, OpKind::kErf);
    return erf == nullptr ? std::nullopt : ScaledBy(erf->inputs[0], 1.0 / std::sqrt(2.0));
  }

  // x^3 as ewmul(x, ewmul(x, x)) with either factor first, or Pow(x, 3): returns x.
  std::optional<int> CubeInput(int v) const {
    if (const Node* pow = OnlyOpaque(v, "Pow"); pow != nullptr && pow->inputs.size() == 2) {
      auto e = ScalarConstant(*g_, pow->inputs[1]);
      if (e && *e == 3.0) return pow->inputs[0];
      return std::nullopt;
    }
    const Node* outer = Only(v, OpKind::kEwMul);
    if (outer == nullptr) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const Node* square = Only(outer->inputs[1 - side], OpKind::kEwMul);
      const int x = outer->inputs[side];
      if (square != nullptr && square->inputs[0] == x && square->inputs[1] == x) return x;
    }
    return std::nullopt;
  }

  // 1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)), the sums in either order: returns x.
  std::optional<int> OnePlusTanh(int v) const {
    const Node* tanh = OnePlus(v, OpKind::kTanh);
    if (tanh == nullptr) return std::nullopt;
    const std::optional<int> sum = ScaledBy(tanh->inputs[0], std::sqrt(2.0 / M_PI));
    const Node* inner = sum ? Only(*sum, OpKind::kEwAdd) : nullptr;
    if (inner == nullptr) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const std::optional<int> cube = ScaledBy(inner->inputs[1 - side], 0.044715);
      const std::optional<int> x = cube ? CubeInput(*cube) : std::nullopt;
      if (x && *x == inner->inputs[side]) return x;
    }
    return std::nullopt;
  }

  // (x * (1 + erf(x/sqrt2))) * 0.5 or (x * 0.5) * (1 + erf(x/sqrt2)), factors in either order.
  std::optional<int> GeluInput(const Node& n) const {
    return HalfXTimes(n, [this](int v) { return OnePlusErf(v); });
  }
  // The same with 1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)): GPT-2's "gelu_new".
  std::optional<int> GeluTanhInput(const Node& n) const {
    return HalfXTimes(n, [this](int v) { return OnePlusTanh(v); });
  }

  // (x * g(x)) * 0.5 or (x * 0.5) * g(x), factors in either order, where `inner` matches g(x) and
  // returns its x.
  template <class Inner>
  std::optional<int> HalfXTimes(const Node& n, Inner inner) const {
    if (*n.op == OpKind::kSmul) {
      auto half = ScalarConstant(*g_, n.inputs[1]);
      const Node* mul = Only(n.inputs[0], OpKind::kEwMul);
      if (!half || *half != 0.5 || mul == nullptr) return std::nullopt;
      for (int side = 0; side < 2; ++side) {
        auto x = inner(mul->inputs[1 - side]);
        if (x && *x == mul->inputs[side]) return x;
      }
      return std::nullopt;
    }
    if (*n.op != OpKind::kEwMul) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const Node* half = Only(n.inputs[side], OpKind::kSmul);
      if (half == nullptr) continue;
      auto h = ScalarConstant(*g_, half->inputs[1]);
      auto x = inner(n.inputs[1 - side]);
      if (h && *h == 0.5 && x && *x == half->inputs[0]) return x;
    }
    return std::nullopt;
  }

  Graph* g_;
  std::vector<int> producer_, uses_;
};

// The subscripts of a two-operand Einsum without ellipses (spaces dropped), or nullopt.
std::optional<std::array<std::string, 3>> EinsumSubscripts(const Node& n) {
  KernelContext attrs(*n.onnx, 0, {});
  std::string eq = attrs.AttrString("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t comma = eq.find(','), arrow = eq.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma ||
      eq.find("...") != std::string::npos || eq.find(',', comma + 1) != std::string::npos)
    return std::nullopt;
  return std::array<std::string, 3>{eq.substr(0, comma), eq.substr(comma + 1, arrow - comma - 1),
                                    eq.substr(arrow + 2)};
}

// A two-operand Einsum that is a batched matrix product (same batch subscripts in both operands
// and the output, in order, then [m k] x [k n] -> [m n] with either operand's pair in either
// order) becomes MatMul, with a Transpose of the last two axes before an operand written
// [k m] or [n k]. MaxViT writes its attention this way. Returns the number rewritten.
int RewriteEinsumAsMatMul(Graph* g) {
  std::vector<std::shared_ptr<const Node>> nodes;
  int rewritten = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    std::optional<std::array<std::string, 3>> t;
    if (n.opaque() && n.domain.empty() && n.op_type == "Einsum" && n.inputs.size() == 2 &&
        n.outputs.size() == 1 && n.inputs[0] != kNoValue && n.inputs[1] != kNoValue &&
        IsFloat(g->value(n.inputs[0]).elem_type))
      t = EinsumSubscripts(n);
    const auto& [a, b, y] = t ? *t : std::array<std::string, 3>{};
    const size_t r = y.size();
    bool ok = t && r >= 2 && a.size() == r && b.size() == r &&
              a.substr(0, r - 2) == y.substr(0, r - 2) && b.substr(0, r - 2) == y.substr(0, r - 2);
    for (std::string term : {a, b, y}) {  // no subscript twice within a term
      std::sort(term.begin(), term.end());
      ok = ok && std::adjacent_find(term.begin(), term.end()) == term.end();
    }
    const char m = ok ? y[r - 2] : 0, nn = ok ? y[r - 1] : 0;
    const std::string a2 = ok ? a.substr(r - 2) : "", b2 = ok ? b.substr(r - 2) : "";
    const char k = ok ? (a2[0] == m ? a2[1] : a2[0]) : 0;
    ok = ok && (a2 == std::string{m, k} || a2 == std::string{k, m}) &&
         (b2 == std::string{k, nn} || b2 == std::string{nn, k}) && k != nn && k != m && m != nn;
    for (int in : n.inputs) ok = ok && g->value(in).rank_known && g->value(in).dims.size() == r;
    if (!ok) {
      nodes.push_back(g->node_ptr(i));
      continue;
    }
    std::vector<int> inputs = n.inputs;
    for (int side = 0; side < 2; ++side) {
      const bool swap = side == 0 ? a2[0] == k : b2[0] == nn;
      if (!swap) continue;
      const Value& x = g->value(inputs[side]);
      std::vector<int64_t> perm(r);
      for (size_t d = 0; d < r; ++d) perm[d] = static_cast<int64_t>(d);
      std::swap(perm[r - 2], perm[r - 1]);
      Value v;
      v.name = g->UniqueName(x.name + "_transposed");
      v.elem_type = x.elem_type;
      v.dims = x.dims;
      std::swap(v.dims[r - 2], v.dims[r - 1]);
      v.rank_known = true;
      auto proto = std::make_shared<onnx::NodeProto>();
      proto->set_op_type("Transpose");
      proto->set_name(n.name + "/transpose_" + std::to_string(side));
      ExportContext::AttrInts(proto.get(), "perm", perm);
      Node tr;
      tr.name = n.name + "/transpose_" + std::to_string(side);
      tr.op_type = "Transpose";
      tr.inputs = {inputs[side]};
      tr.outputs = {g->AddValue(std::move(v))};
      proto->add_input(g->value(inputs[side]).name);  // the schema's inference counts them
      proto->add_output(g->value(tr.outputs[0]).name);
      tr.onnx = std::move(proto);
      inputs[side] = tr.outputs[0];
      nodes.push_back(std::make_shared<const Node>(std::move(tr)));
    }
    Node mm = n;
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type("MatMul");
    proto->set_name(n.name);
    for (int in : inputs) proto->add_input(g->value(in).name);
    proto->add_output(g->value(n.outputs[0]).name);
    mm.onnx = std::move(proto);
    mm.op_type = "MatMul";
    mm.inputs = inputs;
    nodes.push_back(std::make_shared<const Node>(std::move(mm)));
    ++rewritten;
  }
  if (rewritten) g->SetNodes(std::move(nodes));
  return rewritten;
}

// Builds new opaque ONNX nodes in front of the node they replace (RewritePowers,
// RewriteDepthToSpace, QOperatorRewriter): each writes one value, new or the replaced node's own
// output.
class OnnxNodeBuilder {
 public:
  OnnxNodeBuilder(Graph* g, std::vector<std::shared_ptr<const Node>>* nodes, const Node& replaced)
      : g_(g), nodes_(nodes), replaced_(replaced) {}

  // An int64 constant named after the replaced node.
  int Int64s(const std::string& suffix, const std::vector<int64_t>& v) {
    return g_->AddConstant(replaced_.name + "_" + suffix,
                           HostTensor::FromInts(kInt64, {static_cast<int64_t>(v.size())}, v));
  }

  // `op_type` of `inputs` with the replaced node's element type and `dims`, into `output` (a new
  // value when -1); `attrs` sets the attributes.
  int Add(const std::string& op_type, const std::vector<int>& inputs,
          const std::vector<int64_t>& dims, int output = -1,
          const std::function<void(onnx::NodeProto*)>& attrs = {}) {
    Value like;
    like.elem_type = g_->value(replaced_.inputs[0]).elem_type;
    like.dims = dims;
    like.rank_known = true;
    return AddLike(op_type, inputs, like, output, attrs);
  }

  // Add, a new output taking the element type and shape of `like` (its rank unknown when so).
  int AddLike(const std::string& op_type, const std::vector<int>& inputs, const Value& like,
              int output = -1, const std::function<void(onnx::NodeProto*)>& attrs = {}) {
    if (output < 0) {
      Value v;
      v.name = g_->UniqueName(replaced_.name + "_" + op_type);
      v.elem_type = like.elem_type;
      v.dims = like.dims;
      v.rank_known = like.rank_known;
      output = g_->AddValue(std::move(v));
    }
    Node n;
    n.name = replaced_.name +
             (output == replaced_.outputs[0] ? "" : "/" + op_type + "_" + std::to_string(count_++));
    n.op_type = op_type;
    n.inputs = inputs;
    n.outputs = {output};
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type(op_type);
    proto->set_name(n.name);
    for (int in : inputs) proto->add_input(g_->value(in).name);  // schema inference counts them
    proto->add_output(g_->value(output).name);
    if (attrs) attrs(proto.get());
    n.onnx = std::move(proto);
    nodes_->push_back(std::make_shared<const Node>(std::move(n)));
    return output;
  }

 private:
  Graph* g_;
  std::vector<std::shared_ptr<const Node>>* nodes_;
  const Node& replaced_;
  int count_ = 0;
};

// Pow by a constant exponent 1, 2, 3 or 0.5 becomes the input itself, Mul(x, x), Mul(x, Mul(x,
// x)) or Sqrt(x): products the spec operators and the rules know (T5's and LLaMA's RMS norm
// squares with Pow), where Pow had only a reference kernel. Returns the number rewritten.
int RewritePowers(Graph* g) {
  std::vector<std::shared_ptr<const Node>> nodes;
  int rewritten = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    std::optional<double> e;
    if (n.opaque() && n.domain.empty() && n.op_type == "Pow" && n.inputs.size() == 2 &&
        n.outputs.size() == 1 && n.inputs[0] != kNoValue && n.inputs[1] != kNoValue &&
        IsFloat(g->value(n.inputs[0]).elem_type) && g->value(n.outputs[0]).rank_known &&
        g->value(n.outputs[0]).dims == g->value(n.inputs[0]).dims)
      e = ScalarConstant(*g, n.inputs[1]);
    if (!e || (*e != 1.0 && *e != 2.0 && *e != 3.0 && *e != 0.5)) {
      nodes.push_back(g->node_ptr(i));
      continue;
    }
    OnnxNodeBuilder b(g, &nodes, n);
    const int x = n.inputs[0], y = n.outputs[0];
    const std::vector<int64_t>& dims = g->value(x).dims;
    if (*e == 1.0) {
      b.Add("Identity", {x}, dims, y);
    } else if (*e == 0.5) {
      b.Add("Sqrt", {x}, dims, y);
    } else if (*e == 2.0) {
      b.Add("Mul", {x, x}, dims, y);
    } else {
      b.Add("Mul", {x, b.Add("Mul", {x, x}, dims)}, dims, y);
    }
    ++rewritten;
  }
  if (rewritten) g->SetNodes(std::move(nodes));
  return rewritten;
}

// DepthToSpace and SpaceToDepth of a 4-D tensor of static shape become Reshape, Transpose and
// Reshape, as the operator's definition states them: a data movement the backend runs as one
// strided reorder and the rules see, where they had only a reference kernel (ESPCN's and other
// super-resolution models' pixel shuffle). Returns the number rewritten.
int RewriteDepthToSpace(Graph* g) {
  std::vector<std::shared_ptr<const Node>> nodes;
  int rewritten = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    const bool d2s = n.op_type == "DepthToSpace";
    std::vector<int64_t> in;
    int64_t b = 0;
    std::string mode = "DCR";
    if (n.opaque() && n.domain.empty() && (d2s || n.op_type == "SpaceToDepth") &&
        n.inputs.size() == 1 && n.outputs.size() == 1 && n.inputs[0] != kNoValue &&
        g->value(n.inputs[0]).StaticShape() && g->value(n.inputs[0]).dims.size() == 4 &&
        g->value(n.outputs[0]).StaticShape()) {
      KernelContext attrs(*n.onnx, g->DefaultOpset(), {});
      in = g->value(n.inputs[0]).dims;
      b = attrs.AttrInt("blocksize", 0);
      if (d2s) mode = attrs.AttrString("mode", "DCR");
    }
    const std::string kind = !d2s ? "S2D" : mode == "DCR" || mode == "CRD" ? mode : "";
    const std::optional<PixelShuffleForm> form =
        kind.empty() ? std::nullopt : PixelShuffle(kind, in, b);
    if (!form || form->out != g->value(n.outputs[0]).dims) {
      nodes.push_back(g->node_ptr(i));
      continue;
    }
    OnnxNodeBuilder nb(g, &nodes, n);
    std::vector<int64_t> shuffled;
    for (int64_t p : form->perm) shuffled.push_back(form->mid[p]);
    const int x = nb.Add("Reshape", {n.inputs[0], nb.Int64s("shape", form->mid)}, form->mid);
    const int t = nb.Add("Transpose", {x}, shuffled, -1, [&](onnx::NodeProto* p) {
      ExportContext::AttrInts(p, "perm", form->perm);
    });
    nb.Add("Reshape", {t, nb.Int64s("out_shape", form->out)}, form->out, n.outputs[0]);
    ++rewritten;
  }
  if (rewritten) g->SetNodes(std::move(nodes));
  return rewritten;
}

// The weights of a DFT of `m` points written as a product (rows: the `n` samples times their
// `c` components, real then imaginary; columns: real and imaginary part of each of `bins`
// outputs, interleaved): X_k = sum_n (a_n + i b_n)(cos t + i s sin t), t = 2 pi (k n mod m) / m,
// s = -1 forward, +1 inverse (scaled by 1 / m). Samples from m on are dropped (rows of zeros);
// `window` (size n, or empty) weighs each sample.
std::vector<double> DftMatrix(int64_t n, int64_t c, int64_t m, int64_t bins, bool inverse,
                              const std::vector<double>& window) {
  std::vector<double> w(n * c * 2 * bins, 0.0);
  const double s = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / static_cast<double>(m) : 1.0;
  for (int64_t j = 0; j < std::min(n, m); ++j) {
    const double wj = (window.empty() ? 1.0 : window[j]) * scale;
    for (int64_t k = 0; k < bins; ++k) {
      const double t =
          2 * std::numbers::pi * static_cast<double>((k * j) % m) / static_cast<double>(m);
      const double cs = std::cos(t) * wj, sn = s * std::sin(t) * wj;
      double* row = &w[(j * c) * 2 * bins + 2 * k];
      row[0] = cs;  // a -> re
      row[1] = sn;  // a -> im
      if (c == 2) {
        row[2 * bins] = -sn;     // b -> re
        row[2 * bins + 1] = cs;  // b -> im
      }
    }
  }
  return w;
}

// Fourier transforms of float tensors of static shape, with constant lengths, as products with a
// constant matrix of the transform's points (DftMatrix), which the backends run as a GEMM or a
// convolution where the operators had only the direct O(n^2) reference loop:
//   DFT along `axis`      Transpose (axis, then the components, last), Reshape [..., n*c],
//                         MatMul by the matrix, Reshape [..., bins, 2], Transpose back
//   STFT of a real signal Reshape [B, 1, 1, L], Conv by the window times the matrix ([2 bins, 1,
//                         1, frame], stride frame_step), Reshape [B, bins, 2, frames],
//                         Transpose [B, frames, bins, 2]
// Audio models' spectrogram front-ends. Only where the product is the cheaper: up to 1024
// points, or any length that is not a power of two with a matrix of at most kMaxDftMatrix
// elements; the reference kernel's radix-2 FFT (5 m log2 m flops against the product's 4 m bins
// at GEMM speed) wins past 1024 points (ONNX Runtime's STFT 2048-point frames). Returns the
// number rewritten.
constexpr int64_t kMaxDftMatrix = int64_t{1} << 23;
bool ProductPays(int64_t points, int64_t matrix_elements) {
  const bool power_of_two = (points & (points - 1)) == 0;
  return matrix_elements <= kMaxDftMatrix && (points <= 1024 || !power_of_two);
}

// A row-major [rows, cols] matrix transposed.
std::vector<double> Transposed(const std::vector<double>& a, int64_t rows, int64_t cols) {
  std::vector<double> t(a.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = a[i * cols + j];
  return t;
}

int RewriteFourierTransforms(Graph* g) {
  std::vector<std::shared_ptr<const Node>> nodes;
  int rewritten = 0;
  auto constant = [&](int v) -> const HostTensor* {
    return v == kNoValue ? nullptr : g->value(v).constant.get();
  };
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    const bool dft = n.op_type == "DFT", stft = n.op_type == "STFT";
    if (!n.opaque() || !n.domain.empty() || !(dft || stft) || n.inputs.empty() ||
        n.outputs.size() != 1 || n.inputs[0] == kNoValue ||
        g->value(n.inputs[0]).elem_type != kFloat || !g->value(n.inputs[0]).StaticShape() ||
        !g->value(n.outputs[0]).StaticShape()) {
      nodes.push_back(g->node_ptr(i));
      continue;
    }
    // The geometry as the kernel reads it, from the constant inputs (every one given must be).
    std::vector<const HostTensor*> operands = {nullptr};
    bool constants = true;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      operands.push_back(constant(n.inputs[k]));
      constants &= n.inputs[k] == kNoValue || operands.back();
    }
    const KernelContext ctx(*n.onnx, g->DefaultOpset(), operands);
    const std::vector<int64_t>& x = g->value(n.inputs[0]).dims;
    const std::vector<int64_t>& y = g->value(n.outputs[0]).dims;
    const int64_t r = static_cast<int64_t>(x.size());
    bool ok = false;
    const StatusOr<DftPlan> dft_plan =
        constants && dft ? PlanDft(ctx, x) : StatusOr<DftPlan>(InvalidArgument("not a DFT"));
    const StatusOr<StftPlan> stft_plan =
        constants && stft ? PlanStft(ctx, x) : StatusOr<StftPlan>(InvalidArgument("not an STFT"));
    if (dft_plan.ok()) {
      const int64_t axis = dft_plan->axis, c = x.back(), m = dft_plan->points,
                    bins = dft_plan->bins;
      const bool inverse = dft_plan->inverse;
      ok = dft_plan->out_dims == y && ProductPays(m, x[axis] * c * 2 * bins);
      if (ok) {
        OnnxNodeBuilder b(g, &nodes, n);
        // [others..., n, c]: the transform's axis and the components last.
        std::vector<int64_t> perm, others;
        for (int64_t d = 0; d < r - 1; ++d)
          if (d != axis) perm.push_back(d), others.push_back(x[d]);
        perm.push_back(axis);
        perm.push_back(r - 1);
        int v = n.inputs[0];
        std::vector<int64_t> moved = others;
        moved.push_back(x[axis]);
        moved.push_back(c);
        if (axis != r - 2)
          v = b.Add("Transpose", {v}, moved, -1,
                    [&](onnx::NodeProto* p) { ExportContext::AttrInts(p, "perm", perm); });
        std::vector<int64_t> flat = others;
        flat.push_back(x[axis] * c);
        v = b.Add("Reshape", {v, b.Int64s("samples", flat)}, flat);
        const int matrix =
            g->AddConstant(n.name + "_dft_matrix",
                           HostTensor::FromDoubles(kFloat, {x[axis] * c, 2 * bins},
                                                   DftMatrix(x[axis], c, m, bins, inverse, {})));
        std::vector<int64_t> product = others;
        product.push_back(2 * bins);
        v = b.Add("MatMul", {v, matrix}, product);
        std::vector<int64_t> split = others;
        split.push_back(bins);
        split.push_back(2);
        if (axis == r - 2) {
          b.Add("Reshape", {v, b.Int64s("bins", split)}, split, n.outputs[0]);
        } else {
          v = b.Add("Reshape", {v, b.Int64s("bins", split)}, split);
          std::vector<int64_t> back(r);  // the inverse of perm
          for (int64_t d = 0; d < r; ++d) back[perm[d]] = d;
          b.Add("Transpose", {v}, y, n.outputs[0],
                [&](onnx::NodeProto* p) { ExportContext::AttrInts(p, "perm", back); });
        }
      }
    } else if (stft_plan.ok() && !stft_plan->complex_input) {
      const int64_t frame = stft_plan->frame, bins = stft_plan->bins;
      const HostTensor* window = stft_plan->window;
      if (ProductPays(frame, frame * 2 * bins)) {
        const int64_t hop = stft_plan->step, frames = stft_plan->frames;
        ok = y == stft_plan->out_dims;
        if (ok) {
          OnnxNodeBuilder b(g, &nodes, n);
          const std::vector<int64_t> image = {x[0], 1, 1, x[1]};
          const int v = b.Add("Reshape", {n.inputs[0], b.Int64s("image", image)}, image);
          const int kernel = g->AddConstant(
              n.name + "_stft_kernel",
              HostTensor::FromDoubles(
                  kFloat, {2 * bins, 1, 1, frame},
                  Transposed(DftMatrix(frame, 1, frame, bins, false,
                                       window ? window->ToDoubles() : std::vector<double>{}),
                             frame, 2 * bins)));
          const std::vector<int64_t> conv = {x[0], 2 * bins, 1, frames};
          const int c = b.Add("Conv", {v, kernel}, conv, -1, [&](onnx::NodeProto* p) {
            ExportContext::AttrInts(p, "kernel_shape", {1, frame});
            ExportContext::AttrInts(p, "strides", {1, hop});
          });
          const std::vector<int64_t> parts = {x[0], bins, 2, frames};
          const int s = b.Add("Reshape", {c, b.Int64s("parts", parts)}, parts);
          b.Add("Transpose", {s}, y, n.outputs[0], [](onnx::NodeProto* p) {
            ExportContext::AttrInts(p, "perm", {0, 3, 1, 2});
          });
        }
      }
    }
    if (ok)
      ++rewritten;
    else
      nodes.push_back(g->node_ptr(i));
  }
  if (rewritten) {
    g->SetNodes(std::move(nodes));
    g->RemoveDeadCode();
  }
  return rewritten;
}

}  // namespace

std::optional<PixelShuffleForm> PixelShuffle(const std::string& mode,
                                             const std::vector<int64_t>& in, int64_t b) {
  if (in.size() != 4 || b < 1) return std::nullopt;
  const int64_t N = in[0], C = in[1], H = in[2], W = in[3];
  if (mode == "S2D") {  // [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b]
    if (H % b != 0 || W % b != 0) return std::nullopt;
    return PixelShuffleForm{
        {N, C, H / b, b, W / b, b}, {0, 3, 5, 1, 2, 4}, {N, C * b * b, H / b, W / b}};
  }
  if (C % (b * b) != 0) return std::nullopt;
  const std::vector<int64_t> out = {N, C / (b * b), H * b, W * b};
  if (mode == "DCR")  // [N, b, b, C/b^2, H, W] -> [N, C/b^2, H, b, W, b]
    return PixelShuffleForm{{N, b, b, C / (b * b), H, W}, {0, 3, 4, 1, 5, 2}, out};
  if (mode == "CRD")  // [N, C/b^2, b, b, H, W] -> [N, C/b^2, H, b, W, b]
    return PixelShuffleForm{{N, C / (b * b), b, b, H, W}, {0, 1, 4, 2, 5, 3}, out};
  return std::nullopt;
}

namespace {

// Where(mask, x, c) or Where(mask, c, x) with a constant mask and c a constant infinity (a
// causal or padding mask applied as masked_fill(-inf)) becomes Add(x, B), B the constant that is
// c where the mask picks c and 0 elsewhere: x + 0 = x and x + (-inf) = -inf for every finite x,
// so the sum equals the selection wherever the scores are finite (they are, or the softmax after
// them is NaN anyway). An Add of a constant is a bias the spec operators and the rules know, where
// Where left the attention opaque (a GPT decoder: 12 of 349 nodes). Returns the number rewritten.
int RewriteInfiniteMasks(Graph* g) {
  int rewritten = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    if (!n.opaque() || !n.domain.empty() || n.op_type != "Where" || n.inputs.size() != 3 ||
        n.outputs.size() != 1 || n.inputs[0] == kNoValue || n.inputs[1] == kNoValue ||
        n.inputs[2] == kNoValue || !g->value(n.inputs[0]).constant)
      continue;
    const HostTensor& mask = *g->value(n.inputs[0]).constant;
    if (mask.elem_type != kBool) continue;
    int side = -1;  // the input holding the infinity
    double c = 0;
    for (int k = 1; k <= 2; ++k) {
      const Value& v = g->value(n.inputs[k]);
      const Value& other = g->value(n.inputs[3 - k]);
      if (!v.constant || v.constant->NumElements() != 1 || other.constant ||
          !IsFloat(other.elem_type) || v.elem_type != other.elem_type)
        continue;
      const double e = v.constant->DoubleAt(0);
      if (std::isinf(e)) side = k, c = e;
    }
    if (side < 0) continue;
    const Value& x = g->value(n.inputs[3 - side]);
    const Value& y = g->value(n.outputs[0]);
    // The sum's shape is the selection's: x and the mask broadcast to the output.
    if (!x.rank_known || !y.StaticShape() || x.dims.size() > y.dims.size() ||
        mask.dims.size() > y.dims.size())
      continue;
    const int64_t count = mask.NumElements();
    std::vector<double> bias(count);
    for (int64_t e = 0; e < count; ++e) {
      const bool picks_first = mask.IntAt(e) != 0;
      bias[e] = picks_first == (side == 1) ? c : 0.0;
    }
    const int bid = g->AddConstant(n.name + "_mask_bias",
                                   HostTensor::FromDoubles(x.elem_type, mask.dims, bias));
    const int xid = n.inputs[3 - side];
    Node& m = g->mutable_node(i);
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type("Add");
    proto->set_name(m.name);
    m.onnx = std::move(proto);
    m.op_type = "Add";
    m.inputs = {xid, bid};
    ++rewritten;
  }
  if (rewritten) g->RemoveDeadCode();
  return rewritten;
}

// Whether an opaque node passes its first input through unchanged: Identity, Dropout that
// drops nothing (inference mode, or a ratio of 0), a Pad by constant zeros, a Concat of one
// input (DenseNet's first layer of each block: torch.cat([x])).
bool PassesThrough(const Graph& g, const Node& n) {
  if (!n.opaque() || !n.domain.empty() || n.inputs.empty() || n.inputs[0] == kNoValue ||
      n.outputs.empty() || n.outputs[0] == kNoValue)
    return false;
  const int64_t opset = g.DefaultOpset();
  auto constant = [&](size_t k) -> const HostTensor* {
    return k < n.inputs.size() && n.inputs[k] != kNoValue ? g.value(n.inputs[k]).constant.get()
                                                          : nullptr;
  };
  auto omitted = [&](size_t k) { return k >= n.inputs.size() || n.inputs[k] == kNoValue; };
  KernelContext attrs(*n.onnx, opset, {});
  if (n.op_type == "Identity" || n.op_type == "Concat") return n.inputs.size() == 1;
  // A Cast to the type its input has already (left by float16 models computed in float32).
  if (n.op_type == "Cast") return attrs.AttrInt("to", 0) == g.value(n.inputs[0]).elem_type;
  if (n.op_type == "Dropout") {
    if (opset < 7) return attrs.AttrInt("is_test", 0) != 0;
    if (opset < 12) return true;  // no training mode before opset 12
    const HostTensor* training = constant(2);
    if (omitted(2) || (training && training->NumElements() == 1 && training->IntAt(0) == 0))
      return true;
    const HostTensor* ratio = constant(1);
    return ratio && ratio->NumElements() == 1 && ratio->DoubleAt(0) == 0.0;
  }
  if (n.op_type == "Pad" && opset >= 11) {
    const HostTensor* pads = constant(1);
    if (!pads) return false;
    for (int64_t p : pads->ToInts())
      if (p != 0) return false;
    return true;
  }
  return false;
}

// Whether constant `v` holds one number or one per column of an [.., cols] result: a scalar, or
// ones before a last dimension of `cols` (b_scale, b_zero_point and bias of a quantized matmul).
bool PerColumnOrOne(const Graph& g, int v, int64_t cols) {
  if (v == kNoValue || !g.value(v).constant) return false;
  const std::vector<int64_t>& d = g.value(v).constant->dims;
  const int64_t n = CountElements(d);
  if (n == 1) return true;
  return !d.empty() && d.back() == cols && n == cols;
}

// What quantize_dynamic writes around an integer operator (MatMulInteger or ConvInteger) up to
// the Mul `n` ending it:
//   DynamicQuantizeLinear(x) -> q, s, z;  op(q, W, z[, W_zero]) -> p;
//   Cast(p, to=float) -> f;  Mul(s, W_scale) -> c;  Mul(f, c) -> n's output
// with p and f read only there (c too when `scale_internal`). The callers check the constants.
struct IntegerProduct {
  const Node* dql = nullptr;  // DynamicQuantizeLinear
  const Node* op = nullptr;   // the integer operator
  int w = kNoValue, w_zero = kNoValue, w_scale = kNoValue;
};
class IntegerProductMatcher {
 public:
  explicit IntegerProductMatcher(const Graph& g)
      : g_(g), producer_(g.Producers()), uses_(g.UseCounts()), is_output_(g.num_values(), 0) {
    for (int v : g.outputs()) is_output_[v] = 1;
  }
  bool Internal(int v) const { return v != kNoValue && uses_[v] == 1 && !is_output_[v]; }
  std::optional<IntegerProduct> Match(const Node& n, const char* op_type,
                                      bool scale_internal) const {
    if (!n.opaque() || !n.domain.empty() || n.op_type != "Mul" || n.inputs.size() != 2 ||
        n.outputs.size() != 1)
      return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const int f = n.inputs[side], c = n.inputs[1 - side];
      const Node* cast = Internal(f) ? OnnxNode(f, "Cast") : nullptr;
      if (!cast || cast->inputs.size() != 1 || !Internal(cast->inputs[0]) ||
          KernelContext(*cast->onnx, g_.DefaultOpset(), {}).AttrInt("to", 0) != kFloat ||
          (scale_internal && !Internal(c)))
        continue;
      const Node* op = OnnxNode(cast->inputs[0], op_type);
      if (!op || op->inputs.size() < 3 || op->inputs[2] == kNoValue) continue;
      const Node* dql = OnnxNode(op->inputs[0], "DynamicQuantizeLinear");
      if (!dql || dql->outputs.size() != 3 || dql->outputs[0] != op->inputs[0] ||
          dql->outputs[2] != op->inputs[2] || dql->inputs.size() != 1)
        continue;
      const Node* scale = OnnxNode(c, "Mul");
      const int s = dql->outputs[1];
      if (!scale || scale->inputs.size() != 2 || (scale->inputs[0] != s && scale->inputs[1] != s))
        continue;
      IntegerProduct m;
      m.dql = dql;
      m.op = op;
      m.w = op->inputs[1];
      m.w_zero = op->inputs.size() > 3 ? op->inputs[3] : kNoValue;
      m.w_scale = scale->inputs[0] == s ? scale->inputs[1] : scale->inputs[0];
      if (m.w_scale == s) continue;
      return m;
    }
    return std::nullopt;
  }

 private:
  const Node* OnnxNode(int v, const char* type) const {
    if (v == kNoValue || producer_[v] < 0) return nullptr;
    const Node& n = g_.node(producer_[v]);
    return n.opaque() && n.domain.empty() && n.op_type == type ? &n : nullptr;
  }
  const Graph& g_;
  std::vector<int> producer_, uses_;
  std::vector<char> is_output_;
};

// ONNX Runtime's dynamically quantized matmul as quantize_dynamic writes it:
//   DynamicQuantizeLinear(x) -> q, s, z;  MatMulInteger(q, W, z[, W_zero]) -> p;
//   Cast(p, to=float) -> f;  Mul(s, W_scale) -> c;  Mul(f, c) -> y  [; Add(y, bias)]
// with W, W_zero, W_scale and bias constants (W 2-D 8-bit; the others one number or one per
// column), f and p read only there: one DynamicQuantizeMatMul(x, W, W_scale, W_zero[, bias]) of
// ONNX Runtime's contrib domain, which the oneDNN backend runs as one int8 matmul and export
// writes out again. The quantizer's other readers keep it; it goes when the last one is rewritten.
int RewriteDynamicQuantizeMatMul(Graph* g) {
  const IntegerProductMatcher match(*g);
  const std::vector<int> sole = g->SoleReaders();
  auto internal = [&](int v) { return match.Internal(v); };
  int rewritten = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    {
      const std::optional<IntegerProduct> p = match.Match(n, "MatMulInteger", false);
      if (!p) continue;
      const int x = p->dql->inputs[0], w = p->w, w_zero = p->w_zero, w_scale = p->w_scale;
      const Value& xv = g->value(x);
      const HostTensor* wt = g->value(w).constant.get();
      if (xv.elem_type != kFloat || !xv.rank_known || xv.dims.empty() || !wt ||
          (wt->elem_type != kUint8 && wt->elem_type != kInt8) || wt->dims.size() != 2 ||
          xv.dims.back() != wt->dims[0])
        continue;
      const int64_t cols = wt->dims[1];
      if (w_zero != kNoValue && (!PerColumnOrOne(*g, w_zero, cols) ||
                                 g->value(w_zero).constant->elem_type != wt->elem_type))
        continue;
      if (!PerColumnOrOne(*g, w_scale, cols) || !IsFloat(g->value(w_scale).elem_type)) continue;
      std::vector<int64_t> y_dims = xv.dims;
      y_dims.back() = cols;
      const int y = n.outputs[0];
      if (!g->value(y).rank_known || g->value(y).dims != y_dims) continue;
      // A bias added next, y read only there.
      int last = i, bias = kNoValue, out = y;
      if (internal(y) && sole[y] >= 0) {
        const Node& add = g->node(sole[y]);
        const int other = add.inputs.size() == 2 ? add.inputs[add.inputs[0] == y ? 1 : 0] : y;
        if (add.opaque() && add.domain.empty() && add.op_type == "Add" && other != y &&
            add.outputs.size() == 1 && PerColumnOrOne(*g, other, cols) &&
            g->value(other).elem_type == kFloat && g->value(add.outputs[0]).dims == y_dims) {
          last = sole[y];
          bias = other;
          out = add.outputs[0];
        }
      }
      Node m;
      m.name = g->node(last).name;
      m.op_type = "DynamicQuantizeMatMul";
      m.domain = std::string(kMicrosoftDomain);
      m.inputs = {x, w, w_scale, w_zero};
      if (bias != kNoValue) m.inputs.push_back(bias);
      m.outputs = {out};
      auto proto = std::make_shared<onnx::NodeProto>();
      proto->set_op_type(m.op_type);
      proto->set_domain(m.domain);
      proto->set_name(m.name);
      m.onnx = std::move(proto);
      g->SetNode(last, std::move(m));
      ++rewritten;
    }
  }
  if (rewritten) g->RemoveDeadCode();
  return rewritten;
}

// ONNX Runtime's quantize_dynamic on a Conv:
//   DynamicQuantizeLinear(x) -> q, s, z;  ConvInteger(q, W, z[, W_zero]) -> p;
//   Cast(p, to=float) -> f;  Mul(s, W_scale) -> c;  Mul(f, c) -> y
// with W an 8-bit constant and W_scale, W_zero one number each, p, f and c read only there:
// Conv(DequantizeLinear(q, s, z), DequantizeLinear(W, W_scale, W_zero)) -> y with ConvInteger's
// attributes, the same sums of products times the same scales (float rounding apart). The
// convolution then maps and fuses as any; the oneDNN backend runs the DynamicQuantizeLinear read
// only by a DequantizeLinear as one range-and-round pass ("pattern:dynamic_fake_quant"). Every
// node of the pattern had only a reference kernel (ResNet-50: 2.9 s a run). Returns the number of
// convolutions rewritten.
int RewriteConvInteger(Graph* g) {
  const IntegerProductMatcher match(*g);
  // A one-number constant as a scalar (DequantizeLinear reads a 1-D scale along an axis).
  auto scalar = [&](int v, const std::string& name) {
    const HostTensor& t = *g->value(v).constant;
    if (t.dims.empty()) return v;
    return g->AddConstant(name, HostTensor::FromDoubles(t.elem_type, {}, {t.DoubleAt(0)}));
  };
  std::vector<std::shared_ptr<const Node>> nodes;
  std::map<int, int> dequantized;  // DynamicQuantizeLinear's steps -> their DequantizeLinear
  int rewritten = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    const std::optional<IntegerProduct> p = match.Match(n, "ConvInteger", true);
    const HostTensor* wt = p ? g->value(p->w).constant.get() : nullptr;
    auto one_constant = [&](int v) {
      return g->value(v).constant && g->value(v).constant->NumElements() == 1;
    };
    if (!p || !wt || (wt->elem_type != kUint8 && wt->elem_type != kInt8) || wt->dims.size() < 3 ||
        g->value(p->dql->inputs[0]).elem_type != kFloat ||
        (p->w_zero != kNoValue &&
         (!one_constant(p->w_zero) || g->value(p->w_zero).constant->elem_type != wt->elem_type)) ||
        !one_constant(p->w_scale) || !IsFloat(g->value(p->w_scale).elem_type)) {
      nodes.push_back(g->node_ptr(i));
      continue;
    }
    const Node& dql = *p->dql;
    OnnxNodeBuilder b(g, &nodes, n);
    // One DequantizeLinear per quantized input (a block's input read by two convolutions).
    auto known = dequantized.find(dql.outputs[0]);
    const int x_float =
        known != dequantized.end()
            ? known->second
            : dequantized[dql.outputs[0]] =
                  b.AddLike("DequantizeLinear", {dql.outputs[0], dql.outputs[1], dql.outputs[2]},
                            g->value(dql.inputs[0]));
    std::vector<int> w_operands = {p->w, scalar(p->w_scale, n.name + "_weight_scale")};
    if (p->w_zero != kNoValue) w_operands.push_back(scalar(p->w_zero, n.name + "_weight_zero"));
    Value wd;
    wd.elem_type = kFloat;
    wd.dims = wt->dims;
    wd.rank_known = true;
    const int w_float = b.AddLike("DequantizeLinear", w_operands, wd);
    const onnx::NodeProto conv_proto = *p->op->onnx;
    b.AddLike("Conv", {x_float, w_float}, g->value(n.outputs[0]), n.outputs[0],
              [conv_proto](onnx::NodeProto* proto) {
                for (const onnx::AttributeProto& a : conv_proto.attribute())
                  *proto->add_attribute() = a;
              });
    ++rewritten;
  }
  if (rewritten) {
    g->SetNodes(std::move(nodes));
    g->RemoveDeadCode();
  }
  return rewritten;
}

// The QOperator form of quantized models (QLinearConv and QLinearMatMul, and ONNX Runtime's
// contrib QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearSigmoid,
// QLinearLeakyRelu, QLinearConcat, QGemm) in the QDQ form: each such node becomes a
// DequantizeLinear of each 8-bit operand (one per value and quantization, shared), the float
// operator with the node's attributes, and a QuantizeLinear of its result into the node's output
// (the operators' definition). A MaxPool of an 8-bit value a QuantizeLinear made becomes
// DequantizeLinear, MaxPool, QuantizeLinear (the same maximum). The pairs then run as float
// arithmetic (runtime/dnnl/fusion.h MatchFakeQuant), the weights stay int8 constants with their
// DequantizeLinear (bias: int32 in units of the operands' scales), and ONNX Runtime runs the
// form written out on its int8 kernels as it ran the original.
class QOperatorRewriter {
 public:
  explicit QOperatorRewriter(Graph* g) : g_(g) {}

  int Run() {
    std::vector<std::shared_ptr<const Node>> nodes;
    int rewritten = 0;
    for (int i = 0; i < g_->num_nodes(); ++i) {
      const Node& n = g_->node(i);
      if (n.opaque() && n.domain.empty() && n.op_type == "QuantizeLinear" && n.inputs.size() >= 2 &&
          n.outputs.size() == 1)
        quantization_[n.outputs[0]] = {n.outputs[0], n.inputs[1],
                                       n.inputs.size() > 2 ? n.inputs[2] : kNoValue};
      added_.clear();
      std::vector<std::shared_ptr<const Node>> pending;
      OnnxNodeBuilder b(g_, &pending, n);
      if (Rewrite(n, b)) {
        nodes.insert(nodes.end(), pending.begin(), pending.end());
        ++rewritten;
      } else {
        // The DequantizeLinear nodes a failed rewrite made are dropped: so are their values
        // from the cache, or a later operand would read a value nothing computes.
        for (const auto& key : added_) dequantized_.erase(key);
        nodes.push_back(g_->node_ptr(i));
      }
    }
    if (rewritten) g_->SetNodes(std::move(nodes));
    return rewritten;
  }

 private:
  struct Operand {
    int value, scale, zero;  // zero: kNoValue when omitted
  };

  const HostTensor* Const(int v) const {
    return v == kNoValue ? nullptr : g_->value(v).constant.get();
  }
  bool EightBit(int v) const {
    const int32_t t = g_->value(v).elem_type;
    return t == kUint8 || t == kInt8;
  }

  // The float value of an 8-bit operand (a DequantizeLinear, shared); kNoValue where the
  // quantization is not one this form can state (a scale per axis before opset 13).
  // A float value of `like`'s shape.
  Value FloatLike(int v) const {
    Value f = g_->value(v);
    f.elem_type = kFloat;
    return f;
  }

  int Dequantized(OnnxNodeBuilder& b, const Operand& o, int64_t axis) {
    const HostTensor* s = Const(o.scale);
    if (!s || (s->NumElements() != 1 && g_->DefaultOpset() < 13)) return kNoValue;
    const auto key = std::make_tuple(o.value, o.scale, o.zero);
    if (auto it = dequantized_.find(key); it != dequantized_.end()) return it->second;
    std::vector<int> in = {o.value, o.scale};
    if (o.zero != kNoValue) in.push_back(o.zero);
    const bool per_axis = s->NumElements() != 1;
    const int f =
        b.AddLike("DequantizeLinear", in, FloatLike(o.value), -1, [&](onnx::NodeProto* p) {
          if (per_axis) ExportContext::AttrInt(p, "axis", axis);
        });
    dequantized_[key] = f;
    added_.push_back(key);
    return f;
  }

  // A quantized operator's operand (value, scale, zero point) at inputs k, k + 1, k + 2.
  std::optional<Operand> At(const Node& n, size_t k) const {
    if (k + 1 >= n.inputs.size() || n.inputs[k] == kNoValue || n.inputs[k + 1] == kNoValue ||
        !EightBit(n.inputs[k]))
      return std::nullopt;
    return Operand{n.inputs[k], n.inputs[k + 1],
                   k + 2 < n.inputs.size() ? n.inputs[k + 2] : kNoValue};
  }

  // The int32 bias in units of a_scale * w_scale, as a float value: a DequantizeLinear of it
  // by the product of the (constant) scales.
  int DequantizedBias(OnnxNodeBuilder& b, const Node& n, int bias, const Operand& a,
                      const Operand& w, int64_t axis) {
    const HostTensor *sa = Const(a.scale), *sw = Const(w.scale), *bt = Const(bias);
    if (!sa || !sw || !bt || sa->NumElements() != 1 || g_->value(bias).elem_type != kInt32)
      return kNoValue;
    std::vector<double> product(sw->NumElements());
    for (size_t c = 0; c < product.size(); ++c)
      product[c] = static_cast<double>(static_cast<float>(sa->DoubleAt(0)) *
                                       static_cast<float>(sw->DoubleAt(c)));
    const int scale =
        g_->AddConstant(n.name + "_bias_scale", HostTensor::FromDoubles(kFloat, sw->dims, product));
    return Dequantized(b, {bias, scale, kNoValue}, axis);
  }

  bool Rewrite(const Node& n, OnnxNodeBuilder& b) {
    if (!n.opaque() || !n.onnx || n.outputs.size() != 1) return false;
    const bool ms = n.domain == kMicrosoftDomain;
    if (!ms && !n.domain.empty()) return false;
    const std::string& t = n.op_type;
    KernelContext attrs(*n.onnx, g_->DefaultOpset(), {});
    if ((t == "QLinearGlobalAveragePool" || t == "QLinearAveragePool") &&
        attrs.AttrInt("channels_last", 0) != 0)
      return false;
    std::string float_type;
    std::vector<Operand> operands;
    int y_scale = kNoValue, y_zero = kNoValue;
    auto operand = [&](size_t k) {
      auto o = At(n, k);
      if (o) operands.push_back(*o);
      return o.has_value();
    };
    auto tail = [&](size_t k) {
      y_scale = k < n.inputs.size() ? n.inputs[k] : kNoValue;
      y_zero = k + 1 < n.inputs.size() ? n.inputs[k + 1] : kNoValue;
      return y_scale != kNoValue;
    };
    if (!ms && (t == "QLinearConv" || t == "QLinearMatMul")) {
      if (!operand(0) || !operand(3) || !tail(6)) return false;
      float_type = t == "QLinearConv" ? "Conv" : "MatMul";
    } else if (ms && (t == "QLinearAdd" || t == "QLinearMul")) {
      if (!operand(0) || !operand(3) || !tail(6)) return false;
      float_type = t == "QLinearAdd" ? "Add" : "Mul";
    } else if (ms && (t == "QLinearGlobalAveragePool" || t == "QLinearAveragePool" ||
                      t == "QLinearSigmoid" || t == "QLinearLeakyRelu")) {
      if (!operand(0) || !tail(3)) return false;
      float_type = t.substr(7);
    } else if (ms && t == "QLinearConcat") {
      if (!tail(0) || (n.inputs.size() - 2) % 3 != 0) return false;
      for (size_t k = 2; k < n.inputs.size(); k += 3)
        if (!operand(k)) return false;
      float_type = "Concat";
    } else if (ms && t == "QGemm") {
      if (!operand(0) || !operand(3)) return false;
      tail(7);
      float_type = "Gemm";
    } else if (!ms && t == "MaxPool" && n.inputs.size() == 1 && EightBit(n.inputs[0])) {
      auto q = quantization_.find(n.inputs[0]);
      if (q == quantization_.end()) return false;
      operands.push_back(q->second);
      y_scale = operands[0].scale;
      y_zero = operands[0].zero;
      float_type = "MaxPool";
    } else {
      return false;
    }
    // Weights per output channel: a convolution's along axis 0, a matmul's columns along 1 (a
    // Gemm's B transposed: along 0).
    std::vector<int> inputs;
    for (size_t k = 0; k < operands.size(); ++k) {
      int64_t axis = 1;
      if (float_type == "Conv" || (float_type == "Gemm" && attrs.AttrInt("transB", 0) != 0))
        axis = 0;
      const int f = Dequantized(b, operands[k], k == 1 ? axis : 1);
      if (f == kNoValue) return false;
      inputs.push_back(f);
    }
    const int bias_at = float_type == "Conv" ? 8 : float_type == "Gemm" ? 6 : -1;
    if (bias_at > 0 && static_cast<int>(n.inputs.size()) > bias_at &&
        n.inputs[bias_at] != kNoValue) {
      const int bias = DequantizedBias(b, n, n.inputs[bias_at], operands[0], operands[1], 0);
      if (bias == kNoValue) return false;
      inputs.push_back(bias);
    }
    const int y = n.outputs[0];
    const bool float_out = y_scale == kNoValue;  // QGemm without y_scale: a float output
    if (float_out && float_type != "Gemm") return false;
    const int f = b.AddLike(float_type, inputs, FloatLike(y), float_out ? y : -1,
                            [&](onnx::NodeProto* p) {  // the node's own, but channels_last
                              for (const auto& a : n.onnx->attribute())
                                if (a.name() != "channels_last") *p->add_attribute() = a;
                            });
    if (!float_out) {
      quantization_[y] = {y, y_scale, y_zero};
      // A contrib operator's output has no type from ONNX's inference: the zero point's.
      if (g_->value(y).elem_type == kUndefined)
        g_->mutable_value(y).elem_type =
            y_zero != kNoValue ? g_->value(y_zero).elem_type : int32_t{kUint8};
      std::vector<int> q = {f, y_scale};
      if (y_zero != kNoValue) q.push_back(y_zero);
      b.AddLike("QuantizeLinear", q, g_->value(y), y);
    }
    return true;
  }

  Graph* g_;
  // How each 8-bit value was quantized (by a QuantizeLinear, or by a rewritten operator).
  std::map<int, Operand> quantization_;
  std::map<std::tuple<int, int, int>, int> dequantized_;
  std::vector<std::tuple<int, int, int>> added_;  // by the rewrite under way
};

int RewriteQOperatorsAsQdq(Graph* g) { return QOperatorRewriter(g).Run(); }

// Drops the nodes PassesThrough recognizes, when no one reads their other outputs (a Dropout's
// mask) and their output is not a graph output. Returns the number dropped.
int DropPassThroughs(Graph* g) {
  std::vector<char> is_output(g->num_values(), 0);
  for (int v : g->outputs()) is_output[v] = 1;
  const std::vector<int> uses = g->UseCounts();
  int dropped = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    if (!PassesThrough(*g, n) || is_output[n.outputs[0]] ||
        g->value(n.outputs[0]).elem_type != g->value(n.inputs[0]).elem_type)
      continue;
    bool others_read = false;
    for (size_t k = 1; k < n.outputs.size(); ++k)
      others_read |= n.outputs[k] != kNoValue && uses[n.outputs[k]] > 0;
    if (others_read) continue;
    g->ReplaceUses(n.outputs[0], n.inputs[0]);
    ++dropped;
  }
  if (dropped) g->RemoveDeadCode();
  return dropped;
}

}  // namespace

namespace {

// FuseRunTimeGelus' matcher over opaque ONNX nodes (FusePatterns' over spec nodes).
class RunTimeGeluMatcher {
 public:
  explicit RunTimeGeluMatcher(const Graph& g)
      : g_(g), producer_(g.Producers()), uses_(g.UseCounts()) {}

  // x and whether it is the tanh form where node `n` computes gelu(x); nullopt otherwise.
  std::optional<std::pair<int, bool>> Match(const Node& n) const {
    if (!IsOnnx(n, "Mul") || n.inputs.size() != 2) return std::nullopt;
    for (bool tanh : {false, true}) {
      // (x * g(x)) * 0.5, either order.
      for (int side = 0; side < 2; ++side) {
        auto half = ScalarConstant(g_, n.inputs[1 - side]);
        const Node* mul = Only(n.inputs[side], "Mul");
        if (half && *half == 0.5 && mul != nullptr)
          for (int s2 = 0; s2 < 2; ++s2)
            if (auto x = Inner(mul->inputs[1 - s2], tanh); x && *x == mul->inputs[s2])
              return std::make_pair(*x, tanh);
      }
      // (x * 0.5) * g(x), either order.
      for (int side = 0; side < 2; ++side) {
        const Node* half = Only(n.inputs[side], "Mul");
        if (half == nullptr) continue;
        for (int s2 = 0; s2 < 2; ++s2) {
          auto h = ScalarConstant(g_, half->inputs[1 - s2]);
          auto x = Inner(n.inputs[1 - side], tanh);
          if (h && *h == 0.5 && x && *x == half->inputs[s2]) return std::make_pair(*x, tanh);
        }
      }
    }
    return std::nullopt;
  }

 private:
  bool IsOnnx(const Node& n, const char* type) const {
    return n.opaque() && n.domain.empty() && n.op_type == type && n.outputs.size() == 1;
  }
  // The opaque ONNX node of `type` computing v, read only once; null otherwise.
  const Node* Only(int v, const char* type) const {
    if (v == kNoValue || producer_[v] < 0 || uses_[v] != 1) return nullptr;
    const Node& p = g_.node(producer_[v]);
    return IsOnnx(p, type) ? &p : nullptr;
  }
  // u * c (either order) with the scalar c near `factor`, read only there: returns u.
  std::optional<int> ScaledBy(int v, double factor) const {
    const Node* m = Only(v, "Mul");
    if (m == nullptr || m->inputs.size() != 2) return std::nullopt;
    for (int side = 0; side < 2; ++side)
      if (auto c = ScalarConstant(g_, m->inputs[1 - side]); c && Near(*c, factor))
        return m->inputs[side];
    return std::nullopt;
  }
  // 1 + f(u) (an Add in either order) with f of `type`: returns f's input.
  std::optional<int> OnePlus(int v, const char* type) const {
    const Node* add = Only(v, "Add");
    if (add == nullptr || add->inputs.size() != 2) return std::nullopt;
    for (int side = 0; side < 2; ++side)
      if (auto one = ScalarConstant(g_, add->inputs[1 - side]); one && *one == 1.0)
        if (const Node* f = Only(add->inputs[side], type); f != nullptr && f->inputs.size() == 1)
          return f->inputs[0];
    return std::nullopt;
  }
  // 1 + erf(x / sqrt 2), or 1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)) (the cube as x (x x) in
  // either order): returns x.
  std::optional<int> Inner(int v, bool tanh) const {
    auto arg = OnePlus(v, tanh ? "Tanh" : "Erf");
    if (!arg) return std::nullopt;
    if (!tanh) return ScaledBy(*arg, 1.0 / std::sqrt(2.0));
    auto sum = ScaledBy(*arg, std::sqrt(2.0 / M_PI));
    const Node* add = sum ? Only(*sum, "Add") : nullptr;
    if (add == nullptr || add->inputs.size() != 2) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const int x = add->inputs[side];
      auto cube = ScaledBy(add->inputs[1 - side], 0.044715);
      const Node* outer = cube ? Only(*cube, "Mul") : nullptr;
      if (outer == nullptr || outer->inputs.size() != 2) continue;
      for (int s2 = 0; s2 < 2; ++s2) {
        const Node* square = Only(outer->inputs[1 - s2], "Mul");
        if (outer->inputs[s2] == x && square != nullptr && square->inputs.size() == 2 &&
            square->inputs[0] == x && square->inputs[1] == x)
          return x;
      }
    }
    return std::nullopt;
  }

  const Graph& g_;
  std::vector<int> producer_, uses_;
};

}  // namespace

int FuseRunTimeGelus(Graph* g) {
  int fused = 0;
  // One snapshot of producers and uses serves the whole pass: a fusion keeps every value's
  // producer, adds a read of its x (already read twice, so never an intermediate a later match
  // needs read once) and drops reads of its dead chain, which only makes matches fail.
  const RunTimeGeluMatcher matcher(*g);
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    if (n.outputs.size() != 1 || n.outputs[0] == kNoValue || g->value(n.outputs[0]).StaticShape() ||
        !IsFloat(g->value(n.outputs[0]).elem_type))
      continue;
    auto m = matcher.Match(n);
    if (!m) continue;
    Retype(g, i, "Gelu", {m->first});
    Node& gelu = g->mutable_node(i);
    auto proto = std::make_shared<onnx::NodeProto>(*gelu.onnx);
    proto->clear_attribute();
    ExportContext::AttrString(proto.get(), "approximate", m->second ? "tanh" : "none");
    gelu.onnx = std::move(proto);
    ++fused;
  }
  if (fused > 0) g->RemoveDeadCode();
  return fused;
}

std::optional<EinsumProduct> ParseEinsumProduct(const std::string& equation) {
  const size_t comma = equation.find(','), arrow = equation.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma) return {};
  EinsumProduct p;
  p.a = equation.substr(0, comma);
  p.b = equation.substr(comma + 1, arrow - comma - 1);
  p.y = equation.substr(arrow + 2);
  for (const std::string* t : {&p.a, &p.b, &p.y})
    for (size_t i = 0; i < t->size(); ++i)
      if ((*t)[i] < 'a' || (*t)[i] > 'z' || t->find((*t)[i], i + 1) != std::string::npos) return {};
  auto in = [](const std::string& t, char c) { return t.find(c) != std::string::npos; };
  for (const std::string* t : {&p.a, &p.b, &p.y})
    for (char c : *t) {
      const bool a = in(p.a, c), b = in(p.b, c), y = in(p.y, c);
      if (a && b && y) {
        if (!in(p.batch, c)) p.batch += c;
        continue;
      }
      char* role = a && y ? &p.m : a && b ? &p.k : b && y ? &p.n : nullptr;
      if (role == nullptr || (*role != 0 && *role != c)) return {};  // one term only: summed
      *role = c;
    }
  if (!p.m || !p.k || !p.n) return {};
  return p;
}

namespace {

// Every value's rank where the import knows it or it follows from the ranks of a node's inputs
// (element-wise operators, activations, normalizations, Transpose, Concat, MatMul, a Reshape to a
// computed shape of known length): -1 elsewhere.
std::vector<int64_t> ForwardRanks(const Graph& g) {
  std::vector<int64_t> rank(g.num_values(), -1);
  for (int v = 0; v < g.num_values(); ++v)
    if (g.value(v).rank_known) rank[v] = static_cast<int64_t>(g.value(v).dims.size());
  static const std::set<std::string> kSame = {
      "Softmax", "LogSoftmax", "Relu",       "Erf",      "Gelu",
      "Neg",     "Cast",       "Sqrt",       "Exp",      "Tanh",
      "Sigmoid", "Abs",        "Reciprocal", "Identity", "LayerNormalization",
      "Dropout", "Clip"};
  static const std::set<std::string> kBroadcast = {"Add",   "Sub", "Mul", "Div",    "Pow",
                                                   "Where", "Max", "Min", "MatMul", "Concat"};
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (!n.opaque() || !n.domain.empty() || n.outputs.empty() || n.outputs[0] == kNoValue ||
        rank[n.outputs[0]] >= 0 || n.inputs.empty() || n.inputs[0] == kNoValue)
      continue;
    int64_t r = -1;
    if (kSame.count(n.op_type)) {
      r = rank[n.inputs[0]];
    } else if (kBroadcast.count(n.op_type)) {
      for (int v : n.inputs) {
        if (v == kNoValue || rank[v] < 0) {
          r = -1;
          break;
        }
        r = std::max(r, rank[v]);
      }
    } else if (n.op_type == "Transpose") {
      const std::vector<int64_t> perm = KernelContext(*n.onnx, 0, {}).AttrInts("perm");
      r = perm.empty() ? rank[n.inputs[0]] : static_cast<int64_t>(perm.size());
    } else if (n.op_type == "Reshape" && n.inputs.size() == 2 && n.inputs[1] != kNoValue) {
      const Value& shape = g.value(n.inputs[1]);
      if (shape.rank_known && shape.dims.size() == 1 && shape.dims[0] >= 0) r = shape.dims[0];
    }
    rank[n.outputs[0]] = r;
  }
  return rank;
}

}  // namespace

int FoldRunTimeTransposesIntoMatMuls(Graph* g) {
  constexpr char kBatchLetters[] = "abcdefgh";
  const std::vector<int64_t> ranks = ForwardRanks(*g);
  int folded = 0;
  const std::vector<int> producer = g->Producers();
  const std::vector<int> uses = g->UseCounts();
  std::vector<int> reader(g->num_values(), -1);  // the node reading a value read once
  for (int i = 0; i < g->num_nodes(); ++i)
    for (int v : g->node(i).inputs)
      if (v != kNoValue && uses[v] == 1) reader[v] = i;
  auto is_onnx = [](const Node& n, const char* type) {
    return n.opaque() && n.domain.empty() && n.op_type == type && n.outputs.size() == 1;
  };
  // The permutation of a Transpose node of `rank` axes (ONNX: none given reverses them).
  auto perm_of = [](const Node& t, size_t rank) {
    std::vector<int64_t> perm = KernelContext(*t.onnx, 0, {}).AttrInts("perm");
    if (perm.empty())
      for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
    return perm;
  };
  std::vector<int> dead;  // Transposes folded into a product's output
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    if (!is_onnx(n, "MatMul") || n.inputs.size() != 2 || n.outputs[0] == kNoValue) continue;
    const int y = n.outputs[0];
    if (g->value(y).StaticShape() || !IsFloat(g->value(y).elem_type)) continue;
    // Each operand's rank (a Reshape to a computed shape leaves it unknown to the import, as
    // BERT's heads are made): the same for both, or no fold.
    const int64_t rank_a = ranks[n.inputs[0]];
    if (rank_a < 2 || rank_a - 2 > 8 || ranks[n.inputs[1]] != rank_a) continue;
    const size_t rank = static_cast<size_t>(rank_a);
    const std::string batch(kBatchLetters, rank - 2);
    std::string terms[2] = {batch + "ij", batch + "jk"};   // m = i, k = j, n = k
    const char inner_ok[2][2] = {{'j', 'i'}, {'k', 'j'}};  // read as N or as T
    int operands[2] = {n.inputs[0], n.inputs[1]};
    bool any = false;
    for (int side = 0; side < 2; ++side) {
      const int v = operands[side];
      if (v == kNoValue || producer[v] < 0 || uses[v] != 1) continue;
      const Node& t = g->node(producer[v]);
      if (!is_onnx(t, "Transpose") || t.inputs.size() != 1) continue;
      const std::vector<int64_t> perm = perm_of(t, rank);
      if (perm.size() != rank) continue;
      std::string raw(rank, ' ');
      for (size_t d = 0; d < rank; ++d) raw[static_cast<size_t>(perm[d])] = terms[side][d];
      if (raw.back() != inner_ok[side][0] && raw.back() != inner_ok[side][1]) continue;
      terms[side] = raw;
      operands[side] = t.inputs[0];
      any = true;
    }
    std::string out = batch + "ik";
    int result = y;
    const int tr = reader[y];
    bool output_is_graph_output = false;
    for (int o : g->outputs()) output_is_graph_output |= o == y;
    if (tr >= 0 && !output_is_graph_output && is_onnx(g->node(tr), "Transpose") &&
        g->node(tr).outputs[0] != kNoValue) {
      const std::vector<int64_t> perm = perm_of(g->node(tr), rank);
      if (perm.size() == rank) {
        std::string z(rank, ' ');
        for (size_t d = 0; d < rank; ++d) z[d] = out[static_cast<size_t>(perm[d])];
        if (z.back() == 'k') {
          out = z;
          result = g->node(tr).outputs[0];
          dead.push_back(tr);
          any = true;
        }
      }
    }
    if (!any) continue;
    Retype(g, i, "Einsum", {operands[0], operands[1]});
    Node& einsum = g->mutable_node(i);
    auto proto = std::make_shared<onnx::NodeProto>(*einsum.onnx);
    proto->clear_attribute();
    ExportContext::AttrString(proto.get(), "equation", terms[0] + "," + terms[1] + "->" + out);
    einsum.onnx = std::move(proto);
    einsum.outputs = {result};
    ++folded;
  }
  if (folded == 0) return 0;
  // A Transpose folded into the product before it computes nothing now: the product writes its
  // output. Dropped from the node list (its input, the product's old result, is read no more).
  std::vector<std::shared_ptr<const Node>> kept;
  for (int i = 0; i < g->num_nodes(); ++i)
    if (std::find(dead.begin(), dead.end(), i) == dead.end()) kept.push_back(g->node_ptr(i));
  g->SetNodes(std::move(kept));
  g->RemoveDeadCode();
  return folded;
}

int CanonicalizeOnnxForms(Graph* g) {
  int rewritten = DropPassThroughs(g) + RewriteEinsumAsMatMul(g) + RewritePowers(g) +
                  RewriteDepthToSpace(g) + RewriteFourierTransforms(g) + RewriteInfiniteMasks(g) +
                  RewriteDynamicQuantizeMatMul(g) + RewriteConvInteger(g) +
                  RewriteQOperatorsAsQdq(g);
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    if (!n.opaque() || !n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1 ||
        n.inputs[0] == kNoValue || !IsFloat(g->value(n.inputs[0]).elem_type))
      continue;
    if (n.op_type == "Div" && FloatConstant(*g, n.inputs[1], true)) {
      RewriteWithConstant(g, i, "Mul", [](double v) { return 1.0 / v; });
      ++rewritten;
    } else if (n.op_type == "Div" && IsOne(*g, n.inputs[0]) && n.inputs[1] != kNoValue &&
               g->value(n.inputs[1]).dims == g->value(n.outputs[0]).dims) {
      // 1 / y (torch.rsqrt, an RMSNorm's 1 / sqrt(mean(x^2) + eps)): a Reciprocal.
      Retype(g, i, "Reciprocal", {n.inputs[1]});
      ++rewritten;
    } else if (n.op_type == "Sub" && FloatConstant(*g, n.inputs[1], false)) {
      RewriteWithConstant(g, i, "Add", [](double v) { return -v; });
      ++rewritten;
    }
  }
  // A zero Pad of the spatial dims read only by an AveragePool or a Conv without padding of its
  // own becomes that padding (an average counting the padded zeros: count_include_pad=1).
  const std::vector<int> producer = g->Producers();
  const std::vector<int> uses = g->UseCounts();
  int folded = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const Node& n = g->node(i);
    const bool avg = n.op_type == "AveragePool";
    if (!n.opaque() || !n.domain.empty() || (!avg && n.op_type != "Conv") || n.inputs.empty() ||
        n.inputs[0] == kNoValue || producer[n.inputs[0]] < 0 || uses[n.inputs[0]] != 1)
      continue;
    const Node& pad = g->node(producer[n.inputs[0]]);
    std::optional<std::vector<int64_t>> pads = ZeroSpatialPads(*g, pad);
    KernelContext attrs(*n.onnx, g->DefaultOpset(), {});
    std::vector<int64_t> own = attrs.AttrInts("pads");
    const std::string auto_pad = attrs.AttrString("auto_pad", "NOTSET");
    if (!pads || g->value(pad.inputs[0]).dims.size() != 4 ||
        std::any_of(own.begin(), own.end(), [](int64_t v) { return v != 0; }) ||
        (auto_pad != "NOTSET" && auto_pad != "VALID") || (avg && attrs.AttrInt("ceil_mode", 0)))
      continue;
    auto proto = std::make_shared<onnx::NodeProto>(*n.onnx);
    for (int a = proto->attribute_size() - 1; a >= 0; --a) {
      const std::string& name = proto->attribute(a).name();
      if (name == "pads" || name == "auto_pad" || name == "count_include_pad")
        proto->mutable_attribute()->DeleteSubrange(a, 1);
    }
    ExportContext::AttrInts(proto.get(), "pads", *pads);
    if (avg) ExportContext::AttrInt(proto.get(), "count_include_pad", 1);
    Node& m = g->mutable_node(i);
    m.onnx = std::move(proto);
    m.inputs[0] = pad.inputs[0];
    ++folded;
  }
  if (folded > 0) g->RemoveDeadCode();
  return rewritten + folded;
}

std::optional<std::vector<int64_t>> ZeroSpatialPads(const Graph& g, const Node& p) {
  if (p.op == OpKind::kPad) return SpecPads(p, specs::ops::PadMode::kZero);
  if (!p.opaque() || !p.domain.empty() || p.op_type != "Pad" || p.inputs.size() < 2 ||
      p.inputs[1] == kNoValue || g.DefaultOpset() < 11)
    return std::nullopt;
  KernelContext ctx(*p.onnx, g.DefaultOpset(), {});
  if (ctx.AttrString("mode", "constant") != "constant") return std::nullopt;
  if (p.inputs.size() > 2 && p.inputs[2] != kNoValue) {
    auto v = ScalarConstant(g, p.inputs[2]);
    if (!v || *v != 0.0) return std::nullopt;
  }
  if (p.inputs.size() > 3 && p.inputs[3] != kNoValue) return std::nullopt;  // axes
  const Value& pads = g.value(p.inputs[1]);
  if (!pads.constant || pads.constant->NumElements() != 8) return std::nullopt;
  std::vector<int64_t> v = pads.constant->ToInts();
  if (v[0] || v[1] || v[4] || v[5]) return std::nullopt;
  for (int64_t x : v)
    if (x < 0) return std::nullopt;
  return std::vector<int64_t>{v[2], v[3], v[6], v[7]};
}

std::optional<std::vector<int64_t>> SpecPads(const Node& n, specs::ops::PadMode mode) {
  if (n.op != OpKind::kPad || specs::ops::PadModeOf(n.params) != mode) return std::nullopt;
  return specs::ops::PadAmounts(n.params);
}

int FusePatterns(Graph* g) { return PatternFuser(g).Run(); }

std::vector<ConvEpilogueMatch> FindConvEpilogues(const Graph& g) {
  namespace ops = specs::ops;
  const std::vector<int> sole_reader = g.SoleReaders();
  // The activation a unary node applies, where a convolution's parameter names it (exp and erf
  // are not among them).
  const specs::ParamDesc& conv_activation = *specs::GetOp(OpKind::kConv2d).FindParam("activation");
  auto activation_of = [&](const Node& n) -> std::optional<specs::Activation> {
    if (n.opaque() || n.inputs.size() != 1 || n.outputs.size() != 1) return std::nullopt;
    const std::optional<specs::Activation> a = ops::UnaryActivation(*n.op);
    if (!a) return std::nullopt;
    for (const auto& named : conv_activation.names)
      if (named.first == static_cast<int64_t>(*a)) return a;
    return std::nullopt;
  };
  std::vector<ConvEpilogueMatch> matches;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& conv = g.node(i);
    if (conv.opaque() || (*conv.op != OpKind::kConv2d && *conv.op != OpKind::kConv2dBias) ||
        conv.outputs.size() != 1 ||
        conv.params[ops::kConvActivation] != static_cast<int64_t>(specs::Activation::kNone))
      continue;
    ConvEpilogueMatch m;
    m.conv = i;
    int out = conv.outputs[0];
    if (*conv.op == OpKind::kConv2d && sole_reader[out] >= 0) {
      const Node& b = g.node(sole_reader[out]);
      if (!b.opaque() && *b.op == OpKind::kBiasAdd && b.params[ops::kBiasAxis] == 1 &&
          b.inputs[0] == out && g.value(b.inputs[1]).dims.size() == 1 &&
          g.value(b.inputs[1]).constant) {
        m.bias = sole_reader[out];
        out = b.outputs[0];
      }
    }
    if (sole_reader[out] >= 0) {
      const Node& a = g.node(sole_reader[out]);
      if (auto act = activation_of(a); act && a.inputs[0] == out) {
        m.activation_node = sole_reader[out];
        m.activation = *act;
      }
    }
    if (m.bias >= 0 || m.activation_node >= 0) matches.push_back(m);
  }
  return matches;
}

int FuseConvEpilogues(Graph* g) {
  namespace ops = specs::ops;
  const std::vector<ConvEpilogueMatch> matches = FindConvEpilogues(*g);
  for (const ConvEpilogueMatch& m : matches) {
    Node f = g->node(m.conv);
    int last = m.conv;
    if (m.bias >= 0) {
      const Node& b = g->node(m.bias);
      f.op = OpKind::kConv2dBias;
      f.inputs.push_back(b.inputs[1]);
      f.outputs = b.outputs;
      last = m.bias;
    }
    if (m.activation_node >= 0) {
      f.params[ops::kConvActivation] = static_cast<int64_t>(m.activation);
      f.outputs = g->node(m.activation_node).outputs;
      last = m.activation_node;
    }
    // The fused node takes the place of the last node it absorbs, so that everything it reads
    // is computed before it; the nodes before are left dead.
    g->SetNode(last, std::move(f));
  }
  if (!matches.empty()) g->RemoveDeadCode();
  return static_cast<int>(matches.size());
}

}  // namespace verisub::runtime
