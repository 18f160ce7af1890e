#include "fusion/lower.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

#include "runtime/onnx_kernels.h"
#include "runtime/scalar_constant.h"
#include "specs/ops/all_ops.h"

namespace verisub::fusion {

using runtime::Graph;
using runtime::kNoValue;
using runtime::Node;
using specs::OpKind;

namespace {

using Dims = std::vector<int64_t>;

// A static shape with no empty dimension.
bool StaticNonEmpty(const runtime::Value& v) {
  return v.StaticShape() && std::find(v.dims.begin(), v.dims.end(), 0) == v.dims.end();
}

bool StaticFloat(const Graph& g, int v) {
  return v != kNoValue && g.value(v).elem_type == runtime::kFloat && StaticNonEmpty(g.value(v));
}

// Builds the sub-operators of one node; `in(k)` is the sub-operator node of the node's k-th input.
class NodeLowering {
 public:
  NodeLowering(const Graph& g, const Node& n, SubGraph* sg, std::function<int(int)> operand)
      : g_(g), n_(n), sg_(*sg), operand_(std::move(operand)) {}

  // The sub-operator node of the output, or an error saying why the node does not lower.
  StatusOr<int> Lower() {
    if (n_.outputs.size() != 1 || !StaticFloat(g_, n_.outputs[0]))
      return Fail("one static float32 output");
    out_ = g_.value(n_.outputs[0]).dims;
    if (out_.empty()) out_ = {1};
    for (int v : n_.inputs)
      if (v != kNoValue && !runtime::ScalarConstant(g_, v) &&
          g_.value(v).elem_type != runtime::kFloat && !IsShapeInput(v) && !IsConstantMask(v))
        return Fail("float32 inputs");
    for (int v : n_.inputs)
      if (v != kNoValue && g_.value(v).elem_type == runtime::kFloat && !StaticFloat(g_, v))
        return Fail("static shapes");
    if (!n_.op && !n_.domain.empty()) return Fail("not the default domain");
    StatusOr<int> r = n_.op ? LowerSpec() : LowerOnnx();
    if (r.ok() && bad_) return Fail("operands do not broadcast to the output");
    return r;
  }

 private:
  Status Fail(const std::string& why) const {
    return Unimplemented("node '" + n_.name + "' (" + n_.KindName() + "): " + why);
  }
  // Shape operands of Reshape, axes of Squeeze/Unsqueeze/ReduceMean (int64, read as constants).
  bool IsShapeInput(int v) const {
    return n_.opaque() && n_.inputs.size() > 1 && v != n_.inputs[0] && g_.value(v).constant;
  }
  // Where's condition as a weight of any type (a causal mask): read as 0 or 1.
  bool IsConstantMask(int v) const {
    return n_.opaque() && n_.op_type == "Where" && v == n_.inputs[0] && g_.value(v).constant &&
           StaticNonEmpty(g_.value(v));
  }
  int In(int k) { return operand_(n_.inputs[k]); }
  // Input k read at the output's dims (numpy broadcasting).
  int Wide(int k) {
    const int x = In(k);
    const Dims& d = sg_.dims(x);
    bool ok = d.size() <= out_.size();
    for (size_t j = 0; ok && j < d.size(); ++j)
      ok = d[j] == 1 || d[j] == out_[out_.size() - d.size() + j];
    if (ok) return sg_.BroadcastTo(x, out_);
    bad_ = true;  // Lower fails; a placeholder keeps the graph well formed until then
    return C(0);
  }
  int C(double v) { return sg_.Const(v, out_); }
  int Un(UnaryFn f, int a) { return sg_.Unary(f, a); }
  int Bin(BinaryFn f, int a, int b) { return sg_.Binary(f, a, b); }
  int Add(int a, int b) { return Bin(BinaryFn::kAdd, a, b); }
  int Mul(int a, int b) { return Bin(BinaryFn::kMul, a, b); }
  int Sub(int a, int b) { return Add(a, Un(UnaryFn::kNeg, b)); }
  int Div(int a, int b) { return Mul(a, Un(UnaryFn::kRecip, b)); }
  int Sigmoid(int x) {
    return Un(UnaryFn::kRecip, Add(C(1), Un(UnaryFn::kExp, Un(UnaryFn::kNeg, x))));
  }
  int Clamp(int x, double lo, double hi) {
    if (lo > -INFINITY) x = Bin(BinaryFn::kMax, x, C(lo));
    if (hi < INFINITY) x = Bin(BinaryFn::kMin, x, C(hi));
    return x;
  }
  // max(0, min(1, alpha x + beta)), the bounds in the order the spec states them (specs/params.h;
  // the symbolic check compares the expressions).
  int HardSigmoid(int x, double alpha, double beta) {
    return Bin(BinaryFn::kMax, Bin(BinaryFn::kMin, Add(Mul(x, C(alpha)), C(beta)), C(1)), C(0));
  }

