// Memoized double evaluation.
#include "gen/double_cache.h"

#include "specs/evaluate.h"
#include "specs/registry.h"
#include "specs/semantics.h"

namespace verisub::gen {

DoubleCache::DoubleCache(const SearchSpace& s, size_t max_bytes) : s_(s), max_bytes_(max_bytes) {
  initial_.resize(s.initial.size());
  for (size_t i = 0; i < s.initial.size(); ++i)
    for (const auto& test : s.doubles) initial_[i].push_back(test[i]);
}

size_t DoubleCache::Bytes(const Values& v) {
  size_t bytes = sizeof(Values) + 64;  // the node and its key
  for (const auto& t : v) bytes += sizeof(t) + t.data.size() * sizeof(double);
  return bytes;
}

void DoubleCache::Trim() {
  if (2 * recent_bytes_ <= max_bytes_) return;
  old_ = std::move(recent_);
  recent_ = Map();
  recent_bytes_ = 0;
}

const DoubleCache::Values* DoubleCache::Find(uint64_t key) {
  auto it = recent_.find(key);
  if (it != recent_.end()) return &it->second;
  auto node = old_.extract(key);
  if (node.empty()) return nullptr;
  // Moving the node keeps the element where it is, so pointers to it stay valid.
  recent_bytes_ += Bytes(node.mapped());
  return &recent_.insert(std::move(node)).position->second;
}

void DoubleCache::Evaluate(const Graph& g, const uint64_t* op_keys, const Values** op_values) {
  const int num_initial = static_cast<int>(s_.initial.size());
  const int num_tests = static_cast<int>(s_.doubles.size());
  auto value = [&](int id) {
    return id < num_initial ? &initial_[id] : op_values[id - num_initial];
  };
  specs::DoubleSemantics db;
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const GraphOp& op = g.ops[k];
    const int num_outputs = s_.num_outputs[op.inst];
    bool found = true;
    for (int j = 0; j < num_outputs && found; ++j)
      found = (op_values[2 * k + j] = Find(op_keys[2 * k + j])) != nullptr;
    if (found) {
      ++reused_;
      continue;
    }
    ++evaluated_;
    const OpInstance& inst = s_.config->ops[op.inst];
    Values results[specs::kMaxOpOutputs];
    for (int t = 0; t < num_tests; ++t) {
      const specs::Tensor<double>* in[specs::kMaxOpInputs];
      for (int i = 0; i < 2 && op.in[i] != kNoTensor; ++i) in[i] = &(*value(op.in[i]))[t];
      specs::Tensor<double> out[specs::kMaxOpOutputs];
      // The integer evaluation of the same graph passed shape inference.
      VERISUB_CHECK(specs::Evaluate(db, inst.kind, inst.params, in, out).ok());
      for (int j = 0; j < num_outputs; ++j) results[j].push_back(std::move(out[j]));
    }
    for (int j = 0; j < num_outputs; ++j) {
      recent_bytes_ += Bytes(results[j]);
      auto [it, fresh] = recent_.try_emplace(op_keys[2 * k + j], std::move(results[j]));
      op_values[2 * k + j] = &it->second;
    }
  }
}

}  // namespace verisub::gen
