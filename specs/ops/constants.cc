// Helpers for the constant operators.
#include "specs/ops/constants.h"

namespace verisub::specs::ops {

std::vector<ParamDesc> ConstKernelParams() {
  return {IntParam("kernel_h", kConstKernelH, {3}), IntParam("kernel_w", kConstKernelW, {3})};
}

Status ConstKernelShape(const TensorType& ref, const Params& p, int64_t in_channels_per_out,
                        TensorType* out) {
  VERISUB_RETURN_IF_ERROR(ExpectRank(ref, 0, 4));
  int64_t kh = p[kConstKernelH], kw = p[kConstKernelW];
  if (kh % 2 == 0 || kw % 2 == 0)
    return InvalidArgument("kernel " + std::to_string(kh) + "x" + std::to_string(kw) +
                           " must be odd in both dimensions");
  int64_t c = ref.shape[1];
  *out = TensorType(Shape{c, in_channels_per_out == 0 ? c : in_channels_per_out, kh, kw});
  return Status::Ok();
}

}  // namespace verisub::specs::ops