  int Activation(specs::Activation a, int x) {
    using specs::Activation;
    switch (a) {
      case Activation::kNone:
        return x;
      case Activation::kRelu:
        return Bin(BinaryFn::kMax, x, C(0));
      case Activation::kSigmoid:
        return Sigmoid(x);
      case Activation::kTanh:
        return Un(UnaryFn::kTanh, x);
      case Activation::kRelu6:
        return Clamp(x, 0, 6);
      case Activation::kHardSigmoid:
        return HardSigmoid(x, 1.0 / 6, 0.5);
      case Activation::kHardSwish:
        return Mul(x, HardSigmoid(x, 1.0 / 6, 0.5));
      case Activation::kSilu:
        return Mul(x, Sigmoid(x));
      case Activation::kGelu:
        return Mul(Mul(x, C(0.5)), Add(C(1), Un(UnaryFn::kErf, Mul(x, C(M_SQRT1_2)))));
      case Activation::kGeluTanh: {
        const int cube = Mul(Mul(x, x), x);
        const int inner = Mul(C(std::sqrt(2 / M_PI)), Add(x, Mul(C(0.044715), cube)));
        return Mul(Mul(x, C(0.5)), Add(C(1), Un(UnaryFn::kTanh, inner)));
      }
      case Activation::kExp:
        return Un(UnaryFn::kExp, x);
      case Activation::kErf:
        return Un(UnaryFn::kErf, x);
      case Activation::kLog:
        return Un(UnaryFn::kLog, x);
      case Activation::kSqrt:
        return Un(UnaryFn::kSqrt, x);
      case Activation::kRecip:
        return Un(UnaryFn::kRecip, x);
    }
    return x;
  }

  // A vector of extent out_[axis] read along `axis` of the output.
  int AlongAxis(int vec, int axis) {
    if (NumElements(sg_.dims(vec)) != out_[axis]) return -1;
    std::vector<AxisMap> map(sg_.dims(vec).size());
    for (AxisMap& m : map) m.coef.assign(out_.size(), 0);
    map.back().coef[axis] = 1;
    return sg_.Reindex(vec, out_, std::move(map));
  }

  // Reads x (dims out_) with every axis in `axes` reduced by f, broadcast back to out_.
  int ReduceBack(ReduceFn f, int x, const std::vector<int>& axes) {
    return sg_.BroadcastTo(sg_.Reduce(f, x, axes), out_);
  }

  // The row's sum is inverted (or its log taken) once per row, before it is broadcast: one
  // multiply per element instead of a division.
  int Softmax(int x, int axis, bool log) {
    const int shifted = Sub(x, ReduceBack(ReduceFn::kMax, x, {axis}));
    const int e = Un(UnaryFn::kExp, shifted);
    const int sum = sg_.Reduce(ReduceFn::kSum, e, {axis});
    return log ? Sub(shifted, sg_.BroadcastTo(Un(UnaryFn::kLog, sum), out_))
               : Mul(e, sg_.BroadcastTo(Un(UnaryFn::kRecip, sum), out_));
  }

  // Mean over `axes` of x (dims `dims`), keeping them as extent 1.
  int Mean(int x, const std::vector<int>& axes) {
    int64_t count = 1;
    const Dims& d = sg_.dims(x);
    for (int a : axes) count *= d[a];
    const int sum = sg_.Reduce(ReduceFn::kSum, x, axes);
    return Mul(sum, sg_.Const(1.0 / static_cast<double>(count), sg_.dims(sum)));
  }

