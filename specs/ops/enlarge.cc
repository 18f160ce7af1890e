// enlarge: parameters, shape rule and axioms.
#include "specs/ops/enlarge.h"

namespace verisub::specs::ops {
namespace {

Status EnlargeShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& w = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectRank(w, 0, 4));
  int64_t kh = p[kEnlargeKernelH], kw = p[kEnlargeKernelW];
  if (kh < w.shape[2] || kw < w.shape[3])
    return InvalidArgument("cannot enlarge kernel " + w.shape.ToString() + " to a smaller " +
                           std::to_string(kh) + "x" + std::to_string(kw) + " window");
  if ((kh - w.shape[2]) % 2 != 0 || (kw - w.shape[3]) % 2 != 0)
    return InvalidArgument("kernel " + w.shape.ToString() + " cannot be centred in a " +
                           std::to_string(kh) + "x" + std::to_string(kw) + " window");
  out[0] = TensorType(Shape{w.shape[0], w.shape[1], kh, kw});
  out[0].trees[0] = w.trees[0];
  out[0].trees[1] = w.trees[1];
  return Status::Ok();
}

}  // namespace

OpSpec EnlargeSpec() {
  OpSpec op;
  op.kind = OpKind::kEnlarge;
  op.name = "enlarge";
  op.summary = "zero-pads a kernel [O,C,KH,KW] to [O,C,kernel_h,kernel_w], centred";
  op.num_inputs = 1;
  op.params = {IntParam("kernel_h", kEnlargeKernelH, {3}),
               IntParam("kernel_w", kEnlargeKernelW, {3})};
  op.shape_rule = EnlargeShape;
  op.axioms = R"(
enlarge_concat (w:4 v:4) (concat[axis=0] (enlarge w) (enlarge v)) = (enlarge (concat[axis=0] w v))
)";
  return op;
}

}  // namespace verisub::specs::ops
