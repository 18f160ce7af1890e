// bias_add: parameters, shape rule and axioms.
#include "specs/ops/bias_add.h"

namespace verisub::specs::ops {
namespace {

Status BiasAddShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  const TensorType& b = *in[1];
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(x, 0));
  VERISUB_RETURN_IF_ERROR(ExpectRank(b, 1, 1));
  int axis = static_cast<int>(p[kBiasAxis]);
  if (axis >= x.shape.rank)
    return InvalidArgument("parameter 'axis'=" + std::to_string(axis) +
                           " is out of range for input 0 " + x.shape.ToString());
  if (b.shape[0] != x.shape[axis])
    return InvalidArgument("bias " + b.shape.ToString() + " does not match dimension " +
                           std::to_string(axis) + " of input 0 " + x.shape.ToString());
  out[0] = x;
  out[0].trees[axis] = MergeTrees(x.trees[axis], b.trees[0]);
  return Status::Ok();
}

}  // namespace

OpSpec BiasAddSpec() {
  OpSpec op;
  op.kind = OpKind::kBiasAdd;
  op.name = "bias_add";
  op.summary = "x plus a vector b broadcast along dimension axis (conv: 1, matmul: last)";
  op.num_inputs = 2;
  op.params = {AxisParam(kBiasAxis)};
  op.params[0].domain = {1};
  op.shape_rule = BiasAddShape;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  op.axioms = R"(
bias_concat_batch (x y b:1) (concat[axis=0] (bias_add[axis=?k] x b) (bias_add[axis=?k] y b)) = (bias_add[axis=?k] (concat[axis=0] x y) b)
bias_concat_along_axis (x y b:1 c:1) (concat[axis=?k] (bias_add[axis=?k] x b) (bias_add[axis=?k] y c)) = (bias_add[axis=?k] (concat[axis=?k] x y) (concat[axis=0] b c))
bias_bias (x b:1 c:1) (bias_add[axis=?k] (bias_add[axis=?k] x b) c) = (bias_add[axis=?k] x (ewadd b c))
bias_smul (x b:1 s:0) (smul (bias_add x b) s) = (bias_add (smul x s) (smul b s))
)";
  return op;
}

}  // namespace verisub::specs::ops
