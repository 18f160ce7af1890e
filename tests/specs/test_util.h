// Helpers for specs tests: building tensors and evaluating single operators.
#pragma once

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

}  // namespace verisub::specs::testing
