// Elementwise ONNX kernels: unary maps, broadcasting binary and variadic operators,
// comparisons, logic, Where, Clip and Cast.
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

using UnaryFn = double (*)(double, const KernelContext&);

// Unary float map; integer inputs of Abs, Neg and Sign keep integer semantics.
template <UnaryFn F>
Status Unary(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  if (x.elem_type == kFloat) {  // computed in double, stored as float: FromDoubles' rounding
    HostTensor& y = (*out)[0];
    y.elem_type = kFloat;
    y.dims = x.dims;
    y.f32.resize(x.f32.size());
    const float* src = x.f32.data();
    float* dst = y.f32.data();
    for (size_t i = 0; i < x.f32.size(); ++i) dst[i] = static_cast<float>(F(src[i], ctx));
    return Status::Ok();
  }
  std::vector<double> v = x.ToDoubles();
  for (double& e : v) e = F(e, ctx);
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, x.dims, v);
  return Status::Ok();
}

double Erf(double x, const KernelContext&) { return std::erf(x); }
double GeluErf(double x, const KernelContext&) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double GeluTanh(double x, const KernelContext&) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// Gelu (opset 20): exact, or the tanh approximation.
Status Gelu(const KernelContext& ctx, std::vector<HostTensor>* out) {
  const std::string approximate = ctx.AttrString("approximate", "none");
  if (approximate == "none") return Unary<GeluErf>(ctx, out);
  if (approximate == "tanh") return Unary<GeluTanh>(ctx, out);
  return InvalidArgument("Gelu: approximate '" + approximate + "' is neither none nor tanh");
}
double Exp(double x, const KernelContext&) { return std::exp(x); }
double Log(double x, const KernelContext&) { return std::log(x); }
double Sqrt(double x, const KernelContext&) { return std::sqrt(x); }
double Reciprocal(double x, const KernelContext&) { return 1.0 / x; }
double Floor(double x, const KernelContext&) { return std::floor(x); }
double Ceil(double x, const KernelContext&) { return std::ceil(x); }
double Round(double x, const KernelContext&) { return std::nearbyint(x); }  // half to even
double Relu(double x, const KernelContext&) { return x > 0 ? x : 0.0; }
double Sigmoid(double x, const KernelContext&) { return 1.0 / (1.0 + std::exp(-x)); }
double Tanh(double x, const KernelContext&) { return std::tanh(x); }
double Sin(double x, const KernelContext&) { return std::sin(x); }
double Cos(double x, const KernelContext&) { return std::cos(x); }
double Tan(double x, const KernelContext&) { return std::tan(x); }
double Asin(double x, const KernelContext&) { return std::asin(x); }
double Acos(double x, const KernelContext&) { return std::acos(x); }
double Atan(double x, const KernelContext&) { return std::atan(x); }
double Sinh(double x, const KernelContext&) { return std::sinh(x); }
double Cosh(double x, const KernelContext&) { return std::cosh(x); }
double Asinh(double x, const KernelContext&) { return std::asinh(x); }
double Acosh(double x, const KernelContext&) { return std::acosh(x); }
double Atanh(double x, const KernelContext&) { return std::atanh(x); }
double Softplus(double x, const KernelContext&) { return std::log1p(std::exp(x)); }
double Softsign(double x, const KernelContext&) { return x / (1.0 + std::fabs(x)); }
double Abs(double x, const KernelContext&) { return std::fabs(x); }
double Neg(double x, const KernelContext&) { return -x; }
double Sign(double x, const KernelContext&) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }
double Elu(double x, const KernelContext& c) {
  return x >= 0 ? x : c.AttrFloat("alpha", 1.0f) * (std::exp(x) - 1.0);
}
double Celu(double x, const KernelContext& c) {
  double a = c.AttrFloat("alpha", 1.0f);
  return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1.0));
}
double LeakyRelu(double x, const KernelContext& c) {
  return x >= 0 ? x : c.AttrFloat("alpha", 0.01f) * x;
}
double ThresholdedRelu(double x, const KernelContext& c) {
  return x > c.AttrFloat("alpha", 1.0f) ? x : 0.0;
}
double Selu(double x, const KernelContext& c) {
  double a = c.AttrFloat("alpha", 1.67326319217681884765625f);
  double g = c.AttrFloat("gamma", 1.05070102214813232421875f);
  return x > 0 ? g * x : g * (a * std::exp(x) - a);
}
double HardSigmoid(double x, const KernelContext& c) {
  double a = c.AttrFloat("alpha", 0.2f), b = c.AttrFloat("beta", 0.5f);
  return std::max(0.0, std::min(1.0, a * x + b));
}
double Shrink(double x, const KernelContext& c) {
  double l = c.AttrFloat("lambd", 0.5f), b = c.AttrFloat("bias", 0.0f);
  return x < -l ? x + b : x > l ? x - b : 0.0;
}
double HardSwish(double x, const KernelContext&) {
  return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
}

