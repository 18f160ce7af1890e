// batchnorm: parameters, shape rule and axioms.
#include "specs/ops/batchnorm.h"

namespace verisub::specs::ops {
namespace {

Status BatchnormShape(const Params&, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectRankAtLeast(x, 0, 2));
  for (int i = 1; i <= 4; ++i) {
    VERISUB_RETURN_IF_ERROR(ExpectRank(*in[i], i, 1));
    if (in[i]->shape[0] != x.shape[1])
      return InvalidArgument(InputName(i) + " " + in[i]->shape.ToString() + " must have " +
                             std::to_string(x.shape[1]) + " entries, one per channel of input 0");
  }
  out[0] = x;
  return Status::Ok();
}

double BatchnormFlops(const Params&, const Shape*, const Shape* out) {
  return 2.0 * static_cast<double>(out[0].NumElements());
}

}  // namespace

OpSpec BatchnormSpec() {
  OpSpec op;
  op.kind = OpKind::kBatchnorm;
  op.name = "batchnorm";
  op.summary = "inference batch normalization: inputs x [N,C,...], scale, bias, mean, var [C]";
  op.num_inputs = 5;
  ParamDesc eps;
  eps.name = "epsilon";
  eps.type = ParamType::kFloat;
  eps.slot = kBatchnormEpsilon;
  eps.domain = {EncodeFloat(1e-5)};
  op.params = {eps};
  op.shape_rule = BatchnormShape;
  op.flops = BatchnormFlops;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  op.axioms = R"(
batchnorm_concat_batch (x:4 y:4 a:1 b:1 m:1 v:1) (concat[axis=0] (batchnorm x a b m v) (batchnorm y a b m v)) = (batchnorm (concat[axis=0] x y) a b m v)
)";
  return op;
}

}  // namespace verisub::specs::ops
