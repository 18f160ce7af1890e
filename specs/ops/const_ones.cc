// const_ones: parameters, shape rule and axioms.
#include "specs/ops/const_ones.h"

namespace verisub::specs::ops {
namespace {

Status ConstOnesShape(const Params&, const TensorType* const* in, TensorType* out) {
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(*in[0], 0));
  out[0] = TensorType(in[0]->shape);
  return Status::Ok();
}

}  // namespace

OpSpec ConstOnesSpec() {
  OpSpec op;
  op.kind = OpKind::kConstOnes;
  op.name = "const_ones";
  op.summary = "ones with the shape of the input (ewmul identity)";
  op.num_inputs = 1;
  op.is_constant = true;
  op.shape_rule = ConstOnesShape;
  op.axioms = R"(
ewmul_identity (x) (ewmul x (const_ones x)) = x
ewmul_identity_any_ref (x y) (ewmul x (const_ones y)) = x
)";
  return op;
}

}  // namespace verisub::specs::ops