// Integer-preserving forms of Abs, Neg and Sign.
template <UnaryFn F, int64_t (*I)(int64_t)>
Status NumericUnary(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  if (!IsIntegerType(x.elem_type)) return Unary<F>(ctx, out);
  std::vector<int64_t> v = x.ints;
  for (int64_t& e : v) e = I(e);
  (*out)[0] = HostTensor::FromInts(x.elem_type, x.dims, v);
  return Status::Ok();
}
int64_t IAbs(int64_t x) { return x < 0 ? -x : x; }
int64_t INeg(int64_t x) { return -x; }
int64_t ISign(int64_t x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }

Status IsNaN(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  std::vector<double> v = ctx.input(0)->ToDoubles();
  std::vector<int64_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = std::isnan(v[i]);
  (*out)[0] = HostTensor::FromInts(kBool, ctx.input(0)->dims, r);
  return Status::Ok();
}

Status IsInf(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  bool pos = ctx.AttrInt("detect_positive", 1), neg = ctx.AttrInt("detect_negative", 1);
  std::vector<double> v = ctx.input(0)->ToDoubles();
  std::vector<int64_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = std::isinf(v[i]) && ((v[i] > 0 && pos) || (v[i] < 0 && neg));
  (*out)[0] = HostTensor::FromInts(kBool, ctx.input(0)->dims, r);
  return Status::Ok();
}

Status Not(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  std::vector<int64_t> v = ctx.input(0)->ToInts();
  for (int64_t& e : v) e = !e;
  (*out)[0] = HostTensor::FromInts(kBool, ctx.input(0)->dims, v);
  return Status::Ok();
}

enum class Bin {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,
  kMod,
  kEq,
  kLt,
  kGt,
  kLe,
  kGe,
  kAnd,
  kOr,
  kXor,
  kPRelu,
  kBitShift
};

bool IsComparison(Bin op) { return op >= Bin::kEq && op <= Bin::kXor; }