  // x (any dims with out_'s element count) read as out_: a reshape. The axes split into groups
  // whose extents multiply to the same count on both sides (ShuffleNet's [C] <-> [2, C/2], the
  // [H] <-> [H] and [W] <-> [W] around it); each input axis reads the linear index of its group's
  // output axes, so an axis a reshape leaves alone maps directly (the innermost one stays dense
  // and vectorizes) and divisions and moduli appear only where axes are split or merged.
  int Reshape(int x) {
    const Dims& from = sg_.dims(x);
    if (from == out_) return x;
    if (NumElements(from) != NumElements(out_)) return -1;
    const size_t nf = from.size(), no = out_.size();
    // group_of_in[k] / group_of_out[j]: the group of each axis; one group for everything when
    // the tensor is empty (no count to match).
    std::vector<int> group_of_in(nf, 0), group_of_out(no, 0);
    if (NumElements(from) > 0) {
      size_t i = 0, j = 0;
      int group = 0;
      while (i < nf || j < no) {
        int64_t pi = 1, pj = 1;
        if (i < nf) group_of_in[i] = group, pi *= from[i++];
        if (j < no) group_of_out[j] = group, pj *= out_[j++];
        while (pi != pj) {
          if (pi < pj && i < nf) {
            group_of_in[i] = group, pi *= from[i++];
          } else if (pj < pi && j < no) {
            group_of_out[j] = group, pj *= out_[j++];
          } else {
            return -1;  // counts that never meet (cannot happen with equal element counts)
          }
        }
        ++group;
      }
    }
    // Per group, the strides of its output axes within it and its largest linear index.
    std::vector<int64_t> out_stride(no, 1);
    std::map<int, int64_t> group_count;
    for (size_t j = no; j-- > 0;) {
      int64_t& count = group_count.try_emplace(group_of_out[j], 1).first->second;
      out_stride[j] = count;
      count *= out_[j];
    }
    // Input axis k reads (its group's linear output index / its stride within the group) mod its
    // extent; the division and the modulo drop where they cannot change the index (an axis that
    // only adds or removes extents of 1 maps directly).
    std::vector<AxisMap> map(nf);
    std::map<int, int64_t> in_strides;  // per group, the stride of the axis being mapped
    for (size_t k = nf; k-- > 0;) {
      const int group = group_of_in[k];
      int64_t& in_stride = in_strides.try_emplace(group, 1).first->second;
      const auto count = group_count.find(group);
      const int64_t last = count == group_count.end() ? 0 : count->second - 1;
      AxisMap& m = map[k];
      m.coef.assign(no, 0);
      for (size_t j = 0; j < no; ++j)
        if (group_of_out[j] == group) m.coef[j] = out_stride[j];
      m.divisor = in_stride;
      m.modulus = from[k];
      if (last / in_stride == 0) {  // always index 0
        m.coef.assign(no, 0);
        m.divisor = 1;
      } else if (std::all_of(m.coef.begin(), m.coef.end(),
                             [&](int64_t c) { return c % in_stride == 0; })) {
        for (int64_t& c : m.coef) c /= in_stride;
        m.divisor = 1;
      }
      if (last / in_stride < from[k]) m.modulus = 0;
      in_stride *= from[k];
    }
    return sg_.Reindex(x, out_, std::move(map));
  }

  // -1 where `perm` is no permutation or does not give the node's output dims.
  int Transpose(int x, const std::vector<int>& perm) {
    const Dims& from = sg_.dims(x);
    if (perm.size() != from.size() || perm.size() != out_.size()) return -1;
    for (size_t j = 0; j < perm.size(); ++j)
      if (perm[j] < 0 || perm[j] >= static_cast<int>(from.size()) || from[perm[j]] != out_[j])
        return -1;
    return sg_.Transpose(x, perm);
  }

  int Rank() const { return static_cast<int>(out_.size()); }

  StatusOr<int> Checked(int r, const char* what) {
    if (r < 0) return Fail(what);
    return r;
  }

