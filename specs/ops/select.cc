// select: parameters, shape rule and axioms.
#include "specs/ops/select.h"

namespace verisub::specs::ops {
namespace {

Status SelectShape(const Params&, const TensorType* const* in, TensorType* out) {
  for (int i = 0; i < 3; ++i) VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(*in[i], i));
  for (int i = 1; i < 3; ++i)
    if (in[i]->shape != in[0]->shape)
      return InvalidArgument(InputName(i) + " has shape " + in[i]->shape.ToString() +
                             ", the mask " + in[0]->shape.ToString());
  out[0] = TensorType(in[0]->shape);
  for (int d = 0; d < in[0]->shape.rank; ++d)
    out[0].trees[d] = MergeTrees(in[1]->trees[d], in[2]->trees[d]);
  return Status::Ok();
}

}  // namespace

OpSpec SelectSpec() {
  OpSpec op;
  op.kind = OpKind::kSelect;
  op.name = "select";
  op.summary = "elementwise m ? a : b for a 0/1 mask m (b + m * (a - b))";
  op.num_inputs = 3;
  op.shape_rule = SelectShape;
  op.layouts.layout_agnostic = true;
  // Three inputs: the generator enumerates it where a config has it, but data/gen/subop.cfg does
  // not (the prover left 45% of its candidates with select undecided, 2026-11-30); its rules
  // come from these axioms in proofs of larger rules, and from the fusion level's lowerings.
  op.axioms = R"(
select_same (m x) (select m x x) = x
select_neg (m x y) (neg (select m x y)) = (select m (neg x) (neg y))
select_transpose (m x y) (transpose (select m x y)) = (select (transpose m) (transpose x) (transpose y))
)";
  return op;
}

}  // namespace verisub::specs::ops
