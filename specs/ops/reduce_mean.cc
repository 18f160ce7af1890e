// reduce_mean: parameters, shape rule and axioms.
#include "specs/ops/reduce_mean.h"

namespace verisub::specs::ops {
namespace {

// Reduced axes lose their concat history (kept as 1 or dropped); the others keep it.
Status ReduceMeanShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectRankAtLeast(x, 0, 1));
  const int64_t axes = p[kReduceMeanAxes], keep = p[kReduceMeanKeepdims];
  if (axes < 1 || axes >= (int64_t{1} << x.shape.rank))
    return InvalidArgument("parameter 'axes'=" + std::to_string(axes) +
                           " (a bit mask of axes) must name one or more axes of rank " +
                           std::to_string(x.shape.rank));
  if (keep != 0 && keep != 1)
    return InvalidArgument("parameter 'keepdims'=" + std::to_string(keep) + " must be 0 or 1");
  *out = TensorType();
  for (int d = 0; d < x.shape.rank; ++d) {
    if (!ReducesAxis(p, d)) {
      out->shape[out->shape.rank] = x.shape[d];
      out->trees[out->shape.rank++] = x.trees[d];
    } else if (keep) {
      out->shape[out->shape.rank++] = 1;
    }
  }
  return Status::Ok();
}

double ReduceMeanFlops(const Params&, const Shape* in, const Shape*) {
  return static_cast<double>(in[0].NumElements());
}

}  // namespace

OpSpec ReduceMeanSpec() {
  OpSpec op;
  op.kind = OpKind::kReduceMean;
  op.name = "reduce_mean";
  op.summary = "mean of x over the axes in bit mask 'axes' (12 = axes 2 and 3), keepdims 1 or 0";
  op.num_inputs = 1;
  ParamDesc axes = IntParam("axes", kReduceMeanAxes, {12, 1, 2});
  ParamDesc keep = IntParam("keepdims", kReduceMeanKeepdims, {1, 0});
  keep.min_value = 0;
  op.params = {axes, keep};
  op.shape_rule = ReduceMeanShape;
  op.flops = ReduceMeanFlops;
  // A second mean over the same (now size-1) axes changes nothing; linear; a transpose maps its
  // axes (NHWC's spatial axes are 1 and 2: mask 6); a concat along an axis that is kept stacks
  // independent means.
  op.axioms = R"(
reduce_mean_again (x) (reduce_mean[keepdims=?k] (reduce_mean[keepdims=1] x)) = (reduce_mean[keepdims=?k] x)
reduce_mean_ewadd (x y) (reduce_mean (ewadd x y)) = (ewadd (reduce_mean x) (reduce_mean y))
reduce_mean_smul (x s:0) (reduce_mean (smul x s)) = (smul (reduce_mean x) s)
reduce_mean_transpose_nhwc (x:4) (reduce_mean[axes=6,keepdims=1] (transpose[perm=[0,2,3,1]] x)) = (transpose[perm=[0,2,3,1]] (reduce_mean[axes=12,keepdims=1] x))
reduce_mean_transpose (x:2) (reduce_mean[axes=1,keepdims=0] (transpose[perm=[1,0]] x)) = (reduce_mean[axes=2,keepdims=0] x)
reduce_mean_concat_batch (x y) (concat[axis=0] (reduce_mean[axes=12] x) (reduce_mean[axes=12] y)) = (reduce_mean[axes=12] (concat[axis=0] x y))
reduce_mean_concat_channels (x:4 y:4) (concat[axis=1] (reduce_mean[axes=12] x) (reduce_mean[axes=12] y)) = (reduce_mean[axes=12] (concat[axis=1] x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
