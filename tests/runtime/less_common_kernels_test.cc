// Reference kernels of operators real exports write now and then: Unique, ReverseSequence,
// MaxPool's Indices output with MaxUnpool, MaxRoiPool and Det, against the examples of ONNX's
// operator documentation and values worked out by hand, and their errors on operands they cannot
// take.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "onnx/onnx_pb.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

// An output's element type and rank (its dims left symbolic).
struct Out {
  int32_t type;
  int rank;
};

// One node with an output for each of `outs`, run as imported.
StatusOr<std::vector<HostTensor>> RunNode(const std::string& op,
                                          const std::vector<std::pair<std::string, HostTensor>>& in,
                                          const std::vector<Out>& outs,
                                          const std::function<void(onnx::NodeProto&)>& attrs = {}) {
  std::vector<testing::NodeOutput> declared;
  for (const Out& o : outs) declared.push_back({std::vector<int64_t>(o.rank, -1), o.type});
  return testing::RunOneNode(op, in, declared, attrs, 17);
}

HostTensor Ints(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return HostTensor::FromInts(kInt64, std::move(dims), v);
}
HostTensor Floats(std::vector<int64_t> dims, std::vector<double> v) {
  return HostTensor::FromDoubles(kFloat, std::move(dims), v);
}
std::vector<int64_t> Dims(std::initializer_list<int64_t> d) { return d; }

