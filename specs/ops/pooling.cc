// Parameters and shape rule shared by pool_max and pool_avg.
#include "specs/ops/pooling.h"

namespace verisub::specs::ops {

std::vector<ParamDesc> PoolParams() {
  std::vector<ParamDesc> ps = {IntParam("kernel_h", kPoolKernelH, {3}),
                               IntParam("kernel_w", kPoolKernelW, {3}),
                               IntParam("stride_h", kPoolStrideH, {1, 2}),
                               IntParam("stride_w", kPoolStrideW, {1, 2}),
                               PaddingParam(kPoolPadding),
                               ActivationParam(kPoolActivation)};
  ps[kPoolActivation].domain = {0, 1};
  return ps;
}

double PoolFlops(const Params& p, const Shape*, const Shape* out) {
  return static_cast<double>(out[0].NumElements()) * p[kPoolKernelH] * p[kPoolKernelW];
}

Status PoolShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectRank(x, 0, 4));
  auto pad = static_cast<Padding>(p[kPoolPadding]);
  int64_t oh, ow, ph, pw;
  VERISUB_RETURN_IF_ERROR(
      WindowGeometry("height", x.shape[2], p[kPoolKernelH], p[kPoolStrideH], pad, &oh, &ph));
  VERISUB_RETURN_IF_ERROR(
      WindowGeometry("width", x.shape[3], p[kPoolKernelW], p[kPoolStrideW], pad, &ow, &pw));
  out[0] = TensorType(Shape{x.shape[0], x.shape[1], oh, ow});
  out[0].trees[0] = x.trees[0];
  out[0].trees[1] = x.trees[1];
  return Status::Ok();
}

}  // namespace verisub::specs::ops