double FloatOp(Bin op, double a, double b, bool fmod) {
  switch (op) {
    case Bin::kAdd:
      return a + b;
    case Bin::kSub:
      return a - b;
    case Bin::kMul:
      return a * b;
    case Bin::kDiv:
      return a / b;
    case Bin::kPow:
      return std::pow(a, b);
    case Bin::kMax:
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    case Bin::kMin:
      return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    case Bin::kMod: {
      double r = std::fmod(a, b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case Bin::kEq:
      return a == b;
    case Bin::kLt:
      return a < b;
    case Bin::kGt:
      return a > b;
    case Bin::kLe:
      return a <= b;
    case Bin::kGe:
      return a >= b;
    case Bin::kAnd:
      return (a != 0) && (b != 0);
    case Bin::kOr:
      return (a != 0) || (b != 0);
    case Bin::kXor:
      return (a != 0) != (b != 0);
    case Bin::kPRelu:
      return a >= 0 ? a : a * b;
    case Bin::kBitShift:
      return 0;
  }
  return 0;
}

// Integer arithmetic in two's complement (wrapping like the element type after FromInts).
int64_t IntOp(Bin op, int64_t a, int64_t b, bool fmod, bool unsigned64, bool left) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case Bin::kAdd:
      return static_cast<int64_t>(ua + ub);
    case Bin::kSub:
      return static_cast<int64_t>(ua - ub);
    case Bin::kMul:
      return static_cast<int64_t>(ua * ub);
    case Bin::kDiv:
      if (b == 0) return 0;
      if (unsigned64) return static_cast<int64_t>(ua / ub);
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return a;
      return a / b;
    case Bin::kPow: {
      int64_t r = 1;
      for (int64_t i = 0; i < b && i < 64; ++i)
        r = static_cast<int64_t>(static_cast<uint64_t>(r) * ua);
      return r;
    }
    case Bin::kMax:
      return unsigned64 ? static_cast<int64_t>(std::max(ua, ub)) : std::max(a, b);
    case Bin::kMin:
      return unsigned64 ? static_cast<int64_t>(std::min(ua, ub)) : std::min(a, b);
    case Bin::kMod: {
      if (b == 0) return 0;
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return 0;
      int64_t r = a % b;
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case Bin::kEq:
      return a == b;
    case Bin::kLt:
      return unsigned64 ? ua < ub : a < b;
    case Bin::kGt:
      return unsigned64 ? ua > ub : a > b;
    case Bin::kLe:
      return unsigned64 ? ua <= ub : a <= b;
    case Bin::kGe:
      return unsigned64 ? ua >= ub : a >= b;
    case Bin::kAnd:
      return a && b;
    case Bin::kOr:
      return a || b;
    case Bin::kXor:
      return (a != 0) != (b != 0);
    case Bin::kPRelu:
      return a >= 0 ? a : a * b;
    case Bin::kBitShift:
      if (ub >= 64) return 0;
      return static_cast<int64_t>(left ? ua << ub : ua >> ub);
  }
  return 0;
}

// Where operand `t` reads its elements for output dims `dims`: all of them in order (an index
// vector of none), its only element, or a broadcast index.
struct OperandIndex {
  enum { kSame, kScalar, kIndexed } mode;
  std::vector<int64_t> index;
  OperandIndex(const std::vector<int64_t>& dims, const HostTensor& t)
      : mode(t.dims == dims         ? kSame
             : t.NumElements() == 1 ? kScalar
                                    : kIndexed) {
    if (mode == kIndexed) index = BroadcastIndex(dims, t.dims);
  }
  int64_t operator()(size_t i) const {
    return mode == kSame ? static_cast<int64_t>(i) : mode == kScalar ? 0 : index[i];
  }
};

// y = f(a, b) over output `dims` for float operands broadcast to them, without an index per
// element: each operand's strides (0 along its broadcast axes), neighbouring axes merged where
// both operands walk them as one, then the innermost axis as a loop the compiler vectorizes (both
// contiguous, or one of them a repeated element).
template <class F>
void BroadcastFloats(const std::vector<int64_t>& dims, const HostTensor& a, const HostTensor& b,
                     float* y, F f) {
  const size_t r = dims.size();
  auto strides = [&](const std::vector<int64_t>& d) {
    std::vector<int64_t> st(r, 0);
    int64_t s = 1;
    for (size_t k = 0; k < d.size(); ++k) {
      const size_t axis = r - 1 - k, own = d.size() - 1 - k;
      st[axis] = d[own] == 1 ? 0 : s;
      s *= d[own];
    }
    return st;
  };
  const std::vector<int64_t> sa_full = strides(a.dims), sb_full = strides(b.dims);
  std::vector<int64_t> od, sa, sb;
  for (size_t i = 0; i < r; ++i) {
    if (dims[i] == 1) continue;
    if (!od.empty() && sa.back() == sa_full[i] * dims[i] && sb.back() == sb_full[i] * dims[i]) {
      od.back() *= dims[i];
      sa.back() = sa_full[i];
      sb.back() = sb_full[i];
      continue;
    }
    od.push_back(dims[i]);
    sa.push_back(sa_full[i]);
    sb.push_back(sb_full[i]);
  }
  const float* pa = a.f32.data();
  const float* pb = b.f32.data();
  if (od.empty()) {  // one element
    y[0] = f(pa[0], pb[0]);
    return;
  }
  const size_t k = od.size() - 1;
  const int64_t inner = od[k], ia = sa[k], ib = sb[k];
  std::vector<int64_t> idx(k, 0);
  int64_t oa = 0, ob = 0;
  for (float* out = y;; out += inner) {
    const float* xa = pa + oa;
    const float* xb = pb + ob;
    // Along the innermost output axis (of size > 1) an operand is contiguous or broadcast.
    if (ia == 1 && ib == 1) {
      for (int64_t j = 0; j < inner; ++j) out[j] = f(xa[j], xb[j]);
    } else if (ib == 0) {
      const float v = xb[0];
      for (int64_t j = 0; j < inner; ++j) out[j] = f(xa[j], v);
    } else {
      const float v = xa[0];
      for (int64_t j = 0; j < inner; ++j) out[j] = f(v, xb[j]);
    }
    if (!NextOffsets(
            &idx, [&](int d) { return od[d]; }, [&](int d) { return sa[d]; },
            [&](int d) { return sb[d]; }, &oa, &ob))
      return;
  }
}

// The float arithmetic of FloatOp's results where float operations give them exactly: the sum,
// difference, product and quotient of two floats computed in double and rounded to float are
// the float operation's (double carries more than twice float's precision). False for the other
// operators.
bool FloatArithmetic(Bin op, const std::vector<int64_t>& dims, const HostTensor& a,
                     const HostTensor& b, float* y) {
  switch (op) {
    case Bin::kAdd:
      BroadcastFloats(dims, a, b, y, [](float u, float v) { return u + v; });
      return true;
    case Bin::kSub:
      BroadcastFloats(dims, a, b, y, [](float u, float v) { return u - v; });
      return true;
    case Bin::kMul:
      BroadcastFloats(dims, a, b, y, [](float u, float v) { return u * v; });
      return true;
    case Bin::kDiv:
      BroadcastFloats(dims, a, b, y, [](float u, float v) { return u / v; });
      return true;
    default:
      return false;
  }
}

}  // namespace

