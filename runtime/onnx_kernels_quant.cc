// The integer operators of quantized models: DynamicQuantizeLinear and MatMulInteger (a
// transformer quantized dynamically: activations quantized per run, int32 products rescaled in
// float), ConvInteger, and QLinearMatMul and QLinearConv (statically quantized models in ONNX's
// QOperator form). Reference kernels: the products run as the float MatMul and Conv kernels on
// zero-point-shifted operands in double precision, which is exact for these integer ranges
// (|products| < 2^53), then requantized as ONNX states it (round half to even, saturate).
#include <algorithm>
#include <cmath>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

// `x` minus its zero point as doubles: a scalar zero point, or one per index of axis `axis`
// (MatMulInteger's per-row a_zero_point on axis rank-2, per-column b_zero_point on rank-1,
// QLinearConv's per-output-channel w_zero_point on axis 0).
StatusOr<HostTensor> Shifted(const std::string& op, const HostTensor& x, const HostTensor* zero,
                             int64_t axis) {
  const std::vector<int64_t> v = x.ToInts();
  std::vector<int64_t> z = zero ? zero->ToInts() : std::vector<int64_t>{0};
  if (z.empty()) z = {0};
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t inner = 1, channels = 1;
  if (z.size() > 1) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || x.dims[axis] != static_cast<int64_t>(z.size()))
      return InvalidArgument(op + ": " + std::to_string(z.size()) +
                             " zero points do not match the operand's shape");
    channels = x.dims[axis];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dims[d];
  }
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t c = z.size() > 1 ? (static_cast<int64_t>(i) / inner) % channels : 0;
    out[i] = static_cast<double>(v[i] - z[c]);
  }
  return HostTensor::FromDoubles(kDouble, x.dims, out);
}

bool IsEightBit(int32_t t) { return t == kUint8 || t == kInt8; }

// Runs the float kernel `op_type` (with `node`'s attributes) on double inputs.
StatusOr<HostTensor> RunFloat(const KernelContext& ctx, const std::string& op_type,
                              std::vector<const HostTensor*> inputs) {
  onnx::NodeProto node = ctx.node();
  node.set_op_type(op_type);
  node.set_domain("");
  const OnnxKernel* k = FindOnnxKernel("", op_type);
  if (!k) return InternalError("no " + op_type + " kernel");
  std::vector<HostTensor> out(1);
  VERISUB_RETURN_IF_ERROR((*k)(KernelContext(node, ctx.opset(), std::move(inputs)), &out));
  return std::move(out[0]);
}

// y = saturate(round_half_even(v / y_scale) + y_zero_point) in the zero point's type.
StatusOr<HostTensor> Requantize(const std::string& op, const std::vector<int64_t>& dims,
                                const std::vector<double>& v, const HostTensor& y_scale,
                                const HostTensor* y_zero) {
  if (y_scale.NumElements() != 1) return InvalidArgument(op + ": y_scale must be one number");
  const int32_t type = y_zero ? y_zero->elem_type : kUint8;
  if (!IsEightBit(type)) return InvalidArgument(op + ": y_zero_point must be uint8 or int8");
  const double scale = y_scale.DoubleAt(0);
  const int64_t zero = y_zero && y_zero->NumElements() > 0 ? y_zero->IntAt(0) : 0;
  const double lo = type == kUint8 ? 0 : -128, hi = type == kUint8 ? 255 : 127;
  std::vector<int64_t> q(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    double r = std::nearbyint(v[i] / scale) + static_cast<double>(zero);
    if (std::isnan(r)) r = static_cast<double>(zero);
    q[i] = static_cast<int64_t>(std::clamp(r, lo, hi));
  }
  return HostTensor::FromInts(type, dims, q);
}

Status DynamicQuantizeLinear(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  const std::vector<double> v = x.ToDoubles();
  double lo = 0, hi = 0;  // the range always includes 0
  for (double e : v) {
    lo = std::min(lo, e);
    hi = std::max(hi, e);
  }
  const float scale = static_cast<float>((hi - lo) / 255.0);
  const double zero =
      scale == 0 ? 0 : std::clamp(std::nearbyint(0 - lo / static_cast<double>(scale)), 0.0, 255.0);
  std::vector<int64_t> q(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    double r =
        scale == 0 ? 0 : std::nearbyint(static_cast<double>(static_cast<float>(v[i]) / scale));
    if (std::isnan(r)) r = 0;  // a NaN input quantizes to the zero point
    q[i] = static_cast<int64_t>(std::clamp(r + zero, 0.0, 255.0));
  }
  (*out)[0] = HostTensor::FromInts(kUint8, x.dims, q);
  if (out->size() > 1) (*out)[1] = HostTensor::FromDoubles(kFloat, {}, {scale});
  if (out->size() > 2) (*out)[2] = HostTensor::FromInts(kUint8, {}, {static_cast<int64_t>(zero)});
  return Status::Ok();
}

