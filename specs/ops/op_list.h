// The operator set, in OpKind order: the one registration point of an operator.
//
// Adding an operator `foo` is its own files — specs/ops/foo.{h,cc} (FooSpec(), FooKernel<S>: the
// parameters, shape rule, reference kernel and axioms) and runtime/onnx_ops/foo.cc (RegisterFoo:
// its ONNX import and export) — plus one line here. The OpKind enum, the registry, the kernel
// dispatch and the ONNX tables follow from this list; a missing function is a compile or link
// error naming it. Append new operators at the end: an OpKind's number is part of the
// generator's graph codes.
#pragma once

// X(Name, file): OpKind::kName, ops::NameSpec(), ops::NameKernel<S>, runtime RegisterName().
#define VERISUB_FOR_EACH_OP(X)   \
  X(Conv2d, conv2d)              \
  X(Matmul, matmul)              \
  X(EwAdd, ewadd)                \
  X(EwMul, ewmul)                \
  X(Smul, smul)                  \
  X(Relu, relu)                  \
  X(Sigmoid, sigmoid)            \
  X(Tanh, tanh)                  \
  X(Transpose, transpose)        \
  X(Concat, concat)              \
  X(Split, split)                \
  X(PoolMax, pool_max)           \
  X(PoolAvg, pool_avg)           \
  X(Enlarge, enlarge)            \
  X(Reshape, reshape)            \
  X(Batchnorm, batchnorm)        \
  X(BiasAdd, bias_add)           \
  X(ConstOnes, const_ones)       \
  X(ConstIMatmul, const_imatmul) \
  X(ConstIConv, const_iconv)     \
  X(ConstPool, const_pool)       \
  X(EwSub, ewsub)                \
  X(Relu6, relu6)                \
  X(HardSigmoid, hard_sigmoid)   \
  X(HardSwish, hard_swish)       \
  X(Silu, silu)                  \
  X(Gelu, gelu)                  \
  X(GeluTanh, gelu_tanh)         \
  X(Exp, exp)                    \
  X(Erf, erf)                    \
  X(Conv2dBias, conv2d_bias)     \
  X(Slice, slice)                \
  X(Softmax, softmax)            \
  X(LayerNorm, layer_norm)       \
  X(ReduceMean, reduce_mean)     \
  X(ChannelScale, channel_scale) \
  X(Neg, neg)                    \
  X(Recip, recip)                \
  X(Log, log)                    \
  X(Sqrt, sqrt)                  \
  X(Abs, abs)                    \
  X(EwMax, ewmax)                \
  X(EwMin, ewmin)                \
  X(Select, select)              \
  X(ReduceSum, reduce_sum)       \
  X(ReduceMax, reduce_max)       \
  X(Broadcast, broadcast)        \
  X(Pad, pad)
