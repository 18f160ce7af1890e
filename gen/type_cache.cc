// Type interning and the shape-rule cache.
#include "gen/type_cache.h"

#include <algorithm>

#include "gen/search_space.h"
#include "specs/evaluate.h"
#include "specs/registry.h"

namespace verisub::gen {

int TypeCache::Intern(const specs::TensorType& t) {
  uint64_t h = HashType(t);
  auto [it, end] = by_hash_.equal_range(h);
  for (; it != end; ++it)
    if (types_[it->second] == t) return it->second;
  int id = static_cast<int>(types_.size());
  types_.push_back(t);
  hashes_.push_back(h);
  by_hash_.emplace(h, id);
  return id;
}

void TypeCache::Grow(int num_insts, int capacity) {
  std::vector<uint32_t> old = std::move(table_);
  const int old_insts = num_insts_, old_capacity = capacity_;
  num_insts_ = num_insts;
  capacity_ = capacity;
  table_.assign(static_cast<size_t>(num_insts_) * capacity_ * (capacity_ + 1), 0);
  for (int i = 0; i < old_insts; ++i)
    for (int t0 = 0; t0 < old_capacity; ++t0)
      for (int t1 = -1; t1 < old_capacity; ++t1)
        table_[Slot(i, t0, t1)] =
            old[(static_cast<size_t>(i) * old_capacity + t0) * (old_capacity + 1) + (t1 + 1)];
}

uint32_t TypeCache::Compute(const OpInstance& inst, int t0, int t1, int t2) {
  const specs::TensorType* in[3] = {&types_[t0], t1 >= 0 ? &types_[t1] : nullptr,
                                    t2 >= 0 ? &types_[t2] : nullptr};
  specs::TensorType out[specs::kMaxOpOutputs];
  const uint32_t ranks = inst.input_ranks;
  bool rank_ok = true;
  for (const specs::TensorType* t : in)
    if (t && ranks) rank_ok = rank_ok && ((ranks >> t->shape.rank) & 1);
  uint32_t value = kKnown;
  if (rank_ok && specs::InferTypes(inst.kind, inst.params, in, out).ok()) {
    value |= kOk;
    for (int j = 0; j < specs::GetOp(inst.kind).num_outputs; ++j) {
      const int id = Intern(out[j]);
      VERISUB_CHECK(id + 1 < (1 << 15));
      value |= static_cast<uint32_t>(id + 1) << (15 * j);
    }
  }
  return value;
}

TypeCache::Result TypeCache::Infer(const OpInstance& inst, int inst_id, int t0, int t1,
                                   uint64_t* rejected, int t2) {
  uint32_t e = 0;
  if (t2 >= 0) {
    const uint64_t key = (static_cast<uint64_t>(inst_id) << 48) |
                         (static_cast<uint64_t>(t0) << 32) | (static_cast<uint64_t>(t1 + 1) << 16) |
                         static_cast<uint64_t>(t2);
    auto it = ternary_.find(key);
    e = it != ternary_.end() ? it->second : (ternary_[key] = Compute(inst, t0, t1, t2));
  } else {
    if (inst_id >= num_insts_ || std::max(t0, t1) >= capacity_) {
      const int needed = std::max(t0, t1) + 1;
      Grow(std::max(num_insts_, inst_id + 1),
           needed > capacity_ ? std::max({2 * capacity_, needed, 16}) : capacity_);
    }
    const size_t slot = Slot(inst_id, t0, t1);
    // Compute interns types; the table grows only in a later Infer.
    if (!(table_[slot] & kKnown)) table_[slot] = Compute(inst, t0, t1, -1);
    e = table_[slot];
  }
  Result r;
  r.ok = (e & kOk) != 0;
  if (!r.ok) {
    ++*rejected;
    return r;
  }
  r.out[0] = static_cast<int>(e & 0x7fff) - 1;
  r.out[1] = static_cast<int>((e >> 15) & 0x7fff) - 1;
  return r;
}

uint64_t TypeCache::Accepting(const std::vector<OpInstance>& ops, int t0, int t1) {
  VERISUB_CHECK(ops.size() <= 64);
  if (std::max(t0, t1) >= mask_capacity_) {
    const int capacity = std::max({2 * mask_capacity_, std::max(t0, t1) + 1, 16});
    std::vector<uint64_t> masks(static_cast<size_t>(capacity) * (capacity + 1), 0);
    std::vector<bool> known(masks.size(), false);
    for (int a = 0; a < mask_capacity_; ++a)
      for (int b = 0; b <= mask_capacity_; ++b) {
        masks[static_cast<size_t>(a) * (capacity + 1) + b] =
            masks_[static_cast<size_t>(a) * (mask_capacity_ + 1) + b];
        known[static_cast<size_t>(a) * (capacity + 1) + b] =
            mask_known_[static_cast<size_t>(a) * (mask_capacity_ + 1) + b];
      }
    masks_ = std::move(masks);
    mask_known_ = std::move(known);
    mask_capacity_ = capacity;
  }
  const size_t slot = static_cast<size_t>(t0) * (mask_capacity_ + 1) + (t1 + 1);
  if (!mask_known_[slot]) {
    uint64_t mask = 0, ignored = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      const int arity = specs::GetOp(ops[i].kind).num_inputs;
      if (arity > 2 || (arity == 1) != (t1 < 0)) continue;
      if (Infer(ops[i], static_cast<int>(i), t0, t1, &ignored).ok) mask |= uint64_t{1} << i;
    }
    masks_[slot] = mask;
    mask_known_[slot] = true;
  }
  return masks_[slot];
}

}  // namespace verisub::gen