  StatusOr<int> LowerSpec() {
    const OpKind op = *n_.op;
    const specs::Params& p = n_.params;
    if (auto a = specs::ops::UnaryActivation(op)) return Activation(*a, In(0));
    switch (op) {
      case OpKind::kEwAdd:
        return Add(Wide(0), Wide(1));
      case OpKind::kEwMul:
        return Mul(Wide(0), Wide(1));
      case OpKind::kEwSub:
        return Sub(Wide(0), Wide(1));
      case OpKind::kSmul:
        return Mul(In(0), Wide(1));
      case OpKind::kBiasAdd:
      case OpKind::kChannelScale: {
        const int axis = static_cast<int>(
            p[op == OpKind::kBiasAdd ? specs::ops::kBiasAxis : specs::ops::kChannelScaleAxis]);
        if (axis < 0 || axis >= Rank()) return Fail("axis");
        VERISUB_ASSIGN_OR_RETURN(int v, Checked(AlongAxis(In(1), axis), "operand size"));
        return op == OpKind::kBiasAdd ? Add(In(0), v) : Mul(In(0), v);
      }
      case OpKind::kBatchnorm: {
        if (Rank() < 2) return Fail("rank");
        const double eps = specs::DecodeFloat(p[specs::ops::kBatchnormEpsilon]);
        auto along = [&](int v) { return Checked(AlongAxis(v, 1), "operand size"); };
        // scale / sqrt(var + eps) once per channel where the vectors have one shape (they do in
        // every export), then read per element as the mean and the shift are: no square root
        // and reciprocal per element in a generated kernel.
        const int scale = In(1), var = In(4);
        int k;
        if (sg_.dims(scale) == sg_.dims(var)) {
          const int inv =
              Un(UnaryFn::kRecip,
                 Un(UnaryFn::kSqrt, Bin(BinaryFn::kAdd, var, sg_.Const(eps, sg_.dims(var)))));
          VERISUB_ASSIGN_OR_RETURN(k, along(Bin(BinaryFn::kMul, inv, scale)));
        } else {
          VERISUB_ASSIGN_OR_RETURN(int s, along(scale));
          VERISUB_ASSIGN_OR_RETURN(int v, along(var));
          k = Mul(Un(UnaryFn::kRecip, Un(UnaryFn::kSqrt, Add(v, C(eps)))), s);
        }
        VERISUB_ASSIGN_OR_RETURN(int mean, along(In(3)));
        VERISUB_ASSIGN_OR_RETURN(int shift, along(In(2)));
        return Add(Mul(Sub(In(0), mean), k), shift);
      }
      case OpKind::kSoftmax: {
        const int axis = static_cast<int>(p[specs::ops::kSoftmaxAxis]);
        if (axis < 0 || axis >= Rank()) return Fail("axis");
        return Softmax(In(0), axis, false);
      }
      case OpKind::kLayerNorm: {
        const int axis = static_cast<int>(p[specs::ops::kLayerNormAxis]);
        if (axis < 0 || axis >= Rank()) return Fail("axis");
        return LayerNorm(In(0), axis, specs::DecodeFloat(p[specs::ops::kLayerNormEpsilon]), Wide(1),
                         Wide(2));
      }
      case OpKind::kReduceMean: {
        const Dims& in = g_.value(n_.inputs[0]).dims;
        std::vector<int> axes;
        for (int d = 0; d < static_cast<int>(in.size()); ++d)
          if (specs::ops::ReducesAxis(p, d)) axes.push_back(d);
        if (axes.empty()) return Fail("no axes");
        return Checked(Reshape(Mean(In(0), axes)), "shape");
      }
      case OpKind::kTranspose: {
        return Checked(Transpose(In(0), specs::DecodePerm(p[specs::ops::kTransposePerm])), "perm");
      }
      case OpKind::kReshape:
        return Checked(Reshape(In(0)), "shape");
      case OpKind::kSlice: {
        const int axis = static_cast<int>(p[specs::ops::kSliceAxis]);
        const int x = In(0);
        if (axis < 0 || axis >= Rank() || sg_.dims(x).size() != out_.size()) return Fail("axis");
        return ShiftedAlong(x, axis, p[specs::ops::kSliceStart]);
      }
      case OpKind::kConcat:
        return Concat(static_cast<int>(p[specs::ops::kConcatAxis]));
      default:
        return Fail("no lowering");
    }
  }

  // x (of out_'s rank) read at out_'s dims with index i + offset along `axis` and the others as
  // they are; zero where that falls outside x (a slice's start, a concatenated part's place).
  int ShiftedAlong(int x, int axis, int64_t offset) {
    std::vector<AxisMap> map(out_.size());
    for (size_t j = 0; j < map.size(); ++j) {
      map[j].coef.assign(out_.size(), 0);
      map[j].coef[j] = 1;
    }
    map[axis].offset = offset;
    return sg_.Reindex(x, out_, std::move(map), 0);
  }

  // The inputs side by side along `axis`: each read at its offset there, zero outside its range,
  // and the reads added (one of them is the value, the others 0; a -0 reads as +0).
  StatusOr<int> Concat(int axis) {
    if (axis < 0 || axis >= Rank()) return Fail("axis");
    int64_t start = 0;
    int sum = -1;
    for (size_t k = 0; k < n_.inputs.size(); ++k) {
      const int x = In(static_cast<int>(k));
      const Dims& d = sg_.dims(x);
      if (d.size() != out_.size()) return Fail("rank");
      for (int j = 0; j < Rank(); ++j)
        if (j != axis && d[j] != out_[j]) return Fail("shape");
      const int64_t extent = d[axis];  // `d` lives in the graph the next node may move
      const int part = d == out_ && start == 0 ? x : ShiftedAlong(x, axis, -start);
      start += extent;
      sum = sum < 0 ? part : Add(sum, part);
    }
    if (sum < 0 || start != out_[axis]) return Fail("shape");
    return sum;
  }

