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
  whole_graph_terms_used_ = 0;
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

void DoubleCache::Compute(const GraphOp& op, const Values* const* in, Values* const* out) const {
  const OpInstance& inst = s_.config->ops[op.inst];
  const int num_outputs = s_.num_outputs[op.inst];
  const size_t num_tests = s_.doubles.size();
  for (int j = 0; j < num_outputs; ++j) out[j]->resize(num_tests);
  specs::DoubleSemantics db;
  for (size_t t = 0; t < num_tests; ++t) {
    const specs::Tensor<double>* args[specs::kMaxOpInputs];
    for (int i = 0; i < op.arity(); ++i) args[i] = &(*in[i])[t];
    // A single output is computed in place, reusing its buffer; a split's two need an array.
    specs::Tensor<double> pair[specs::kMaxOpOutputs];
    specs::Tensor<double>* results = num_outputs == 1 ? &(*out[0])[t] : pair;
    // The integer evaluation of the same graph passed shape inference.
    VERISUB_CHECK(specs::Evaluate(db, inst.kind, inst.params, args, results).ok());
    if (num_outputs > 1)
      for (int j = 0; j < num_outputs; ++j) (*out[j])[t] = std::move(pair[j]);
  }
}

void DoubleCache::Evaluate(const Graph& g, const uint64_t* op_keys, const Values** op_values) {
  const int num_initial = static_cast<int>(s_.initial.size());
  uint32_t deps[kMaxGraphOps];  // bit i: operator k's outputs depend on operator i
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const GraphOp& op = g.ops[k];
    const int num_outputs = s_.num_outputs[op.inst];
    const Values* in[kMaxGraphOpInputs] = {nullptr, nullptr, nullptr};
    deps[k] = 1u << k;
    for (int i = 0; i < op.arity(); ++i) {
      const int id = op.in[i];
      in[i] = id < num_initial ? &initial_[id] : op_values[id - num_initial];
      if (id >= num_initial) deps[k] |= deps[(id - num_initial) / 2];
    }
    Values* out[specs::kMaxOpOutputs];
    if (__builtin_popcount(deps[k]) == s_.config->max_ops) {
      // Kept until Trim(); their buffers are reused by the next bucket's.
      for (int j = 0; j < num_outputs; ++j) {
        if (whole_graph_terms_used_ == whole_graph_terms_.size()) whole_graph_terms_.emplace_back();
        out[j] = &whole_graph_terms_[whole_graph_terms_used_++];
      }
    } else {
      bool found = true;
      for (int j = 0; j < num_outputs && found; ++j)
        found = (op_values[2 * k + j] = Find(op_keys[2 * k + j])) != nullptr;
      if (found) {
        ++reused_;
        continue;
      }
      // Outputs of one operator enter the cache together; one may still be there without the
      // other (moved back from the old generation alone), and then keeps its value.
      for (int j = 0; j < num_outputs; ++j) {
        auto [it, fresh] = recent_.try_emplace(op_keys[2 * k + j]);
        out[j] = fresh ? &it->second : &scratch_[j];
      }
    }
    ++evaluated_;
    Compute(op, in, out);
    for (int j = 0; j < num_outputs; ++j) {
      if (out[j] == &scratch_[j]) {
        op_values[2 * k + j] = Find(op_keys[2 * k + j]);
        continue;
      }
      if (__builtin_popcount(deps[k]) != s_.config->max_ops) recent_bytes_ += Bytes(*out[j]);
      op_values[2 * k + j] = out[j];
    }
  }
}

}  // namespace verisub::gen
