// Reference kernels in double against hand-computed results.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/specs/test_util.h"

namespace verisub::specs {
namespace {

using testing::ExpectData;
using testing::MakeTensor;
using testing::Out;
using testing::RunOp;

// A tensor of shape `s` holding start, start + 1, ... in row-major order.
Tensor<double> Iota(Shape s, double start = 1) {
  std::vector<double> d(s.NumElements());
  for (size_t i = 0; i < d.size(); ++i) d[i] = start + static_cast<double>(i);
  return MakeTensor(s, d);
}

TEST(KernelsTest, Conv2dPaddingAndStride) {
  Tensor<double> x = Iota({1, 1, 3, 3});
  Tensor<double> ones = MakeTensor({1, 1, 3, 3}, std::vector<double>(9, 1.0));
  ExpectData(Out("conv2d[padding=same]", {x, ones}), {1, 1, 3, 3},
             {12, 21, 16, 27, 45, 33, 24, 39, 28});
  ExpectData(Out("conv2d[padding=same,stride_h=2,stride_w=2]", {x, ones}), {1, 1, 2, 2},
             {12, 16, 24, 28});
  ExpectData(Out("conv2d[padding=same,stride_h=2,stride_w=1]", {x, ones}), {1, 1, 2, 3},
             {12, 21, 16, 24, 39, 28});
  ExpectData(Out("conv2d[padding=valid]", {x, ones}), {1, 1, 1, 1}, {45});
}

TEST(KernelsTest, Conv2dBiasAddsPerChannelThenActivates) {
  Tensor<double> x = MakeTensor({1, 2, 1, 1}, {2, 3});
  Tensor<double> w = MakeTensor({2, 2, 1, 1}, {1, 1, 1, -1});
  ExpectData(Out("conv2d_bias[group=1]", {x, w, MakeTensor({2}, {10, 0.5})}), {1, 2, 1, 1},
             {15, -0.5});
  ExpectData(Out("conv2d_bias[group=1,activation=relu]", {x, w, MakeTensor({2}, {10, 0.5})}),
             {1, 2, 1, 1}, {15, 0});
}

TEST(KernelsTest, Conv2dRectangularKernel) {
  Tensor<double> x = Iota({1, 1, 1, 3});
  Tensor<double> w = MakeTensor({1, 1, 1, 3}, {1, 0, -1});
  ExpectData(Out("conv2d[padding=same]", {x, w}), {1, 1, 1, 3}, {-2, -2, 2});
  ExpectData(Out("conv2d[padding=valid]", {x, w}), {1, 1, 1, 1}, {-2});
}

TEST(KernelsTest, Conv2dGroupsAndChannels) {
  Tensor<double> x = MakeTensor({1, 2, 1, 1}, {2, 3});
  ExpectData(Out("conv2d[group=2]", {x, MakeTensor({2, 1, 1, 1}, {10, 100})}), {1, 2, 1, 1},
             {20, 300});
  ExpectData(Out("conv2d[group=dw]", {x, MakeTensor({4, 1, 1, 1}, {1, 2, 3, 4})}), {1, 4, 1, 1},
             {2, 4, 9, 12});
  ExpectData(Out("conv2d[group=1]", {x, MakeTensor({2, 2, 1, 1}, {1, 1, 1, -1})}), {1, 2, 1, 1},
             {5, -1});
  // Batch of two: each image convolved separately.
  Tensor<double> xb = MakeTensor({2, 1, 1, 1}, {3, -4});
  ExpectData(Out("conv2d", {xb, MakeTensor({1, 1, 1, 1}, {2})}), {2, 1, 1, 1}, {6, -8});
}

TEST(KernelsTest, Conv2dActivations) {
  Tensor<double> x = MakeTensor({1, 1, 1, 2}, {1, -2});
  Tensor<double> w = MakeTensor({1, 1, 1, 1}, {1});
  ExpectData(Out("conv2d[activation=relu]", {x, w}), {1, 1, 1, 2}, {1, 0});
  ExpectData(Out("conv2d[activation=sigmoid]", {x, w}), {1, 1, 1, 2},
             {1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(2.0))});
  ExpectData(Out("conv2d[activation=tanh]", {x, w}), {1, 1, 1, 2},
             {std::tanh(1.0), std::tanh(-2.0)});
}

TEST(KernelsTest, Matmul) {
  Tensor<double> a = MakeTensor({2, 2}, {1, 2, 3, 4});
  Tensor<double> b = MakeTensor({2, 2}, {5, 6, 7, 8});
  ExpectData(Out("matmul", {a, b}), {2, 2}, {19, 22, 43, 50});
  Tensor<double> neg = MakeTensor({2, 2}, {-1, 0, 0, 1});
  ExpectData(Out("matmul[activation=relu]", {a, neg}), {2, 2}, {0, 2, 0, 4});
  // Batched with a broadcast right operand: [2,1,2] x [2,2].
  Tensor<double> batch = MakeTensor({2, 1, 2}, {1, 1, 0, 1});
  ExpectData(Out("matmul", {batch, b}), {2, 1, 2}, {12, 14, 7, 8});
  ExpectData(Out("matmul", {MakeTensor({1, 3}, {1, 2, 3}), MakeTensor({3, 1}, {4, 5, 6})}), {1, 1},
             {32});
}

TEST(KernelsTest, Elementwise) {
  Tensor<double> a = MakeTensor({3}, {1, -2, 3});
  Tensor<double> b = MakeTensor({3}, {4, 5, -6});
  ExpectData(Out("ewadd", {a, b}), {3}, {5, 3, -3});
  ExpectData(Out("ewmul", {a, b}), {3}, {4, -10, -18});
  ExpectData(Out("ewsub", {a, b}), {3}, {-3, -7, 9});
  ExpectData(Out("smul", {a, MakeTensor(Shape{}, {-2})}), {3}, {-2, 4, -6});
  ExpectData(Out("relu", {a}), {3}, {1, 0, 3});
  ExpectData(Out("sigmoid", {MakeTensor({1}, {0})}), {1}, {0.5});
  ExpectData(Out("tanh", {MakeTensor({1}, {0.5})}), {1}, {std::tanh(0.5)});
  Tensor<double> v = MakeTensor({4}, {-4, -1, 2, 7});
  ExpectData(Out("relu6", {v}), {4}, {0, 0, 2, 6});
  ExpectData(Out("hard_sigmoid", {v}), {4}, {0, 1.0 / 3, 5.0 / 6, 1});
  ExpectData(Out("hard_swish", {v}), {4}, {0, -1.0 / 3, 10.0 / 6, 7});
  ExpectData(Out("silu", {MakeTensor({1}, {1})}), {1}, {1 / (1 + std::exp(-1.0))});
  ExpectData(Out("gelu", {MakeTensor({1}, {1})}), {1}, {0.5 * (1 + std::erf(1 / std::sqrt(2.0)))});
  ExpectData(Out("exp", {MakeTensor({1}, {1})}), {1}, {std::exp(1.0)});
  ExpectData(Out("erf", {MakeTensor({1}, {0.5})}), {1}, {std::erf(0.5)});
  ExpectData(Out("bias_add[axis=1]", {Iota({2, 2, 1}), MakeTensor({2}, {10, 20})}), {2, 2, 1},
             {11, 22, 13, 24});
  // channel_scale along image channels, a kernel's output channels and a matrix's columns.
  ExpectData(Out("channel_scale[axis=1]", {Iota({2, 2, 1}), MakeTensor({2}, {10, -1})}), {2, 2, 1},
             {10, -2, 30, -4});
  ExpectData(Out("channel_scale[axis=0]", {Iota({2, 1, 2}), MakeTensor({2}, {2, 0.5})}), {2, 1, 2},
             {2, 4, 1.5, 2});
  ExpectData(Out("channel_scale[axis=1]", {Iota({2, 3}), MakeTensor({3}, {1, 2, 3})}), {2, 3},
             {1, 4, 9, 4, 10, 18});
}

TEST(KernelsTest, TransposePermutations) {
  ExpectData(Out("transpose[perm=[1,0]]", {Iota({2, 3})}), {3, 2}, {1, 4, 2, 5, 3, 6});
  // NCHW [1,2,1,2] -> NHWC [1,1,2,2]: element (c, w) moves to (w, c).
  ExpectData(Out("transpose[perm=[0,2,3,1]]", {Iota({1, 2, 1, 2})}), {1, 1, 2, 2}, {1, 3, 2, 4});
  ExpectData(Out("transpose[perm=[0,2,1]]", {Iota({1, 2, 3})}), {1, 3, 2}, {1, 4, 2, 5, 3, 6});
}

TEST(KernelsTest, ConcatBothAxesAndSplitUndoesIt) {
  Tensor<double> a = Iota({2, 2});
  Tensor<double> b = Iota({2, 1}, 10);
  Tensor<double> c1 = Out("concat[axis=1]", {a, b});
  ExpectData(c1, {2, 3}, {1, 2, 10, 3, 4, 11});
  ExpectData(Out("split[axis=1]", {c1}, 0), {2, 2}, {1, 2, 3, 4});
  ExpectData(Out("split[axis=1]", {c1}, 1), {2, 1}, {10, 11});
  Tensor<double> c0 = Out("concat[axis=0]", {a, Iota({1, 2}, 20)});
  ExpectData(c0, {3, 2}, {1, 2, 3, 4, 20, 21});
  ExpectData(Out("split[axis=0]", {c0}, 1), {1, 2}, {20, 21});
  // Nested concats: a split undoes the most recent one, the next split the one before.
  Tensor<double> nested = Out("concat[axis=0]", {c0, Iota({1, 2}, 30)});
  Tensor<double> first = Out("split[axis=0]", {nested}, 0);
  ExpectData(first, {3, 2}, {1, 2, 3, 4, 20, 21});
  ExpectData(Out("split[axis=0]", {first}, 0), {2, 2}, {1, 2, 3, 4});
}

TEST(KernelsTest, Pools) {
  Tensor<double> x = Iota({1, 1, 3, 3});
  ExpectData(Out("pool_max[padding=same,stride_h=1,stride_w=1]", {x}), {1, 1, 3, 3},
             {5, 6, 6, 8, 9, 9, 8, 9, 9});
  ExpectData(Out("pool_avg[padding=same,stride_h=1,stride_w=1]", {x}), {1, 1, 3, 3},
             {12 / 9.0, 21 / 9.0, 16 / 9.0, 27 / 9.0, 5, 33 / 9.0, 24 / 9.0, 39 / 9.0, 28 / 9.0});
  ExpectData(Out("pool_avg[padding=valid,stride_h=1,stride_w=1]", {x}), {1, 1, 1, 1}, {5});
  ExpectData(Out("pool_max[padding=same,stride_h=2,stride_w=2]", {x}), {1, 1, 2, 2}, {5, 6, 8, 9});
  Tensor<double> neg = MakeTensor({1, 1, 1, 3}, {-1, -5, 2});
  ExpectData(Out("pool_max[padding=same,kernel_h=1,stride_h=1,stride_w=1,activation=relu]", {neg}),
             {1, 1, 1, 3}, {0, 2, 2});
}

TEST(KernelsTest, EnlargeReshapeBatchnorm) {
  ExpectData(Out("enlarge", {MakeTensor({1, 1, 1, 3}, {1, 2, 3})}), {1, 1, 3, 3},
             {0, 0, 0, 1, 2, 3, 0, 0, 0});
  ExpectData(Out("enlarge", {MakeTensor({1, 1, 1, 1}, {7})}), {1, 1, 3, 3},
             {0, 0, 0, 0, 7, 0, 0, 0, 0});
  ExpectData(Out("reshape[shape=[3,-1]]", {Iota({2, 3})}), {3, 2}, {1, 2, 3, 4, 5, 6});
  // y = (x - mean) / sqrt(var + eps) * scale + bias, per channel.
  Tensor<double> x = MakeTensor({1, 2, 1, 1}, {1, 2});
  ExpectData(Out("batchnorm[epsilon=1]", {x, MakeTensor({2}, {2, 3}), MakeTensor({2}, {1, 1}),
                                          MakeTensor({2}, {0, 1}), MakeTensor({2}, {3, 0})}),
             {1, 2, 1, 1}, {2, 4});
}

TEST(KernelsTest, Constants) {
  Tensor<double> x = Iota({1, 2, 3, 3});
  ExpectData(Out("const_ones", {Iota({2})}), {2}, {1, 1});
  ExpectData(Out("const_imatmul", {Iota({4, 2})}), {2, 2}, {1, 0, 0, 1});
  Tensor<double> iconv = Out("const_iconv", {x});
  EXPECT_EQ(iconv.shape(), (Shape{2, 2, 3, 3}));
  ExpectData(Out("conv2d[padding=same,group=1]", {x, iconv}), x.shape(), x.data);
  ExpectData(Out("const_pool[kernel_h=1]", {x}), {2, 1, 1, 3}, std::vector<double>(6, 1 / 3.0));
}

}  // namespace
}  // namespace verisub::specs