  int LayerNorm(int x, int axis, double eps, int scale, int bias) {
    std::vector<int> axes(Rank() - axis);
    std::iota(axes.begin(), axes.end(), axis);
    const int centred = Sub(x, sg_.BroadcastTo(Mean(x, axes), out_));
    // 1 / sqrt(var + eps) once per row, then broadcast: no square root and division per element.
    const int var = Mean(Mul(centred, centred), axes);
    const int k = Un(UnaryFn::kRecip,
                     Un(UnaryFn::kSqrt, Bin(BinaryFn::kAdd, var, sg_.Const(eps, sg_.dims(var)))));
    return Add(Mul(Mul(centred, sg_.BroadcastTo(k, out_)), scale), bias);
  }

  int NormAxis(int64_t a) const { return static_cast<int>(a < 0 ? a + Rank() : a); }

  StatusOr<int> LowerOnnx() {
    const std::string& t = n_.op_type;
    runtime::KernelContext ctx(*n_.onnx, g_.DefaultOpset(), {});
    const int arity = static_cast<int>(n_.inputs.size());
    static const std::map<std::string, UnaryFn> kUnary = {
        {"Neg", UnaryFn::kNeg},   {"Reciprocal", UnaryFn::kRecip}, {"Exp", UnaryFn::kExp},
        {"Log", UnaryFn::kLog},   {"Sqrt", UnaryFn::kSqrt},        {"Erf", UnaryFn::kErf},
        {"Tanh", UnaryFn::kTanh}, {"Abs", UnaryFn::kAbs}};
    if (auto it = kUnary.find(t); it != kUnary.end() && arity == 1) return Un(it->second, In(0));
    if (arity == 1) {
      if (t == "Relu") return Activation(specs::Activation::kRelu, In(0));
      if (t == "Sigmoid") return Sigmoid(In(0));
      if (t == "HardSwish") return Activation(specs::Activation::kHardSwish, In(0));
      if (t == "HardSigmoid")
        return HardSigmoid(In(0), ctx.AttrFloat("alpha", 0.2f), ctx.AttrFloat("beta", 0.5f));
      if (t == "Softplus") {  // max(x, 0) + log(1 + exp(-|x|)): no overflow for large x
        const int x = In(0);
        const int tail = Un(UnaryFn::kExp, Un(UnaryFn::kNeg, Un(UnaryFn::kAbs, x)));
        return Add(Bin(BinaryFn::kMax, x, C(0)), Un(UnaryFn::kLog, Add(C(1), tail)));
      }
      if (t == "LeakyRelu") {
        const int x = In(0);
        return Sg().Select(Bin(BinaryFn::kLess, x, C(0)), Mul(x, C(ctx.AttrFloat("alpha", 0.01f))),
                           x);
      }
      if (t == "Elu") {
        const int x = In(0);
        const int neg = Mul(C(ctx.AttrFloat("alpha", 1.f)), Sub(Un(UnaryFn::kExp, x), C(1)));
        return Sg().Select(Bin(BinaryFn::kLess, x, C(0)), neg, x);
      }
      if (t == "Identity" || t == "Dropout") return Checked(Reshape(In(0)), "shape");
      if (t == "Flatten" || t == "Squeeze" || t == "Unsqueeze")
        return Checked(Reshape(In(0)), "shape");
    }
    if ((t == "Squeeze" || t == "Unsqueeze" || t == "Reshape") && arity == 2)
      return Checked(Reshape(In(0)), "shape");
    if (t == "Clip") {
      double lo = -INFINITY, hi = INFINITY;
      if (g_.DefaultOpset() < 11) {
        lo = ctx.AttrFloat("min", -INFINITY);
        hi = ctx.AttrFloat("max", INFINITY);
      } else {
        for (int k = 1; k < arity; ++k) {
          if (n_.inputs[k] == kNoValue) continue;
          auto c = runtime::ScalarConstant(g_, n_.inputs[k]);
          if (!c) return Fail("bounds not constant");
          (k == 1 ? lo : hi) = *c;
        }
      }
      return Clamp(In(0), lo, hi);
    }
    if (arity == 2) {
      if (t == "Add") return Add(Wide(0), Wide(1));
      if (t == "Sub") return Sub(Wide(0), Wide(1));
      if (t == "Mul") return Mul(Wide(0), Wide(1));
      if (t == "Div") return Div(Wide(0), Wide(1));
      if (t == "Pow") {
        auto e = runtime::ScalarConstant(g_, n_.inputs[1]);
        if (!e) return Fail("exponent not constant");
        const int x = Wide(0);
        if (*e == 2) return Mul(x, x);
        if (*e == 1) return x;
        if (*e == 0.5) return Un(UnaryFn::kSqrt, x);
        return Bin(BinaryFn::kPow, x, C(*e));
      }
    }
    if (t == "Where" && arity == 3) {
      if (!IsConstantMask(n_.inputs[0])) return Fail("a condition that is not a weight");
      return Sg().Select(Wide(0), Wide(1), Wide(2));
    }
    if ((t == "Max" || t == "Min" || t == "Sum" || t == "Mean") && arity >= 1) {
      const BinaryFn f = t == "Max" ? BinaryFn::kMax : t == "Min" ? BinaryFn::kMin : BinaryFn::kAdd;
      int acc = Wide(0);
      for (int k = 1; k < arity; ++k) acc = Bin(f, acc, Wide(k));
      return t == "Mean" ? Mul(acc, C(1.0 / arity)) : acc;
    }
    if ((t == "Softmax" || t == "LogSoftmax") && g_.DefaultOpset() >= 13 && arity == 1) {
      const int axis = NormAxis(ctx.AttrInt("axis", -1));
      if (axis < 0 || axis >= Rank()) return Fail("axis");
      return Softmax(In(0), axis, t == "LogSoftmax");
    }
    if (t == "Transpose" && arity == 1) {
      std::vector<int64_t> perm64 = ctx.AttrInts("perm");
      std::vector<int> perm(perm64.begin(), perm64.end());
      if (perm.empty())
        for (int j = Rank() - 1; j >= 0; --j) perm.push_back(j);
      return Checked(Transpose(In(0), perm), "perm");
    }
    if (t == "ReduceMean" || t == "ReduceSum" || t == "ReduceMax") {
      const Dims& in = g_.value(n_.inputs[0]).dims;
      std::vector<int64_t> axes64 = ctx.AttrInts("axes");
      if (arity == 2) {
        const runtime::HostTensor* c = g_.value(n_.inputs[1]).constant.get();
        if (!c) return Fail("axes not constant");
        axes64 = c->ToInts();
      } else if (arity != 1) {
        return Fail("inputs");
      }
      std::vector<int> axes;
      for (int64_t a : axes64) axes.push_back(static_cast<int>(a < 0 ? a + in.size() : a));
      if (axes.empty()) {
        if (ctx.AttrInt("noop_with_empty_axes", 0)) return Fail("no axes");
        for (int d = 0; d < static_cast<int>(in.size()); ++d) axes.push_back(d);
      }
      for (int a : axes)
        if (a < 0 || a >= static_cast<int>(in.size())) return Fail("axis");
      std::sort(axes.begin(), axes.end());
      axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
      const int x = In(0);
      const int r = t == "ReduceMean"  ? Mean(x, axes)
                    : t == "ReduceSum" ? sg_.Reduce(ReduceFn::kSum, x, axes)
                                       : sg_.Reduce(ReduceFn::kMax, x, axes);
      return Checked(Reshape(r), "shape");
    }
    return Fail("no lowering");
  }