bool FloatArithmeticInto(const std::string& op, const std::vector<int64_t>& dims,
                         const HostTensor& a, const HostTensor& b, float* y) {
  static const std::map<std::string, Bin> kinds = {
      {"Add", Bin::kAdd}, {"Sub", Bin::kSub}, {"Mul", Bin::kMul}, {"Div", Bin::kDiv}};
  auto it = kinds.find(op);
  if (it == kinds.end() || a.elem_type != kFloat || b.elem_type != kFloat ||
      CountElements(dims) == 0)
    return false;
  return FloatArithmetic(it->second, dims, a, b, y);
}

namespace {

StatusOr<HostTensor> Broadcast2(Bin op, const KernelContext& ctx, const HostTensor& a,
                                const HostTensor& b) {
  VERISUB_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(a.dims, b.dims));
  const size_t n = static_cast<size_t>(CountElements(dims));
  bool fmod = ctx.AttrInt("fmod", 0) != 0;
  int32_t out_type = IsComparison(op) ? kBool : a.elem_type;
  // Integer arithmetic only when both operands are integers (Pow may mix types).
  if (IsIntegerType(a.elem_type) && IsIntegerType(b.elem_type)) {
    bool u64 = a.elem_type == kUint64;
    bool left = ctx.AttrString("direction", "LEFT") == "LEFT";
    const OperandIndex ia(dims, a), ib(dims, b);
    std::vector<int64_t> r(n);
    for (size_t i = 0; i < n; ++i) r[i] = IntOp(op, a.ints[ia(i)], b.ints[ib(i)], fmod, u64, left);
    return HostTensor::FromInts(out_type, dims, r);
  }
  // Float operands read in place (computed in double, stored as the output type stores it).
  if (a.elem_type == kFloat && b.elem_type == kFloat) {
    HostTensor y;
    y.elem_type = out_type;
    y.dims = dims;
    if (out_type == kFloat && n > 0) {
      y.f32.resize(n);
      if (FloatArithmetic(op, dims, a, b, y.f32.data())) return y;
    }
    const OperandIndex ia(dims, a), ib(dims, b);
    const float *pa = a.f32.data(), *pb = b.f32.data();
    if (out_type == kFloat) {
      y.f32.resize(n);
      float* py = y.f32.data();
      for (size_t i = 0; i < n; ++i)
        py[i] = static_cast<float>(FloatOp(op, pa[ia(i)], pb[ib(i)], fmod));
    } else {
      y.ints.resize(n);
      for (size_t i = 0; i < n; ++i) y.ints[i] = FloatOp(op, pa[ia(i)], pb[ib(i)], fmod) != 0;
    }
    return y;
  }
  const OperandIndex ia(dims, a), ib(dims, b);
  std::vector<double> av = a.ToDoubles(), bv = b.ToDoubles();
  std::vector<double> r(n);
  for (size_t i = 0; i < n; ++i) r[i] = FloatOp(op, av[ia(i)], bv[ib(i)], fmod);
  return HostTensor::FromDoubles(out_type, dims, r);
}

