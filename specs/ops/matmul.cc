// matmul: parameters, shape rule and axioms.
#include "specs/ops/matmul.h"

namespace verisub::specs::ops {
namespace {

Status MatmulShape(const Params&, const TensorType* const* in, TensorType* out) {
  const TensorType& a = *in[0];
  const TensorType& b = *in[1];
  VERISUB_RETURN_IF_ERROR(ExpectRankAtLeast(a, 0, 2));
  VERISUB_RETURN_IF_ERROR(ExpectRankAtLeast(b, 1, 2));
  int ra = a.shape.rank, rb = b.shape.rank;
  if (a.shape[ra - 1] != b.shape[rb - 2])
    return InvalidArgument("inner dimensions differ: " + a.shape.ToString() + " x " +
                           b.shape.ToString());
  TensorType ba, bb, batch;
  ba.shape.rank = ra - 2;
  for (int i = 0; i < ra - 2; ++i) ba.shape[i] = a.shape[i], ba.trees[i] = a.trees[i];
  bb.shape.rank = rb - 2;
  for (int i = 0; i < rb - 2; ++i) bb.shape[i] = b.shape[i], bb.trees[i] = b.trees[i];
  Status st = BroadcastTypes(ba, bb, &batch);
  if (!st.ok()) return InvalidArgument("batch dimensions: " + st.message());
  TensorType& y = out[0];
  y = batch;
  y.shape.rank = batch.shape.rank + 2;
  y.shape[y.shape.rank - 2] = a.shape[ra - 2];
  y.shape[y.shape.rank - 1] = b.shape[rb - 1];
  y.trees[y.shape.rank - 2] = a.trees[ra - 2];
  y.trees[y.shape.rank - 1] = b.trees[rb - 1];
  return Status::Ok();
}

double MatmulFlops(const Params&, const Shape* in, const Shape* out) {
  return 2.0 * static_cast<double>(out[0].NumElements()) * in[0][in[0].rank - 1];
}

}  // namespace

OpSpec MatmulSpec() {
  OpSpec op;
  op.kind = OpKind::kMatmul;
  op.name = "matmul";
  op.summary = "matrix product a [...,M,K] x b [...,K,N] with broadcast batch dimensions";
  op.num_inputs = 2;
  op.params = {ActivationParam(kMatmulActivation)};
  op.shape_rule = MatmulShape;
  op.flops = MatmulFlops;
  op.layouts.layouts = {Layout::kPlain, Layout::kColMajor};
  // Ranks 2|3|4: batched matmuls (broadcast batch dimensions) obey these too. The concat axioms
  // are 2-D only: a batched matmul's rows and columns are its last two axes, not axes 0 and 1.
  op.axioms = R"(
matmul_relu_fusion (x:2|3|4 y:2|3|4) (matmul[activation=relu] x y) = (relu (matmul[activation=none] x y))
matmul_sigmoid_fusion (x:2|3|4 y:2|3|4) (matmul[activation=sigmoid] x y) = (sigmoid (matmul[activation=none] x y))
matmul_tanh_fusion (x:2|3|4 y:2|3|4) (matmul[activation=tanh] x y) = (tanh (matmul[activation=none] x y))
matmul_assoc (x:2|3|4 y:2|3|4 z:2|3|4) (matmul[activation=none] x (matmul[activation=none] y z)) = (matmul[activation=none] (matmul[activation=none] x y) z)
matmul_linear_left (x:2|3|4 y:2|3|4 z:2|3|4) (matmul[activation=none] (ewadd x y) z) = (ewadd (matmul[activation=none] x z) (matmul[activation=none] y z))
matmul_linear_right (x:2|3|4 y:2|3|4 z:2|3|4) (matmul[activation=none] x (ewadd y z)) = (ewadd (matmul[activation=none] x y) (matmul[activation=none] x z))
matmul_smul_left (x:2|3|4 y:2|3|4 s:0) (matmul[activation=none] (smul x s) y) = (smul (matmul[activation=none] x y) s)
matmul_smul_right (x:2|3|4 y:2|3|4 s:0) (matmul[activation=none] x (smul y s)) = (smul (matmul[activation=none] x y) s)
matmul_transpose (x:2 y:2) (transpose[perm=[1,0]] (matmul[activation=none] x y)) = (matmul[activation=none] (transpose[perm=[1,0]] y) (transpose[perm=[1,0]] x))
matmul_concat_rows (x:2 y:2 z:2) (concat[axis=0] (matmul x z) (matmul y z)) = (matmul (concat[axis=0] x y) z)
matmul_concat_cols (x:2 y:2 z:2) (concat[axis=1] (matmul x y) (matmul x z)) = (matmul x (concat[axis=1] y z))
matmul_concat_inner (x:2 y:2 z:2 w:2) (matmul[activation=none] (concat[axis=1] x y) (concat[axis=0] z w)) = (ewadd (matmul[activation=none] x z) (matmul[activation=none] y w))
)";
  return op;
}

}  // namespace verisub::specs::ops
