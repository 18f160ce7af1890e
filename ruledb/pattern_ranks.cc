// Rank propagation through patterns.
#include "ruledb/pattern_ranks.h"

#include <cstdint>

#include "specs/rank_probe.h"
#include "specs/registry.h"

namespace verisub::ruledb {

PatternRanks::PatternRanks(const PatternGraph& g, const std::vector<int>& input_ranks)
    : input_ranks_(input_ranks) {
  node_ranks_.reserve(g.nodes.size());
  for (const PatternNode& n : g.nodes) {
    std::vector<int> in, out;
    bool known = true;
    for (const ValueRef& v : n.inputs) {
      in.push_back(Rank(v));
      known = known && in.back() >= 0;
    }
    if (!known || !specs::ProbeOutputRanks(n.op, n.params, in, &out))
      out.assign(specs::GetOp(n.op).num_outputs, -1);
    node_ranks_.push_back(std::move(out));
  }
}

int PatternRanks::Rank(ValueRef v) const {
  if (v.is_input())
    return v.index < static_cast<int>(input_ranks_.size()) ? input_ranks_[v.index] : -1;
  if (v.node < 0 || v.node >= static_cast<int>(node_ranks_.size())) return -1;
  const std::vector<int>& outs = node_ranks_[v.node];
  return v.index >= 0 && v.index < static_cast<int>(outs.size()) ? outs[v.index] : -1;
}

namespace {

constexpr uint32_t kAnyRank = (1u << (specs::kMaxRank + 1)) - 1;

// Per node of a pattern, the rank cases of its operator instance.
std::vector<std::vector<specs::RankCase>> NodeCases(const PatternGraph& g) {
  std::vector<std::vector<specs::RankCase>> out;
  for (const PatternNode& n : g.nodes)
    out.push_back(specs::ProbeRankCases(n.op, n.params, specs::kMaxRank));
  return out;
}

// Whether every output of `g` can have some rank when input i ranges over the ranks of
// inputs[i] (a bit mask).
bool CanTypeCheck(const PatternGraph& g, const std::vector<std::vector<specs::RankCase>>& cases,
                  const std::vector<uint32_t>& inputs) {
  std::vector<std::vector<uint32_t>> values(g.nodes.size());
  auto mask = [&](ValueRef v) { return v.is_input() ? inputs[v.index] : values[v.node][v.index]; };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    values[i].assign(specs::GetOp(g.nodes[i].op).num_outputs, 0);
    for (const specs::RankCase& c : cases[i]) {
      bool fits = true;
      for (size_t a = 0; fits && a < c.inputs.size(); ++a)
        fits = (mask(g.nodes[i].inputs[a]) >> c.inputs[a]) & 1;
      for (size_t k = 0; fits && k < c.outputs.size(); ++k) values[i][k] |= 1u << c.outputs[k];
    }
  }
  for (const ValueRef& v : g.outputs)
    if (!mask(v)) return false;
  return true;
}

}  // namespace

bool RanksAreForced(const Rule& rule, const std::vector<int>& ranks) {
  if (static_cast<int>(ranks.size()) != rule.num_inputs) return false;
  const auto src_cases = NodeCases(rule.src), dst_cases = NodeCases(rule.dst);
  // Narrows each input's possible ranks until nothing changes: a rank goes when neither side
  // can type-check with it and the other inputs' remaining ranks. Each side on its own, each use
  // of an input on its own: what remains over-approximates the typable rank tuples.
  std::vector<uint32_t> domains(rule.num_inputs, kAnyRank);
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < rule.num_inputs; ++i)
      for (int r = 0; r <= specs::kMaxRank; ++r) {
        if (!((domains[i] >> r) & 1)) continue;
        std::vector<uint32_t> trial = domains;
        trial[i] = 1u << r;
        if (CanTypeCheck(rule.src, src_cases, trial) && CanTypeCheck(rule.dst, dst_cases, trial))
          continue;
        domains[i] &= ~(1u << r);
        changed = true;
      }
  }
  for (int i = 0; i < rule.num_inputs; ++i)
    if (domains[i] != 1u << ranks[i]) return false;
  return true;
}

}  // namespace verisub::ruledb