template <Bin B>
Status Binary(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  // Before opset 7, `broadcast` with an explicit `axis` placed B at that axis of A (and a
  // per-channel PRelu slope at axis 1): trailing ones make numpy broadcasting do the same.
  const HostTensor& a = *ctx.input(0);
  const HostTensor* bp = ctx.input(1);
  HostTensor b_legacy;  // B with trailing ones (opsets before 7)
  if (ctx.opset() < 7) {
    b_legacy = *bp;
    bp = &b_legacy;
    HostTensor& b = b_legacy;
    int64_t axis = -1;
    if (ctx.AttrInt("broadcast", 0) != 0 && ctx.FindAttr("axis")) axis = ctx.AttrInt("axis", 0);
    if (B == Bin::kPRelu && b.dims.size() == 1 && a.dims.size() > 1 && b.dims[0] == a.dims[1])
      axis = 1;
    int64_t ra = static_cast<int64_t>(a.dims.size()), rb = static_cast<int64_t>(b.dims.size());
    if (axis < 0 && ctx.FindAttr("axis")) axis += ra;
    if (axis >= 0 && axis + rb <= ra) b.dims.resize(ra - axis, 1);
  }
  if (B != Bin::kPow && !IsComparison(B) && ctx.input(0)->elem_type != ctx.input(1)->elem_type)
    return InvalidArgument(ctx.op_type() + ": inputs have different element types");
  VERISUB_ASSIGN_OR_RETURN((*out)[0], Broadcast2(B, ctx, a, *bp));
  return Status::Ok();
}

// Max, Min, Sum, Mean over any number of broadcast inputs.
template <Bin B, bool kMean>
Status Variadic(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  HostTensor acc = *ctx.input(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, i + 1));
    VERISUB_ASSIGN_OR_RETURN(acc, Broadcast2(B, ctx, acc, *ctx.input(i)));
  }
  if (kMean) {
    std::vector<double> v = acc.ToDoubles();
    for (double& e : v) e /= ctx.num_inputs();
    acc = HostTensor::FromDoubles(acc.elem_type, acc.dims, v);
  }
  (*out)[0] = std::move(acc);
  return Status::Ok();
}

Status Where(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
  const HostTensor &c = *ctx.input(0), &x = *ctx.input(1), &y = *ctx.input(2);
  VERISUB_ASSIGN_OR_RETURN(std::vector<int64_t> d1, BroadcastDims(c.dims, x.dims));
  VERISUB_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(d1, y.dims));
  std::vector<int64_t> ic = BroadcastIndex(dims, c.dims), ix = BroadcastIndex(dims, x.dims),
                       iy = BroadcastIndex(dims, y.dims);
  std::vector<int64_t> cond = c.ToInts();
  // Pick from the concatenation [x; y] so that any element type is copied exactly.
  if (x.elem_type != y.elem_type) return InvalidArgument("Where: X and Y differ in type");
  HostTensor both = x;
  std::vector<int64_t> index(ic.size());
  int64_t nx = x.NumElements();
  if (IsFloatType(x.elem_type)) {
    std::vector<double> xv = x.ToDoubles(), yv = y.ToDoubles();
    xv.insert(xv.end(), yv.begin(), yv.end());
    both = HostTensor::FromDoubles(x.elem_type, {static_cast<int64_t>(xv.size())}, xv);
  } else {
    both.ints.insert(both.ints.end(), y.ints.begin(), y.ints.end());
  }
  for (size_t i = 0; i < ic.size(); ++i) index[i] = cond[ic[i]] ? ix[i] : nx + iy[i];
  (*out)[0] = both.Gather(dims, index);
  return Status::Ok();
}

Status Clip(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  if (IsIntegerType(x.elem_type)) {
    int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
    if (ctx.input(1) && ctx.input(1)->NumElements() > 0) lo = ctx.input(1)->IntAt(0);
    if (ctx.input(2) && ctx.input(2)->NumElements() > 0) hi = ctx.input(2)->IntAt(0);
    std::vector<int64_t> v = x.ints;
    for (int64_t& e : v) e = std::min(std::max(e, lo), hi);
    (*out)[0] = HostTensor::FromInts(x.elem_type, x.dims, v);
    return Status::Ok();
  }
  double lo = -std::numeric_limits<double>::infinity(), hi = -lo;
  if (ctx.opset() < 11) {
    lo = ctx.AttrFloat("min", -std::numeric_limits<float>::max());
    hi = ctx.AttrFloat("max", std::numeric_limits<float>::max());
  } else {
    if (ctx.input(1) && ctx.input(1)->NumElements() > 0) lo = ctx.input(1)->DoubleAt(0);
    if (ctx.input(2) && ctx.input(2)->NumElements() > 0) hi = ctx.input(2)->DoubleAt(0);
  }
  std::vector<double> v = x.ToDoubles();
  for (double& e : v) e = std::min(std::max(e, lo), hi);
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, x.dims, v);
  return Status::Ok();
}