  SubGraph& Sg() { return sg_; }

  const Graph& g_;
  const Node& n_;
  SubGraph& sg_;
  std::function<int(int)> operand_;
  Dims out_;
  bool bad_ = false;
};

}  // namespace

StatusOr<LoweredCluster> LowerCluster(const Graph& g, const std::vector<int>& nodes, int output) {
  LoweredCluster out;
  std::map<int, int> inside;  // value -> sub-operator node
  std::map<int, int> read;    // outside value -> its input node
  auto operand = [&](int v) -> int {
    if (auto it = inside.find(v); it != inside.end()) return it->second;
    if (auto it = read.find(v); it != read.end()) return it->second;
    Dims d = g.value(v).dims;
    if (d.empty()) d = {1};
    if (auto c = runtime::ScalarConstant(g, v)) return out.graph.Const(*c, d);
    const int node = out.graph.Input(d);
    out.inputs.push_back(v);
    read[v] = node;
    return node;
  };
  for (int i : nodes) {
    const Node& n = g.node(i);
    NodeLowering lowering(g, n, &out.graph, operand);
    VERISUB_ASSIGN_OR_RETURN(int result, lowering.Lower());
    inside[n.outputs[0]] = result;
  }
  auto it = inside.find(output);
  if (it == inside.end()) return InternalError("lowering: the cluster does not compute its output");
  out.graph.output = it->second;
  VERISUB_RETURN_IF_ERROR(CheckSubGraph(out.graph));
  return out;
}

std::optional<std::vector<int64_t>> PhysicalDims(const std::vector<int64_t>& dims,
                                                 specs::Layout layout) {
  const int rank = static_cast<int>(dims.size());
  if (!specs::LayoutFitsRank(layout, rank)) return std::nullopt;
  switch (layout) {
    case specs::Layout::kNHWC:
      return Dims{dims[0], dims[2], dims[3], dims[1]};
    case specs::Layout::kNCHW8c:
    case specs::Layout::kNCHW16c: {
      const int64_t b = specs::LayoutChannelBlock(layout);
      return Dims{dims[0], (dims[1] + b - 1) / b, dims[2], dims[3], b};
    }
    case specs::Layout::kColMajor: {
      Dims d = dims;
      std::swap(d[rank - 1], d[rank - 2]);
      return d;
    }
    default:
      return dims;
  }
}

namespace {

// Per physical axis of `layout`, its index as a function of the logical index (rank `rank`).
std::vector<AxisMap> PhysicalFromLogical(specs::Layout layout, int rank) {
  auto axis = [rank](int j, int64_t divisor = 1, int64_t modulus = 0) {
    AxisMap m;
    m.coef.assign(rank, 0);
    m.coef[j] = 1;
    m.divisor = divisor;
    m.modulus = modulus;
    return m;
  };
  switch (layout) {
    case specs::Layout::kNHWC:
      return {axis(0), axis(2), axis(3), axis(1)};
    case specs::Layout::kNCHW8c:
    case specs::Layout::kNCHW16c: {
      const int64_t b = specs::LayoutChannelBlock(layout);
      return {axis(0), axis(1, b), axis(2), axis(3), axis(1, 1, b)};
    }
    case specs::Layout::kColMajor: {
      std::vector<AxisMap> m;
      for (int j = 0; j < rank; ++j) m.push_back(axis(j));
      std::swap(m[rank - 1], m[rank - 2]);
      return m;
    }
    default: {
      std::vector<AxisMap> m;
      for (int j = 0; j < rank; ++j) m.push_back(axis(j));
      return m;
    }
  }
}

// Per logical axis, its index as a function of the physical index of `layout` (physical rank
// `prank`): the inverse map, for writing the output.
std::vector<AxisMap> LogicalFromPhysical(specs::Layout layout, int rank, int prank) {
  auto axis = [prank](std::vector<std::pair<int, int64_t>> terms) {
    AxisMap m;
    m.coef.assign(prank, 0);
    for (auto [j, c] : terms) m.coef[j] = c;
    return m;
  };
  switch (layout) {
    case specs::Layout::kNHWC:
      return {axis({{0, 1}}), axis({{3, 1}}), axis({{1, 1}}), axis({{2, 1}})};
    case specs::Layout::kNCHW8c:
    case specs::Layout::kNCHW16c: {
      const int64_t b = specs::LayoutChannelBlock(layout);
      return {axis({{0, 1}}), axis({{1, b}, {4, 1}}), axis({{2, 1}}), axis({{3, 1}})};
    }
    default:
      return PhysicalFromLogical(layout, rank);  // a permutation: its own inverse
  }
}

}  // namespace

StatusOr<SubGraph> InLayouts(const SubGraph& g, const std::vector<specs::Layout>& inputs,
                             specs::Layout output) {
  if (inputs.size() != g.input_dims.size())
    return InternalError("layouts: " + std::to_string(inputs.size()) + " for " +
                         std::to_string(g.input_dims.size()) + " inputs");
  SubGraph out;
  std::vector<int> input_node(g.input_dims.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Dims& logical = g.input_dims[k];
    const std::optional<Dims> phys = PhysicalDims(logical, inputs[k]);
    if (!phys)
      return InvalidArgument("input " + std::to_string(k) + " of rank " +
                             std::to_string(logical.size()) + " cannot be stored in layout " +
                             std::string(specs::LayoutName(inputs[k])));
    const int in = out.Input(*phys);
    input_node[k] =
        inputs[k] == specs::Layout::kPlain
            ? in
            : out.Reindex(in, logical,
                          PhysicalFromLogical(inputs[k], static_cast<int>(logical.size())));
  }
  std::vector<int> id(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    SubNode n = g.nodes[i];
    if (n.kind == SubOpKind::kInput) {
      id[i] = input_node[n.input];
      continue;
    }
    for (int& a : n.args) a = id[a];
    out.nodes.push_back(std::move(n));
    id[i] = static_cast<int>(out.nodes.size()) - 1;
  }
  out.output = id[g.output];
  if (output != specs::Layout::kPlain) {
    const Dims logical = out.dims(out.output);
    const std::optional<Dims> phys = PhysicalDims(logical, output);
    if (!phys)
      return InvalidArgument("the output of rank " + std::to_string(logical.size()) +
                             " cannot be stored in layout " +
                             std::string(specs::LayoutName(output)));
    out.output = out.Reindex(out.output, *phys,
                             LogicalFromPhysical(output, static_cast<int>(logical.size()),
                                                 static_cast<int>(phys->size())),
                             0.0);
  }
  VERISUB_RETURN_IF_ERROR(CheckSubGraph(out));
  return out;
}

std::optional<SubGraph> InPhysicalSpace(const SubGraph& g, const std::vector<specs::Layout>& inputs,
                                        specs::Layout layout) {
  const Dims& out = g.dims(g.output);
  const int rank = static_cast<int>(out.size());
  const std::optional<Dims> phys = PhysicalDims(out, layout);
  if (!phys || inputs.size() != g.input_dims.size()) return std::nullopt;
  const int prank = static_cast<int>(phys->size());
  // Per logical axis, its index in physical coordinates (affine for every layout we store).
  const std::vector<AxisMap> logical = LogicalFromPhysical(layout, rank, prank);
  SubGraph r;
  std::vector<int> id(g.nodes.size(), -1);
  std::vector<char> full(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const SubNode& n = g.nodes[i];
    full[i] = n.dims == out;
    if (n.kind == SubOpKind::kReduce) return std::nullopt;
    switch (n.kind) {
      case SubOpKind::kInput:
        if (inputs[n.input] != (full[i] ? layout : specs::Layout::kPlain)) return std::nullopt;
        id[i] = r.Input(full[i] ? *phys : n.dims);
        break;
      case SubOpKind::kConst:
        id[i] = r.Const(n.value, full[i] ? *phys : n.dims);
        break;
      case SubOpKind::kUnary:
      case SubOpKind::kBinary:
      case SubOpKind::kSelect: {
        SubNode m = n;
        for (int& a : m.args) {
          if (full[i] != full[a]) return std::nullopt;
          a = id[a];
        }
        if (full[i]) m.dims = *phys;
        r.nodes.push_back(std::move(m));
        id[i] = static_cast<int>(r.nodes.size()) - 1;
        break;
      }
      case SubOpKind::kReindex: {
        const int a = n.args[0];
        if (!full[i]) {  // among small operands (a reshape of a pooled vector)
          if (full[a]) return std::nullopt;
          SubNode m = n;
          m.args = {id[a]};
          r.nodes.push_back(std::move(m));
          id[i] = static_cast<int>(r.nodes.size()) - 1;
          break;
        }
        if (full[a]) return std::nullopt;  // moves full-size data: not element-wise
        std::vector<AxisMap> map(n.map.size());
        for (size_t k = 0; k < n.map.size(); ++k) {
          const AxisMap& m = n.map[k];
          if (m.offset != 0 || m.divisor != 1 || m.modulus != 0) return std::nullopt;
          map[k].coef.assign(prank, 0);
          for (int j = 0; j < rank; ++j)
            for (int q = 0; q < prank; ++q) map[k].coef[q] += m.coef[j] * logical[j].coef[q];
        }
        id[i] = r.Reindex(id[a], *phys, std::move(map), n.value);
        break;
      }
      case SubOpKind::kReduce:
        return std::nullopt;
    }
  }
  if (!full[g.output]) return std::nullopt;
  r.output = id[g.output];
  const int64_t block = specs::LayoutChannelBlock(layout);
  if (block > 1 && out[1] % block != 0) {
    // Padding lanes hold 0, as the library's blocked tensors do: a mask that reads 1 for the
    // channels there are and the fill, 0, beyond.
    AxisMap c;
    c.coef = logical[1].coef;
    const int mask = r.Reindex(r.Const(1.0, {out[1]}), *phys, {c}, 0.0);
    r.output = r.Select(mask, r.output, r.Const(0.0, *phys));
  }
  if (!CheckSubGraph(r).ok()) return std::nullopt;
  return r;
}

std::optional<LoweringInfo> Lowerable(const Graph& g, int i) {
  const Node& n = g.node(i);
  if (n.outputs.size() != 1 || n.outputs[0] == kNoValue) return std::nullopt;
  for (int v : n.inputs)
    if (v != kNoValue && !g.value(v).rank_known) return std::nullopt;
  auto lowered = LowerCluster(g, {i}, n.outputs[0]);
  if (!lowered.ok()) return std::nullopt;
  LoweringInfo info;
  for (const SubNode& s : lowered->graph.nodes) {
    if (s.kind != SubOpKind::kReduce) continue;
    const Dims& d = lowered->graph.dims(s.args[0]);
    if (info.reductions > 0 && (d != info.reduce_dims || s.reduce_axes != info.reduce_axes))
      return std::nullopt;  // two domains in one node: not one kernel
    ++info.reductions;
    info.reduce_dims = d;
    info.reduce_axes = s.reduce_axes;
  }
  return info;
}

}  // namespace verisub::fusion
