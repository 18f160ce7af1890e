// Shape rules shared by the elementwise operators.
#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

Status SameShapeBinary(const Params&, const TensorType* const* in, TensorType* out) {
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(*in[0], 0));
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(*in[1], 1));
  if (in[0]->shape != in[1]->shape)
    return InvalidArgument("inputs have different shapes " + in[0]->shape.ToString() + " and " +
                           in[1]->shape.ToString());
  out[0] = TensorType(in[0]->shape);
  for (int d = 0; d < in[0]->shape.rank; ++d)
    out[0].trees[d] = MergeTrees(in[0]->trees[d], in[1]->trees[d]);
  return Status::Ok();
}

Status UnaryShape(const Params&, const TensorType* const* in, TensorType* out) {
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(*in[0], 0));
  out[0] = *in[0];
  return Status::Ok();
}

std::optional<Activation> UnaryActivation(OpKind op) {
  switch (op) {
    case OpKind::kRelu:
      return Activation::kRelu;
    case OpKind::kSigmoid:
      return Activation::kSigmoid;
    case OpKind::kTanh:
      return Activation::kTanh;
    case OpKind::kRelu6:
      return Activation::kRelu6;
    case OpKind::kHardSigmoid:
      return Activation::kHardSigmoid;
    case OpKind::kHardSwish:
      return Activation::kHardSwish;
    case OpKind::kSilu:
      return Activation::kSilu;
    case OpKind::kGelu:
      return Activation::kGelu;
    case OpKind::kGeluTanh:
      return Activation::kGeluTanh;
    case OpKind::kExp:
      return Activation::kExp;
    case OpKind::kErf:
      return Activation::kErf;
    case OpKind::kLog:
      return Activation::kLog;
    case OpKind::kSqrt:
      return Activation::kSqrt;
    case OpKind::kRecip:
      return Activation::kRecip;
    default:
      return std::nullopt;
  }
}

}  // namespace verisub::specs::ops
