// const_imatmul: parameters, shape rule and axioms.
#include "specs/ops/const_imatmul.h"

namespace verisub::specs::ops {
namespace {

Status ConstIMatmulShape(const Params&, const TensorType* const* in, TensorType* out) {
  VERISUB_RETURN_IF_ERROR(ExpectRankAtLeast(*in[0], 0, 1));
  int64_t n = in[0]->shape[in[0]->shape.rank - 1];
  out[0] = TensorType(Shape{n, n});
  return Status::Ok();
}

}  // namespace

OpSpec ConstIMatmulSpec() {
  OpSpec op;
  op.kind = OpKind::kConstIMatmul;
  op.name = "const_imatmul";
  op.summary = "identity matrix [n,n] where n is the input's last dimension (matmul identity)";
  op.num_inputs = 1;
  op.is_constant = true;
  op.shape_rule = ConstIMatmulShape;
  op.axioms = R"(
matmul_identity (x:2|3|4) (matmul[activation=none] x (const_imatmul x)) = x
matmul_identity_any_ref (x:2|3|4 y) (matmul[activation=none] x (const_imatmul y)) = x
)";
  return op;
}

}  // namespace verisub::specs::ops
