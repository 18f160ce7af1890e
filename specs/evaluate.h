// Shape inference and evaluation of one operator instance under any semantics.
#pragma once

#include "specs/ops/all_ops.h"
#include "specs/registry.h"

namespace verisub::specs {

// Output types of an operator instance, or an error that names the operator.
Status InferTypes(OpKind kind, const Params& p, const TensorType* const* in, TensorType* out);

// Runs the kernel; the outputs' types must already hold InferTypes' result.
template <class S>
void RunKernel(const S& s, OpKind kind, const Params& p, const Tensor<typename S::Elem>* const* in,
               Tensor<typename S::Elem>* out) {
  switch (kind) {
#define VERISUB_OP_KERNEL_CASE(name, file) \
  case OpKind::k##name:                    \
    return ops::name##Kernel(s, p, in, out);
    VERISUB_FOR_EACH_OP(VERISUB_OP_KERNEL_CASE)
#undef VERISUB_OP_KERNEL_CASE
    case OpKind::kNumOps:
      break;
  }
  VERISUB_CHECK(false);
}

// Shape inference followed by the kernel.
template <class S>
Status Evaluate(const S& s, OpKind kind, const Params& p, const Tensor<typename S::Elem>* const* in,
                Tensor<typename S::Elem>* out) {
  const TensorType* types[kMaxOpInputs];
  const OpSpec& op = GetOp(kind);
  for (int i = 0; i < op.num_inputs; ++i) types[i] = &in[i]->type;
  TensorType out_types[kMaxOpOutputs];
  VERISUB_RETURN_IF_ERROR(InferTypes(kind, p, types, out_types));
  for (int i = 0; i < op.num_outputs; ++i) out[i].type = std::move(out_types[i]);
  RunKernel(s, kind, p, in, out);
  return Status::Ok();
}

}  // namespace verisub::specs