TEST(LessCommonKernelsTest, UniqueOfTheFlattenedInputSortedOrInFirstOccurrence) {
  const HostTensor x = Floats({6}, {2, 1, 1, 3, 4, 3});
  const std::vector<Out> types = {{kFloat, 1}, {kInt64, 1}, {kInt64, 1}, {kInt64, 1}};
  auto sorted = RunNode("Unique", {{"x", x}}, types);
  ASSERT_TRUE(sorted.ok()) << sorted.status().message();
  EXPECT_EQ((*sorted)[0].ToDoubles(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ((*sorted)[1].ToInts(), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ((*sorted)[2].ToInts(), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ((*sorted)[3].ToInts(), (std::vector<int64_t>{2, 1, 2, 1}));
  // ONNX's example "unique_not_sorted_without_axis".
  auto first = RunNode("Unique", {{"x", x}}, types,
                       [](onnx::NodeProto& n) { testing::SetInt(n, "sorted", 0); });
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ((*first)[0].ToDoubles(), (std::vector<double>{2, 1, 3, 4}));
  EXPECT_EQ((*first)[1].ToInts(), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ((*first)[2].ToInts(), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ((*first)[3].ToInts(), (std::vector<int64_t>{1, 2, 2, 1}));
  // A 2-D input flattens; NaNs are one value, after every number; one output is enough.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto nans = RunNode("Unique", {{"x", Floats({2, 2}, {nan, 1, nan, -1})}}, {{kFloat, 1}});
  ASSERT_TRUE(nans.ok()) << nans.status().message();
  const std::vector<double> y = (*nans)[0].ToDoubles();
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], -1);
  EXPECT_EQ(y[1], 1);
  EXPECT_TRUE(std::isnan(y[2]));
  // Unsigned 64-bit integers order as unsigned.
  auto big =
      RunNode("Unique", {{"x", HostTensor::FromInts(kUint64, {2}, {-1, 1})}}, {{kUint64, 1}});
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_EQ((*big)[0].ints, (std::vector<int64_t>{1, -1}));
}

TEST(LessCommonKernelsTest, UniqueSlicesAlongAnAxis) {
  const std::vector<Out> types2 = {{kFloat, 2}, {kInt64, 1}, {kInt64, 1}, {kInt64, 1}};
  // ONNX's "unique_sorted_with_axis".
  auto rows = RunNode("Unique", {{"x", Floats({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4})}}, types2,
                      [](onnx::NodeProto& n) { testing::SetInt(n, "axis", 0); });
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ((*rows)[0].dims, Dims({2, 3}));
  EXPECT_EQ((*rows)[0].ToDoubles(), (std::vector<double>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ((*rows)[1].ToInts(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ((*rows)[2].ToInts(), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ((*rows)[3].ToInts(), (std::vector<int64_t>{2, 1}));
  // ONNX's "unique_sorted_with_axis_3d": slices [2, 2] along the middle axis.
  const HostTensor x3 = Floats({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
  auto mid = RunNode("Unique", {{"x", x3}}, {{kFloat, 3}, {kInt64, 1}, {kInt64, 1}, {kInt64, 1}},
                     [](onnx::NodeProto& n) { testing::SetInt(n, "axis", -2); });
  ASSERT_TRUE(mid.ok()) << mid.status().message();
  EXPECT_EQ((*mid)[0].dims, Dims({2, 3, 2}));
  EXPECT_EQ((*mid)[0].ToDoubles(), (std::vector<double>{0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1}));
  EXPECT_EQ((*mid)[1].ToInts(), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ((*mid)[2].ToInts(), (std::vector<int64_t>{1, 0, 2, 0}));
  EXPECT_EQ((*mid)[3].ToInts(), (std::vector<int64_t>{2, 1, 1}));
  EXPECT_FALSE(RunNode("Unique", {{"x", x3}}, {{kFloat, 3}}, [](onnx::NodeProto& n) {
                 testing::SetInt(n, "axis", 3);
               }).ok());
}

TEST(LessCommonKernelsTest, ReverseSequenceReversesTheLeadingStepsOfEachEntry) {
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[i] = i;
  // ONNX's "reversesequence_time": time on axis 0, batch on axis 1.
  auto time =
      RunNode("ReverseSequence",
              {{"x", Floats({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15})},
               {"lens", Ints({4}, {4, 3, 2, 1})}},
              {{kFloat, 2}});
  ASSERT_TRUE(time.ok()) << time.status().message();
  EXPECT_EQ((*time)[0].ToDoubles(),
            (std::vector<double>{3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
  // "reversesequence_batch", with a trailing axis of 2 carried along.
  std::vector<double> pairs(32);
  for (int i = 0; i < 32; ++i) pairs[i] = i / 2;
  auto batch = RunNode("ReverseSequence",
                       {{"x", Floats({4, 4, 2}, pairs)}, {"lens", Ints({4}, {1, 2, 3, 4})}},
                       {{kFloat, 3}}, [](onnx::NodeProto& n) {
                         testing::SetInt(n, "batch_axis", 0);
                         testing::SetInt(n, "time_axis", 1);
                       });
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  const std::vector<double> want = {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12};
  const std::vector<double> got = (*batch)[0].ToDoubles();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(got[i], want[i / 2]) << "element " << i;
  EXPECT_FALSE(RunNode("ReverseSequence",
                       {{"x", Floats({4, 4}, v)}, {"lens", Ints({4}, {5, 1, 1, 1})}}, {{kFloat, 2}})
                   .ok());
  EXPECT_FALSE(RunNode("ReverseSequence",
                       {{"x", Floats({4, 4}, v)}, {"lens", Ints({3}, {1, 1, 1})}}, {{kFloat, 2}})
                   .ok());
}

TEST(LessCommonKernelsTest, MaxPoolIndicesAndMaxUnpoolPutTheMaximaBack) {
  // Two planes of 4x4; the maxima of 2x2 windows, their flat indices over the whole tensor.
  std::vector<double> v(32);
  for (int i = 0; i < 32; ++i) v[i] = static_cast<double>((i * 7) % 32);
  const HostTensor x = Floats({1, 2, 4, 4}, v);
  auto window = [](onnx::NodeProto& n) {
    testing::SetInts(n, "kernel_shape", {2, 2});
    testing::SetInts(n, "strides", {2, 2});
  };
  auto pooled = RunNode("MaxPool", {{"x", x}}, {{kFloat, 4}, {kInt64, 4}}, window);
  ASSERT_TRUE(pooled.ok()) << pooled.status().message();
  const HostTensor& values = (*pooled)[0];
  const HostTensor& where = (*pooled)[1];
  ASSERT_EQ(where.dims, Dims({1, 2, 2, 2}));
  for (int64_t k = 0; k < 8; ++k) {
    const int64_t plane = k / 4, ph = k % 4 / 2, pw = k % 2;
    int64_t best = -1;
    for (int64_t h = 2 * ph; h < 2 * ph + 2; ++h)
      for (int64_t w = 2 * pw; w < 2 * pw + 2; ++w) {
        const int64_t f = plane * 16 + h * 4 + w;
        if (best < 0 || v[f] > v[best]) best = f;
      }
    EXPECT_EQ(where.IntAt(k), best) << "window " << k;
    EXPECT_EQ(values.DoubleAt(k), v[best]);
  }
  auto back = RunNode("MaxUnpool", {{"p", values}, {"i", where}}, {{kFloat, 4}}, window);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ((*back)[0].dims, x.dims);
  const std::vector<double> z = (*back)[0].ToDoubles();
  int kept = 0;
  for (int f = 0; f < 32; ++f) {
    if (z[f] == 0) continue;
    EXPECT_EQ(z[f], v[f]) << "element " << f;
    ++kept;
  }
  EXPECT_EQ(kept, 8);
  // storage_order 1: the spatial axes column-major ([[1, 4], [3, 2]]: 4 at h 0, w 1 -> 2).
  auto column = RunNode("MaxPool", {{"x", Floats({1, 1, 2, 2}, {1, 4, 3, 2})}},
                        {{kFloat, 4}, {kInt64, 4}}, [](onnx::NodeProto& n) {
                          testing::SetInts(n, "kernel_shape", {2, 2});
                          testing::SetInt(n, "storage_order", 1);
                        });
  ASSERT_TRUE(column.ok()) << column.status().message();
  EXPECT_EQ((*column)[1].ToInts(), (std::vector<int64_t>{2}));
  // ONNX's "maxunpool_export_with_output_shape": a 5x5 output, indices into it.
  auto shaped = RunNode("MaxUnpool",
                        {{"p", Floats({1, 1, 2, 2}, {5, 6, 7, 8})},
                         {"i", Ints({1, 1, 2, 2}, {5, 7, 13, 15})},
                         {"shape", Ints({4}, {1, 1, 5, 5})}},
                        {{kFloat, 4}}, window);
  ASSERT_TRUE(shaped.ok()) << shaped.status().message();
  std::vector<double> want(25, 0.0);
  want[5] = 5, want[7] = 6, want[13] = 7, want[15] = 8;
  EXPECT_EQ((*shaped)[0].dims, Dims({1, 1, 5, 5}));
  EXPECT_EQ((*shaped)[0].ToDoubles(), want);
  EXPECT_FALSE(RunNode("MaxUnpool",
                       {{"p", Floats({1, 1, 1, 1}, {1})}, {"i", Ints({1, 1, 1, 1}, {4})}},
                       {{kFloat, 4}}, window)
                   .ok());  // index 4 of a 2x2 output
}

TEST(LessCommonKernelsTest, MaxRoiPoolTakesTheMaximumOfEachBin) {
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[i] = i;
  const HostTensor x = Floats({1, 1, 4, 4}, v);
  auto pool = [](float scale) {
    return [scale](onnx::NodeProto& n) {
      testing::SetInts(n, "pooled_shape", {2, 2});
      testing::SetFloat(n, "spatial_scale", scale);
    };
  };
  // The whole 4x4 image in 2x2 bins; then [0, 0, 2, 2] at half scale: a 2x2 region of 1-pixel
  // bins; then a region past the image's right edge: its outer bins cover nothing.
  auto whole = RunNode("MaxRoiPool", {{"x", x}, {"rois", Floats({1, 5}, {0, 0, 0, 3, 3})}},
                       {{kFloat, 4}}, pool(1.f));
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ((*whole)[0].dims, Dims({1, 1, 2, 2}));
  EXPECT_EQ((*whole)[0].ToDoubles(), (std::vector<double>{5, 7, 13, 15}));
  auto half = RunNode("MaxRoiPool", {{"x", x}, {"rois", Floats({1, 5}, {0, 0, 0, 2, 2})}},
                      {{kFloat, 4}}, pool(0.5f));
  ASSERT_TRUE(half.ok()) << half.status().message();
  EXPECT_EQ((*half)[0].ToDoubles(), (std::vector<double>{0, 1, 4, 5}));
  auto edge = RunNode("MaxRoiPool", {{"x", x}, {"rois", Floats({1, 5}, {0, 3, 0, 6, 3})}},
                      {{kFloat, 4}}, pool(1.f));
  ASSERT_TRUE(edge.ok()) << edge.status().message();
  EXPECT_EQ((*edge)[0].ToDoubles(), (std::vector<double>{7, 0, 15, 0}));
  EXPECT_FALSE(RunNode("MaxRoiPool", {{"x", x}, {"rois", Floats({1, 5}, {1, 0, 0, 3, 3})}},
                       {{kFloat, 4}}, pool(1.f))
                   .ok());  // batch 1 of 1
}

TEST(LessCommonKernelsTest, DetOfEachMatrixInTheLastTwoAxes) {
  auto one = RunNode("Det", {{"x", Floats({2, 2}, {1, 2, 3, 4})}}, {{kFloat, 0}});
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_TRUE((*one)[0].dims.empty());
  EXPECT_NEAR((*one)[0].DoubleAt(0), -2, 1e-6);
  // Identity, a lower-triangular matrix, a singular one, a row swap needed for a pivot.
  auto stack = RunNode("Det", {{"x", Floats({4, 3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1,  //
                                                        2, 0, 0, 0, 3, 0, 1, 1, 4,  //
                                                        1, 2, 3, 2, 4, 6, 0, 1, 1,  //
                                                        0, 1, 0, 1, 0, 0, 0, 0, 5})}},
                       {{kFloat, 1}});
  ASSERT_TRUE(stack.ok()) << stack.status().message();
  EXPECT_EQ((*stack)[0].dims, Dims({4}));
  const std::vector<double> d = (*stack)[0].ToDoubles();
  const std::vector<double> want = {1, 24, 0, -5};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(d[k], want[k], 1e-5) << "matrix " << k;
  EXPECT_FALSE(RunNode("Det", {{"x", Floats({2, 3}, {1, 2, 3, 4, 5, 6})}}, {{kFloat, 0}}).ok());
}

}  // namespace
}  // namespace verisub::runtime
