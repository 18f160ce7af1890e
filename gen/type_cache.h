// Interned tensor types and cached shape-rule results: the enumeration asks the same question
// (this operator on inputs of these types) millions of times.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "gen/config.h"
#include "specs/op_spec.h"
#include "specs/tensor.h"

namespace verisub::gen {

// Type ids are local to one cache (one thread).
class TypeCache {
 public:
  struct Result {
    bool ok = false;
    int out[specs::kMaxOpOutputs] = {-1, -1};
  };

  int Intern(const specs::TensorType& t);
  const specs::TensorType& type(int id) const { return types_[id]; }
  uint64_t hash(int id) const { return hashes_[id]; }

  // The output types of `inst` (index inst_id in GenConfig::ops) on inputs of types t0, t1 and
  // t2 (-1: fewer inputs), or !ok when its input ranks or shape rule refuse them; every refusal,
  // cached or not, is counted in *rejected.
  Result Infer(const OpInstance& inst, int inst_id, int t0, int t1, uint64_t* rejected,
               int t2 = -1);

  // Bit i: ops[i] (at most 64) accepts inputs of types t0 and t1; unary operators are asked
  // with t1 = -1, binary ones with t1 >= 0. One lookup instead of one per operator.
  uint64_t Accepting(const std::vector<OpInstance>& ops, int t0, int t1);

 private:
  // Dense table over (instance, t0, t1 + 1): kKnown | kOk | output type ids + 1 (15 bits each).
  static constexpr uint32_t kKnown = 1u << 31, kOk = 1u << 30;
  size_t Slot(int inst_id, int t0, int t1) const {
    return (static_cast<size_t>(inst_id) * capacity_ + t0) * (capacity_ + 1) + (t1 + 1);
  }
  void Grow(int num_insts, int capacity);
  // The cache entry's value: kKnown | kOk | output type ids.
  uint32_t Compute(const OpInstance& inst, int t0, int t1, int t2);

  std::vector<specs::TensorType> types_;
  std::vector<uint64_t> hashes_;
  std::unordered_multimap<uint64_t, int> by_hash_;
  std::vector<uint32_t> table_;
  int num_insts_ = 0, capacity_ = 0;
  // Operators of three inputs, by (instance, t0, t1, t2): few, so hashed instead of dense.
  std::unordered_map<uint64_t, uint32_t> ternary_;
  // Accepting(): masks over (t0, t1 + 1), computed once each.
  std::vector<uint64_t> masks_;
  std::vector<bool> mask_known_;
  int mask_capacity_ = 0;
};

}  // namespace verisub::gen
