// smul: parameters, shape rule and axioms.
#include "specs/ops/smul.h"

namespace verisub::specs::ops {
namespace {

Status SmulShape(const Params&, const TensorType* const* in, TensorType* out) {
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(*in[0], 0));
  if (in[1]->shape.rank != 0)
    return InvalidArgument("input 1 must be a scalar (rank 0), got " + in[1]->shape.ToString());
  out[0] = *in[0];
  return Status::Ok();
}

}  // namespace

OpSpec SmulSpec() {
  OpSpec op;
  op.kind = OpKind::kSmul;
  op.name = "smul";
  op.summary = "tensor x times scalar s (rank 0)";
  op.num_inputs = 2;
  op.shape_rule = SmulShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
smul_comm (x s:0 t:0) (smul (smul x s) t) = (smul (smul x t) s)
smul_ewadd (x y s:0) (smul (ewadd x y) s) = (ewadd (smul x s) (smul y s))
smul_transpose (x s:0) (transpose (smul x s)) = (smul (transpose x) s)
smul_concat (x y s:0) (concat (smul x s) (smul y s)) = (smul (concat x y) s)
smul_scalar_ewmul (x s:0 t:0) (smul (smul x s) t) = (smul x (ewmul s t))
smul_scalar_ewadd (x s:0 t:0) (smul x (ewadd s t)) = (ewadd (smul x s) (smul x t))
)";
  return op;
}

}  // namespace verisub::specs::ops
