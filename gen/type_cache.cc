// Type interning and the shape-rule cache.
#include "gen/type_cache.h"

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

const TypeCache::Result& TypeCache::Infer(const OpInstance& inst, int inst_id, int t0, int t1,
                                          uint64_t* rejected) {
  uint64_t key = (static_cast<uint64_t>(inst_id) << 42) | (static_cast<uint64_t>(t0) << 21) |
                 static_cast<uint64_t>(t1 + 1);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    if (!it->second.ok) ++*rejected;
    return it->second;
  }
  const specs::TensorType* in[2] = {&types_[t0], t1 >= 0 ? &types_[t1] : nullptr};
  specs::TensorType out[specs::kMaxOpOutputs];
  Result r;
  uint32_t ranks = inst.input_ranks;
  bool rank_ok = !ranks || ((ranks >> in[0]->shape.rank) & 1);
  if (t1 >= 0 && ranks) rank_ok = rank_ok && ((ranks >> in[1]->shape.rank) & 1);
  r.ok = rank_ok && specs::InferTypes(inst.kind, inst.params, in, out).ok();
  if (r.ok) {
    for (int j = 0; j < specs::GetOp(inst.kind).num_outputs; ++j) r.out[j] = Intern(out[j]);
  } else {
    ++*rejected;
  }
  return cache_.emplace(key, r).first->second;
}

}  // namespace verisub::gen
