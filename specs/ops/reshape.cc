// reshape: parameters, shape rule and axioms.
#include "specs/ops/reshape.h"

namespace verisub::specs::ops {
namespace {

// The concat history does not survive a reshape: every output tree is a leaf.
Status ReshapeShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(x, 0));
  int rank = static_cast<int>(p[kReshapeShape]);
  Shape s;
  s.rank = rank;
  int infer = -1;
  int64_t known = 1;
  for (int d = 0; d < rank; ++d) {
    int64_t v = p[kReshapeShape + 1 + d];
    if (v == -1) {
      if (infer >= 0) return InvalidArgument("parameter 'shape' has more than one -1");
      infer = d;
    } else if (v < 1) {
      return InvalidArgument("parameter 'shape' has a non-positive dimension " + std::to_string(v));
    } else {
      known *= v;
    }
    s[d] = v;
  }
  int64_t n = x.shape.NumElements();
  if (infer >= 0) {
    if (n % known != 0)
      return InvalidArgument("cannot infer -1: " + std::to_string(n) +
                             " elements are not divisible by " + std::to_string(known));
    s[infer] = n / known;
    known *= s[infer];
  }
  if (known != n)
    return InvalidArgument("input 0 " + x.shape.ToString() + " has " + std::to_string(n) +
                           " elements, target shape has " + std::to_string(known));
  out[0] = TensorType(s);
  return Status::Ok();
}

}  // namespace

OpSpec ReshapeSpec() {
  OpSpec op;
  op.kind = OpKind::kReshape;
  op.name = "reshape";
  op.summary = "same elements in row-major order with a new shape (one dimension may be -1)";
  op.num_inputs = 1;
  ParamDesc shape;
  shape.name = "shape";
  shape.type = ParamType::kShape;
  shape.slot = kReshapeShape;
  op.params = {shape};  // no generator domain: target shapes come from the config or the model
  op.shape_rule = ReshapeShape;
  op.free_at_inference = true;
  // No axioms yet: a reshape's target shape has no finite domain to validate axioms over.
  return op;
}

}  // namespace verisub::specs::ops
