// A validity oracle for pruning tests: a rule holds if both sides agree on random inputs (all
// 3x3 matrices in [-1, 1], double semantics). Good enough for the matrix rules of the tests.
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include "ruledb/pattern_eval.h"
#include "ruledb/rule.h"
#include "specs/semantics.h"

namespace verisub::ruledb::testing {

inline bool HoldsOnRandomInputs(const Rule& r) {
  specs::DoubleSemantics s;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<specs::Tensor<double>> in(r.num_inputs);
    for (auto& t : in) {
      t.type = specs::TensorType(specs::Shape{3, 3});
      for (int k = 0; k < 9; ++k) t.data.push_back(dist(rng));
    }
    auto a = EvalPattern(s, r.src, in);
    auto b = EvalPattern(s, r.dst, in);
    if (!a.ok() || !b.ok() || a->size() != b->size()) return false;
    for (size_t o = 0; o < a->size(); ++o) {
      if (!((*a)[o].shape() == (*b)[o].shape())) return false;
      for (size_t k = 0; k < (*a)[o].data.size(); ++k)
        if (std::abs((*a)[o].data[k] - (*b)[o].data[k]) > 1e-9 * (1 + std::abs((*a)[o].data[k])))
          return false;
    }
  }
  return true;
}

}  // namespace verisub::ruledb::testing