// Where an integer product's operands and zero points are among a node's inputs, and the axes
// a zero point may run along (negative: from the end).
struct IntegerOperands {
  int a, a_zero, b, b_zero;
  int64_t a_axis, b_axis;
};

// The integer product of a node's two 8-bit operands less their zero points, as `float_op`
// (MatMul or Conv, with the node's attributes) computes it in double, plus `bias` when given.
StatusOr<HostTensor> IntegerProduct(const KernelContext& ctx, const std::string& float_op,
                                    const IntegerOperands& o, const HostTensor* bias = nullptr) {
  const std::string op = ctx.op_type();
  const HostTensor &a = *ctx.input(o.a), &b = *ctx.input(o.b);
  if (!IsEightBit(a.elem_type) || !IsEightBit(b.elem_type))
    return InvalidArgument(op + ": both operands must be uint8 or int8");
  VERISUB_ASSIGN_OR_RETURN(HostTensor da, Shifted(op, a, ctx.input(o.a_zero), o.a_axis));
  VERISUB_ASSIGN_OR_RETURN(HostTensor db, Shifted(op, b, ctx.input(o.b_zero), o.b_axis));
  std::vector<const HostTensor*> in = {&da, &db};
  HostTensor shifted_bias;
  if (bias) {
    shifted_bias = HostTensor::FromDoubles(kDouble, bias->dims, bias->ToDoubles());
    in.push_back(&shifted_bias);
  }
  return RunFloat(ctx, float_op, in);
}

// The operand ranks a matmul's zero points follow: per row of A, per column of B.
IntegerOperands MatMulOperands(const KernelContext& ctx, int a, int a_zero, int b, int b_zero) {
  return {a, a_zero, b, b_zero, static_cast<int64_t>(ctx.input(a)->dims.size()) - 2, -1};
}

Status MatMulInteger(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  VERISUB_ASSIGN_OR_RETURN(HostTensor y,
                           IntegerProduct(ctx, "MatMul", MatMulOperands(ctx, 0, 2, 1, 3)));
  (*out)[0] = HostTensor::FromInts(kInt32, y.dims, y.ToInts());
  return Status::Ok();
}

Status ConvInteger(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  VERISUB_ASSIGN_OR_RETURN(HostTensor y, IntegerProduct(ctx, "Conv", {0, 2, 1, 3, -1, 0}));
  (*out)[0] = HostTensor::FromInts(kInt32, y.dims, y.ToInts());
  return Status::Ok();
}

// Whether `scale` is one number or one per index of axis `axis` of `y`.
Status CheckScales(const std::string& op, const HostTensor& scale, const HostTensor& y,
                   int64_t axis) {
  const int64_t rank = static_cast<int64_t>(y.dims.size());
  if (axis < 0) axis += rank;
  const int64_t n = scale.NumElements();
  if (n == 1 || (axis >= 0 && axis < rank && n == y.dims[axis])) return Status::Ok();
  return InvalidArgument(op + ": " + std::to_string(n) + " weight scales for " +
                         (axis >= 0 && axis < rank ? std::to_string(y.dims[axis]) : "no") +
                         " output channels");
}

// The real value of each product: the integer product times a_scale * b_scale, per tensor or
// per output column (QLinearMatMul's b_scale) / output channel (QLinearConv's w_scale).
std::vector<double> Rescaled(const HostTensor& y, const HostTensor& a_scale,
                             const HostTensor& b_scale, int64_t axis) {
  std::vector<double> v = y.ToDoubles();
  const double sa = a_scale.DoubleAt(0);
  const int64_t n = b_scale.NumElements();
  int64_t inner = 1;
  const int64_t rank = static_cast<int64_t>(y.dims.size());
  if (axis < 0) axis += rank;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= y.dims[d];
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t c = n > 1 ? (static_cast<int64_t>(i) / inner) % n : 0;
    v[i] *= sa * b_scale.DoubleAt(c);
  }
  return v;
}

