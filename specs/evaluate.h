// Shape inference and evaluation of one operator instance under any semantics.
#pragma once

#include "specs/ops/batchnorm.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/concat.h"
#include "specs/ops/const_iconv.h"
#include "specs/ops/const_imatmul.h"
#include "specs/ops/const_ones.h"
#include "specs/ops/const_pool.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/enlarge.h"
#include "specs/ops/ewadd.h"
#include "specs/ops/ewmul.h"
#include "specs/ops/matmul.h"
#include "specs/ops/pool_avg.h"
#include "specs/ops/pool_max.h"
#include "specs/ops/relu.h"
#include "specs/ops/reshape.h"
#include "specs/ops/sigmoid.h"
#include "specs/ops/smul.h"
#include "specs/ops/split.h"
#include "specs/ops/tanh.h"
#include "specs/ops/transpose.h"
#include "specs/registry.h"

namespace verisub::specs {

// Output types of an operator instance, or an error that names the operator.
Status InferTypes(OpKind kind, const Params& p, const TensorType* const* in, TensorType* out);

// Runs the kernel; the outputs' types must already hold InferTypes' result.
template <class S>
void RunKernel(const S& s, OpKind kind, const Params& p, const Tensor<typename S::Elem>* const* in,
               Tensor<typename S::Elem>* out) {
  using namespace ops;  // NOLINT
  switch (kind) {
    case OpKind::kConv2d:
      return Conv2dKernel(s, p, in, out);
    case OpKind::kMatmul:
      return MatmulKernel(s, p, in, out);
    case OpKind::kEwAdd:
      return EwAddKernel(s, p, in, out);
    case OpKind::kEwMul:
      return EwMulKernel(s, p, in, out);
    case OpKind::kSmul:
      return SmulKernel(s, p, in, out);
    case OpKind::kRelu:
      return ReluKernel(s, p, in, out);
    case OpKind::kSigmoid:
      return SigmoidKernel(s, p, in, out);
    case OpKind::kTanh:
      return TanhKernel(s, p, in, out);
    case OpKind::kTranspose:
      return TransposeKernel(s, p, in, out);
    case OpKind::kConcat:
      return ConcatKernel(s, p, in, out);
    case OpKind::kSplit:
      return SplitKernel(s, p, in, out);
    case OpKind::kPoolMax:
      return PoolMaxKernel(s, p, in, out);
    case OpKind::kPoolAvg:
      return PoolAvgKernel(s, p, in, out);
    case OpKind::kEnlarge:
      return EnlargeKernel(s, p, in, out);
    case OpKind::kReshape:
      return ReshapeKernel(s, p, in, out);
    case OpKind::kBatchnorm:
      return BatchnormKernel(s, p, in, out);
    case OpKind::kBiasAdd:
      return BiasAddKernel(s, p, in, out);
    case OpKind::kConstOnes:
      return ConstOnesKernel(s, p, in, out);
    case OpKind::kConstIMatmul:
      return ConstIMatmulKernel(s, p, in, out);
    case OpKind::kConstIConv:
      return ConstIConvKernel(s, p, in, out);
    case OpKind::kConstPool:
      return ConstPoolKernel(s, p, in, out);
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
