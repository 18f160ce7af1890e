// transpose: parameters, shape rule and axioms.
#include "specs/ops/transpose.h"

namespace verisub::specs::ops {
namespace {

Status TransposeShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(x, 0));
  std::vector<int> perm = DecodePerm(p[kTransposePerm]);
  if (static_cast<int>(perm.size()) != x.shape.rank)
    return InvalidArgument("parameter 'perm' has " + std::to_string(perm.size()) +
                           " entries but input 0 has rank " + std::to_string(x.shape.rank));
  out[0] = TensorType();
  out[0].shape.rank = x.shape.rank;
  for (int d = 0; d < x.shape.rank; ++d) {
    out[0].shape[d] = x.shape[perm[d]];
    out[0].trees[d] = x.trees[perm[d]];
  }
  return Status::Ok();
}

}  // namespace

OpSpec TransposeSpec() {
  OpSpec op;
  op.kind = OpKind::kTranspose;
  op.name = "transpose";
  op.summary = "permutes dimensions: output dimension d is input dimension perm[d]";
  op.num_inputs = 1;
  ParamDesc perm;
  perm.name = "perm";
  perm.type = ParamType::kPerm;
  perm.slot = kTransposePerm;
  perm.domain = {EncodePerm({1, 0}), EncodePerm({0, 2, 1}), EncodePerm({0, 2, 3, 1}),
                 EncodePerm({0, 3, 1, 2})};
  op.params = {perm};
  op.shape_rule = TransposeShape;
  op.axioms = R"(
transpose_involution (x:2) (transpose[perm=[1,0]] (transpose[perm=[1,0]] x)) = x
transpose_nhwc_roundtrip (x:4) (transpose[perm=[0,3,1,2]] (transpose[perm=[0,2,3,1]] x)) = x
transpose_concat (x:2 y:2) (concat[axis=0] (transpose[perm=[1,0]] x) (transpose[perm=[1,0]] y)) = (transpose[perm=[1,0]] (concat[axis=1] x y))
transpose_concat_cols (x:2 y:2) (concat[axis=1] (transpose[perm=[1,0]] x) (transpose[perm=[1,0]] y)) = (transpose[perm=[1,0]] (concat[axis=0] x y))
)";
  // transpose_concat_cols follows from transpose_concat and the involution, but only through
  // transpose(transpose(x)) terms that no trigger creates (the involution's right side is a bare
  // variable), so E-matching never proved TASO's rule in this orientation without it.
  return op;
}

}  // namespace verisub::specs::ops
