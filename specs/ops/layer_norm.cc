// layer_norm: parameters, shape rule and axioms.
#include "specs/ops/layer_norm.h"

namespace verisub::specs::ops {
namespace {

// Scale and bias have exactly the trailing shape x[axis:]; the normalised axes mix their
// elements, so they lose their concat history, the leading ones keep it.
Status LayerNormShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectRankAtLeast(x, 0, 1));
  const int64_t axis = p[kLayerNormAxis];
  if (axis >= x.shape.rank)
    return InvalidArgument("parameter 'axis'=" + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(x.shape.rank));
  Shape trailing;
  trailing.rank = x.shape.rank - static_cast<int>(axis);
  for (int d = 0; d < trailing.rank; ++d) trailing[d] = x.shape[static_cast<int>(axis) + d];
  for (int i = 1; i <= 2; ++i)
    if (in[i]->shape != trailing)
      return InvalidArgument(InputName(i) + " " + in[i]->shape.ToString() + " must have shape " +
                             trailing.ToString() + ", the axes of input 0 from 'axis'=" +
                             std::to_string(axis));
  if (DecodeFloat(p[kLayerNormEpsilon]) <= 0)
    return InvalidArgument("parameter 'epsilon' must be positive");
  out[0] = x;
  for (int d = static_cast<int>(axis); d < x.shape.rank; ++d) out[0].trees[d] = nullptr;
  return Status::Ok();
}

// Per element: the mean, the centring, the square, the scale and the affine map.
double LayerNormFlops(const Params&, const Shape*, const Shape* out) {
  return 6.0 * static_cast<double>(out[0].NumElements());
}

}  // namespace

OpSpec LayerNormSpec() {
  OpSpec op;
  op.kind = OpKind::kLayerNorm;
  op.name = "layer_norm";
  op.summary = "layer normalization over axes [axis, rank): inputs x, scale, bias x.shape[axis:]";
  op.num_inputs = 3;
  ParamDesc axis = AxisParam(kLayerNormAxis);
  axis.domain = {1, 2, 3};
  ParamDesc eps;
  eps.name = "epsilon";
  eps.type = ParamType::kFloat;
  eps.slot = kLayerNormEpsilon;
  eps.domain = {EncodeFloat(1e-5)};
  op.params = {axis, eps};
  op.shape_rule = LayerNormShape;
  op.flops = LayerNormFlops;
  // Rows are normalised one by one: stacking rows along an axis before the normalised ones
  // commutes with it, at any rank (no rank guard: the parameters' shape follows x's).
  op.axioms = R"(
layer_norm_concat_batch (x y s b) (concat[axis=0] (layer_norm[axis=2] x s b) (layer_norm[axis=2] y s b)) = (layer_norm[axis=2] (concat[axis=0] x y) s b)
layer_norm_concat_rows (x y s b) (concat[axis=1] (layer_norm[axis=2] x s b) (layer_norm[axis=2] y s b)) = (layer_norm[axis=2] (concat[axis=1] x y) s b)
)";
  return op;
}

}  // namespace verisub::specs::ops
