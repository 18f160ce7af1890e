// Shape inference entry point.
#include "specs/evaluate.h"

namespace verisub::specs {

Status InferTypes(OpKind kind, const Params& p, const TensorType* const* in, TensorType* out) {
  const OpSpec& op = GetOp(kind);
  for (const ParamDesc& d : op.params) {
    Status st = CheckParamValue(d, p);
    if (!st.ok()) return st.WithContext(op.name);
  }
  Status st = op.shape_rule(p, in, out);
  if (!st.ok()) return st.WithContext(op.name);
  return Status::Ok();
}

}  // namespace verisub::specs
