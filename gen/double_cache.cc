// Memoized double evaluation.
#include "gen/double_cache.h"

#include "specs/evaluate.h"
#include "specs/semantics.h"

namespace verisub::gen {

void DoubleCache::Trim() {
  if (terms_.size() > max_terms_) terms_.clear();
}

std::vector<const DoubleCache::Values*> DoubleCache::Evaluate(const Graph& g,
                                                              const std::vector<uint64_t>& keys) {
  const int num_initial = static_cast<int>(s_.initial.size());
  const int num_tests = static_cast<int>(s_.doubles.size());
  std::vector<const Values*> value(keys.size(), nullptr);
  for (int i = 0; i < num_initial; ++i) {
    auto [it, fresh] = terms_.try_emplace(keys[i]);
    if (fresh)
      for (int t = 0; t < num_tests; ++t) it->second.push_back(s_.doubles[t][i]);
    value[i] = &it->second;
  }
  specs::DoubleSemantics db;
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const OpInstance& inst = s_.config->ops[g.ops[k].inst];
    const specs::OpSpec& op = specs::GetOp(inst.kind);
    const int first = num_initial + 2 * static_cast<int>(k);
    auto it = terms_.find(keys[first]);
    if (it == terms_.end()) {
      Values results[specs::kMaxOpOutputs];
      for (int t = 0; t < num_tests; ++t) {
        const specs::Tensor<double>* in[specs::kMaxOpInputs];
        for (int i = 0; i < op.num_inputs; ++i) in[i] = &(*value[g.ops[k].in[i]])[t];
        specs::Tensor<double> out[specs::kMaxOpOutputs];
        // The integer evaluation of the same graph passed shape inference.
        VERISUB_CHECK(specs::Evaluate(db, inst.kind, inst.params, in, out).ok());
        for (int j = 0; j < op.num_outputs; ++j) results[j].push_back(std::move(out[j]));
      }
      for (int j = 0; j < op.num_outputs; ++j)
        terms_.try_emplace(keys[first + j], std::move(results[j]));
    }
    for (int j = 0; j < op.num_outputs; ++j) value[first + j] = &terms_.at(keys[first + j]);
  }
  return value;
}

}  // namespace verisub::gen