// The QLinear form: the integer product rescaled by a_scale (input 1, one number) and b_scale
// (input 4, one or one per output channel along `channel_axis`), requantized by y_scale and
// y_zero_point (inputs 6 and 7).
Status QLinear(const KernelContext& ctx, const std::string& float_op, const IntegerOperands& o,
               int64_t channel_axis, const HostTensor* bias, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 8));
  if (ctx.input(1)->NumElements() != 1)
    return InvalidArgument(ctx.op_type() + ": the first operand's scale must be one number");
  VERISUB_ASSIGN_OR_RETURN(HostTensor y, IntegerProduct(ctx, float_op, o, bias));
  VERISUB_RETURN_IF_ERROR(CheckScales(ctx.op_type(), *ctx.input(4), y, channel_axis));
  const std::vector<double> v = Rescaled(y, *ctx.input(1), *ctx.input(4), channel_axis);
  VERISUB_ASSIGN_OR_RETURN((*out)[0],
                           Requantize(ctx.op_type(), y.dims, v, *ctx.input(6), ctx.input(7)));
  return Status::Ok();
}

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point).
Status QLinearMatMul(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 8));
  return QLinear(ctx, "MatMul", MatMulOperands(ctx, 0, 2, 3, 5), -1, nullptr, out);
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B):
// B int32 in units of x_scale * w_scale.
Status QLinearConv(const KernelContext& ctx, std::vector<HostTensor>* out) {
  return QLinear(ctx, "Conv", {0, 2, 3, 5, -1, 0}, 1, ctx.input(8), out);
}

// ONNX Runtime's contrib DynamicQuantizeMatMul(A, B, b_scale, b_zero_point, bias): A quantized as
// DynamicQuantizeLinear does, its integer product with B (less the zero points) as
// MatMulInteger computes it, then float(product) * (a_scale * b_scale) + bias in float32, b_scale,
// b_zero_point and bias one number or one per column of B. The import makes it of that pattern
// written out (canonicalize.h), export writes the pattern again.
Status DynamicQuantizeMatMul(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
  const HostTensor& a = *ctx.input(0);
  if (!IsFloatType(a.elem_type)) return InvalidArgument("DynamicQuantizeMatMul: A must be float");
  std::vector<HostTensor> q(3);
  VERISUB_RETURN_IF_ERROR(DynamicQuantizeLinear(KernelContext(ctx.node(), ctx.opset(), {&a}), &q));
  const KernelContext product_ctx(ctx.node(), ctx.opset(),
                                  {&q[0], ctx.input(1), &q[2], ctx.input(3)});
  VERISUB_ASSIGN_OR_RETURN(
      HostTensor y, IntegerProduct(product_ctx, "MatMul", MatMulOperands(product_ctx, 0, 2, 1, 3)));
  VERISUB_RETURN_IF_ERROR(CheckScales("DynamicQuantizeMatMul", *ctx.input(2), y, -1));
  const HostTensor* bias = ctx.input(4);
  const int64_t cols = y.dims.empty() ? 1 : y.dims.back();
  if (bias && bias->NumElements() != cols && bias->NumElements() != 1)
    return InvalidArgument("DynamicQuantizeMatMul: " + std::to_string(bias->NumElements()) +
                           " biases for " + std::to_string(cols) + " columns");
  const float a_scale = q[1].f32[0];
  const HostTensor& b_scale = *ctx.input(2);
  const std::vector<double> v = y.ToDoubles();
  HostTensor r;
  r.elem_type = kFloat;
  r.dims = y.dims;
  r.f32.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t c = cols > 0 ? static_cast<int64_t>(i) % cols : 0;
    const float scale =
        a_scale * static_cast<float>(b_scale.DoubleAt(b_scale.NumElements() > 1 ? c : 0));
    float e = static_cast<float>(v[i]) * scale;
    if (bias) e += static_cast<float>(bias->DoubleAt(bias->NumElements() > 1 ? c : 0));
    r.f32[i] = e;
  }
  (*out)[0] = std::move(r);
  return Status::Ok();
}

}  // namespace

void AddQuantKernels(KernelTable* t) {
  auto& k = *t;
  k["DynamicQuantizeLinear"] = DynamicQuantizeLinear;
  k["MatMulInteger"] = MatMulInteger;
  k["ConvInteger"] = ConvInteger;
  k["QLinearMatMul"] = QLinearMatMul;
  k["QLinearConv"] = QLinearConv;
  k[std::string(kMicrosoftDomain) + ".DynamicQuantizeMatMul"] = DynamicQuantizeMatMul;
}

}  // namespace verisub::runtime
