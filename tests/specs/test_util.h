// Helpers for specs tests: building tensors and evaluating single operators.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "specs/evaluate.h"
#include "specs/semantics.h"

namespace verisub::specs::testing {

inline Tensor<double> MakeTensor(Shape s, std::vector<double> data) {
  Tensor<double> t;
  t.type = TensorType(s);
  t.data = std::move(data);
  return t;
}

// Random data for a type, in the given semantics.
template <class S>
Tensor<typename S::Elem> RandomTensor(const S& s, const TensorType& type, std::mt19937_64& rng);

template <>
inline Tensor<double> RandomTensor(const DoubleSemantics&, const TensorType& type,
                                   std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Tensor<double> t;
  t.type = type;
  t.data.resize(type.shape.NumElements());
  for (double& v : t.data) v = u(rng);
  return t;
}

template <>
inline Tensor<uint32_t> RandomTensor(const ModIntSemantics& s, const TensorType& type,
                                     std::mt19937_64& rng) {
  Tensor<uint32_t> t;
  t.type = type;
  t.data.resize(type.shape.NumElements());
  for (uint32_t& v : t.data) v = s.FromInt(static_cast<int64_t>(rng() >> 1));
  return t;
}

// Evaluates `op[params]` given in text, e.g. RunOp("conv2d[stride_h=2]", {x, w}); unspecified
// parameters take their first domain value.
StatusOr<std::vector<Tensor<double>>> RunOp(const std::string& op_with_params,
                                            const std::vector<Tensor<double>>& inputs);

// Output `k` of `op` on `in` (RunOp), a failure of the test and an empty tensor on an error.
inline Tensor<double> Out(const std::string& op, const std::vector<Tensor<double>>& in, int k = 0) {
  auto r = RunOp(op, in);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().message();
  if (!r.ok()) return {};
  return (*r)[k];
}

// `t` has shape `s` and the `expected` values (within 1e-12).
inline void ExpectData(const Tensor<double>& t, Shape s, const std::vector<double>& expected) {
  EXPECT_EQ(t.shape(), s) << t.shape().ToString();
  ASSERT_EQ(t.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(t.data[i], expected[i], 1e-12) << i;
}

}  // namespace verisub::specs::testing
