// Rank probing with the shape rules.
#include "specs/rank_probe.h"

#include <map>
#include <mutex>
#include <tuple>

#include "specs/evaluate.h"

namespace verisub::specs {
namespace {

enum class Probe { kOnes, kThrees, kConcatenated };

// `halves`: the concat history of two 1s, for Probe::kConcatenated.
TensorType ProbeType(int rank, Probe probe, const SplitTree& halves) {
  TensorType t;
  t.shape.rank = rank;
  for (int d = 0; d < rank; ++d) {
    t.shape[d] = probe == Probe::kOnes ? 1 : probe == Probe::kThrees ? 3 : 2;
    if (probe == Probe::kConcatenated) t.trees[d] = halves;
  }
  return t;
}

}  // namespace

bool ProbeOutputRanks(OpKind op, const Params& params, const std::vector<int>& input_ranks,
                      std::vector<int>* output_ranks) {
  const OpSpec& spec = GetOp(op);
  if (static_cast<int>(input_ranks.size()) != spec.num_inputs) return false;
  for (int r : input_ranks)
    if (r < 0 || r > kMaxRank) return false;
  SplitTree halves;
  for (Probe probe : {Probe::kOnes, Probe::kThrees, Probe::kConcatenated}) {
    if (probe == Probe::kConcatenated) halves = ConcatTrees(1, nullptr, nullptr);
    TensorType in[kMaxOpInputs], out[kMaxOpOutputs];
    const TensorType* ptrs[kMaxOpInputs];
    for (int i = 0; i < spec.num_inputs; ++i) {
      in[i] = ProbeType(input_ranks[i], probe, halves);
      ptrs[i] = &in[i];
    }
    if (!InferTypes(op, params, ptrs, out).ok()) continue;
    output_ranks->clear();
    for (int k = 0; k < spec.num_outputs; ++k) output_ranks->push_back(out[k].shape.rank);
    return true;
  }
  return false;
}

const std::vector<RankCase>& ProbeRankCases(OpKind op, const Params& params, int max_rank) {
  // Verification asks for the same few dozen instances thousands of times; entries of a std::map
  // stay where they are, so the references handed out remain valid.
  static std::mutex mu;
  static std::map<std::tuple<OpKind, Params, int>, std::vector<RankCase>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache.try_emplace({op, params, max_rank});
  if (!inserted) return it->second;
  const int n = GetOp(op).num_inputs;
  std::vector<RankCase>& out = it->second;
  RankCase c;
  c.inputs.assign(n, 0);
  while (true) {
    if (ProbeOutputRanks(op, params, c.inputs, &c.outputs)) out.push_back(c);
    int k = n - 1;
    while (k >= 0 && c.inputs[k] == max_rank) c.inputs[k--] = 0;
    if (k < 0) break;
    ++c.inputs[k];
  }
  return out;
}

}  // namespace verisub::specs
