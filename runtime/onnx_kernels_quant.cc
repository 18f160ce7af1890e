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

Status MatMulInteger(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor &a = *ctx.input(0), &b = *ctx.input(1);
  if (!IsEightBit(a.elem_type) || !IsEightBit(b.elem_type))
    return InvalidArgument("MatMulInteger: A and B must be uint8 or int8");
  const int64_t ra = static_cast<int64_t>(a.dims.size()), rb = static_cast<int64_t>(b.dims.size());
  VERISUB_ASSIGN_OR_RETURN(HostTensor da, Shifted("MatMulInteger", a, ctx.input(2), ra - 2));
  VERISUB_ASSIGN_OR_RETURN(HostTensor db, Shifted("MatMulInteger", b, ctx.input(3), rb - 1));
  VERISUB_ASSIGN_OR_RETURN(HostTensor y, RunFloat(ctx, "MatMul", {&da, &db}));
  (*out)[0] = HostTensor::FromInts(kInt32, y.dims, y.ToInts());
  return Status::Ok();
}

Status ConvInteger(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor &x = *ctx.input(0), &w = *ctx.input(1);
  if (!IsEightBit(x.elem_type) || !IsEightBit(w.elem_type))
    return InvalidArgument("ConvInteger: x and w must be uint8 or int8");
  VERISUB_ASSIGN_OR_RETURN(HostTensor dx, Shifted("ConvInteger", x, ctx.input(2), -1));
  VERISUB_ASSIGN_OR_RETURN(HostTensor dw, Shifted("ConvInteger", w, ctx.input(3), 0));
  VERISUB_ASSIGN_OR_RETURN(HostTensor y, RunFloat(ctx, "Conv", {&dx, &dw}));
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

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point).
Status QLinearMatMul(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 8));
  const HostTensor &a = *ctx.input(0), &b = *ctx.input(3);
  if (!IsEightBit(a.elem_type) || !IsEightBit(b.elem_type))
    return InvalidArgument("QLinearMatMul: a and b must be uint8 or int8");
  if (ctx.input(1)->NumElements() != 1)
    return InvalidArgument("QLinearMatMul: a_scale must be one number");
  const int64_t ra = static_cast<int64_t>(a.dims.size()), rb = static_cast<int64_t>(b.dims.size());
  VERISUB_ASSIGN_OR_RETURN(HostTensor da, Shifted("QLinearMatMul", a, ctx.input(2), ra - 2));
  VERISUB_ASSIGN_OR_RETURN(HostTensor db, Shifted("QLinearMatMul", b, ctx.input(5), rb - 1));
  VERISUB_ASSIGN_OR_RETURN(HostTensor y, RunFloat(ctx, "MatMul", {&da, &db}));
  VERISUB_RETURN_IF_ERROR(CheckScales("QLinearMatMul", *ctx.input(4), y, -1));
  const std::vector<double> v = Rescaled(y, *ctx.input(1), *ctx.input(4), -1);
  VERISUB_ASSIGN_OR_RETURN((*out)[0],
                           Requantize("QLinearMatMul", y.dims, v, *ctx.input(6), ctx.input(7)));
  return Status::Ok();
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B):
// B int32 in units of x_scale * w_scale.
Status QLinearConv(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 8));
  const HostTensor &x = *ctx.input(0), &w = *ctx.input(3);
  if (!IsEightBit(x.elem_type) || !IsEightBit(w.elem_type))
    return InvalidArgument("QLinearConv: x and w must be uint8 or int8");
  if (ctx.input(1)->NumElements() != 1)
    return InvalidArgument("QLinearConv: x_scale must be one number");
  VERISUB_ASSIGN_OR_RETURN(HostTensor dx, Shifted("QLinearConv", x, ctx.input(2), -1));
  VERISUB_ASSIGN_OR_RETURN(HostTensor dw, Shifted("QLinearConv", w, ctx.input(5), 0));
  std::vector<const HostTensor*> in = {&dx, &dw};
  HostTensor bias;
  if (const HostTensor* b = ctx.input(8)) {
    bias = HostTensor::FromDoubles(kDouble, b->dims, b->ToDoubles());
    in.push_back(&bias);
  }
  VERISUB_ASSIGN_OR_RETURN(HostTensor y, RunFloat(ctx, "Conv", in));
  VERISUB_RETURN_IF_ERROR(CheckScales("QLinearConv", *ctx.input(4), y, 1));
  const std::vector<double> v = Rescaled(y, *ctx.input(1), *ctx.input(4), 1);
  VERISUB_ASSIGN_OR_RETURN((*out)[0],
                           Requantize("QLinearConv", y.dims, v, *ctx.input(6), ctx.input(7)));
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
}

}  // namespace verisub::runtime