HostTensor CastTo(const HostTensor& x, int32_t to) {
  if (IsIntegerType(x.elem_type) && IsIntegerType(to))
    return HostTensor::FromInts(to, x.dims, x.ints);
  return HostTensor::FromDoubles(to, x.dims, x.ToDoubles());
}

Status Cast(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  int32_t to = static_cast<int32_t>(ctx.AttrInt("to", 0));
  if (!IsSupportedType(to) || !IsSupportedType(ctx.input(0)->elem_type))
    return Unimplemented("Cast between " + ElemTypeName(ctx.input(0)->elem_type) + " and " +
                         ElemTypeName(to));
  (*out)[0] = CastTo(*ctx.input(0), to);
  return Status::Ok();
}

Status CastLike(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  (*out)[0] = CastTo(*ctx.input(0), ctx.input(1)->elem_type);
  return Status::Ok();
}

}  // namespace

void AddElementwiseKernels(KernelTable* t) {
  auto& k = *t;
  k["Erf"] = Unary<Erf>;
  k["Gelu"] = Gelu;
  k["Exp"] = Unary<Exp>;
  k["Log"] = Unary<Log>;
  k["Sqrt"] = Unary<Sqrt>;
  k["Reciprocal"] = Unary<Reciprocal>;
  k["Floor"] = Unary<Floor>;
  k["Ceil"] = Unary<Ceil>;
  k["Round"] = Unary<Round>;
  k["Relu"] = Unary<Relu>;
  k["Sigmoid"] = Unary<Sigmoid>;
  k["Tanh"] = Unary<Tanh>;
  k["Sin"] = Unary<Sin>;
  k["Cos"] = Unary<Cos>;
  k["Tan"] = Unary<Tan>;
  k["Asin"] = Unary<Asin>;
  k["Acos"] = Unary<Acos>;
  k["Atan"] = Unary<Atan>;
  k["Sinh"] = Unary<Sinh>;
  k["Cosh"] = Unary<Cosh>;
  k["Asinh"] = Unary<Asinh>;
  k["Acosh"] = Unary<Acosh>;
  k["Atanh"] = Unary<Atanh>;
  k["Softplus"] = Unary<Softplus>;
  k["Softsign"] = Unary<Softsign>;
  k["Elu"] = Unary<Elu>;
  k["Celu"] = Unary<Celu>;
  k["LeakyRelu"] = Unary<LeakyRelu>;
  k["ThresholdedRelu"] = Unary<ThresholdedRelu>;
  k["Selu"] = Unary<Selu>;
  k["HardSigmoid"] = Unary<HardSigmoid>;
  k["HardSwish"] = Unary<HardSwish>;
  k["Shrink"] = Unary<Shrink>;
  k["Abs"] = NumericUnary<Abs, IAbs>;
  k["Neg"] = NumericUnary<Neg, INeg>;
  k["Sign"] = NumericUnary<Sign, ISign>;
  k["IsNaN"] = IsNaN;
  k["IsInf"] = IsInf;
  k["Not"] = Not;
  k["Add"] = Binary<Bin::kAdd>;
  k["Sub"] = Binary<Bin::kSub>;
  k["Mul"] = Binary<Bin::kMul>;
  k["Div"] = Binary<Bin::kDiv>;
  k["Pow"] = Binary<Bin::kPow>;
  k["Mod"] = Binary<Bin::kMod>;
  k["PRelu"] = Binary<Bin::kPRelu>;
  k["BitShift"] = Binary<Bin::kBitShift>;
  k["Equal"] = Binary<Bin::kEq>;
  k["Less"] = Binary<Bin::kLt>;
  k["Greater"] = Binary<Bin::kGt>;
  k["LessOrEqual"] = Binary<Bin::kLe>;
  k["GreaterOrEqual"] = Binary<Bin::kGe>;
  k["And"] = Binary<Bin::kAnd>;
  k["Or"] = Binary<Bin::kOr>;
  k["Xor"] = Binary<Bin::kXor>;
  k["Max"] = Variadic<Bin::kMax, false>;
  k["Min"] = Variadic<Bin::kMin, false>;
  k["Sum"] = Variadic<Bin::kAdd, false>;
  k["Mean"] = Variadic<Bin::kAdd, true>;
  k["Where"] = Where;
  k["Clip"] = Clip;
  k["Cast"] = Cast;
  k["CastLike"] = CastLike;
}

}  // namespace verisub::runtime
