// Symmetry keys of rules.
#include "ruledb/rule_symmetry.h"

#include <xxhash.h>

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "specs/registry.h"

namespace verisub::ruledb {
namespace {

struct NodeRef {
  PatternGraph* graph;
  size_t node;
};

uint64_t HashWords(const std::vector<uint64_t>& words) {
  return XXH3_64bits(words.data(), words.size() * sizeof(uint64_t));
}

// Hashes of the values of `g` in order of its outputs, as SymmetryHash describes.
std::vector<uint64_t> OutputHashes(const PatternGraph& g) {
  constexpr uint64_t kInputLeaf = 0x9e3779b97f4a7c15ull;
  std::vector<uint64_t> node_hash(g.nodes.size());
  auto value = [&](ValueRef v) {
    return v.is_input() ? kInputLeaf
                        : HashWords({node_hash[v.node], static_cast<uint64_t>(v.index)});
  };
  std::vector<uint64_t> words;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const PatternNode& n = g.nodes[i];
    words.assign({static_cast<uint64_t>(n.op)});
    for (int64_t p : n.params.v) words.push_back(static_cast<uint64_t>(p));
    const size_t first = words.size();
    for (ValueRef v : n.inputs) words.push_back(value(v));
    if (specs::GetOp(n.op).commutative) std::sort(words.begin() + first, words.end());
    node_hash[i] = HashWords(words);
  }
  std::vector<uint64_t> out;
  for (ValueRef v : g.outputs) out.push_back(value(v));
  return out;
}

}  // namespace

uint64_t SymmetryHash(const Rule& r) {
  const std::vector<uint64_t> src = OutputHashes(r.src), dst = OutputHashes(r.dst);
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  for (size_t k = 0; k < src.size() && k < dst.size(); ++k) pairs.emplace_back(src[k], dst[k]);
  std::sort(pairs.begin(), pairs.end());
  std::vector<uint64_t> words = {static_cast<uint64_t>(r.num_inputs), src.size(), dst.size()};
  for (const auto& [s, d] : pairs) words.insert(words.end(), {s, d});
  std::vector<int> ranks = r.input_ranks;  // renaming permutes them
  std::sort(ranks.begin(), ranks.end());
  for (int rank : ranks) words.push_back(static_cast<uint64_t>(rank));
  return HashWords(words);
}

std::string SymmetryKey(const Rule& r, int max_variants) {
  Rule work = r;
  std::vector<NodeRef> commutative;
  for (PatternGraph* g : {&work.src, &work.dst})
    for (size_t i = 0; i < g->nodes.size(); ++i)
      if (specs::GetOp(g->nodes[i].op).commutative) commutative.push_back({g, i});
  const size_t outputs = r.src.outputs.size();
  size_t perms = 1;
  for (size_t k = 2; k <= outputs; ++k) perms *= k;
  if (commutative.size() >= 20 ||
      (size_t{1} << commutative.size()) * perms > static_cast<size_t>(max_variants))
    return Canonicalize(r).ToText();
  std::string best;
  std::vector<size_t> order(outputs);
  std::iota(order.begin(), order.end(), 0);
  do {
    for (size_t k = 0; k < outputs; ++k) {
      work.src.outputs[k] = r.src.outputs[order[k]];
      work.dst.outputs[k] = r.dst.outputs[order[k]];
    }
    for (size_t mask = 0; mask < (size_t{1} << commutative.size()); ++mask) {
      for (size_t c = 0; c < commutative.size(); ++c) {
        const PatternGraph& orig = commutative[c].graph == &work.src ? r.src : r.dst;
        std::vector<ValueRef>& in = commutative[c].graph->nodes[commutative[c].node].inputs;
        in = orig.nodes[commutative[c].node].inputs;
        if (mask >> c & 1) std::swap(in[0], in[1]);
      }
      std::string text = Canonicalize(work).ToText();
      if (best.empty() || text < best) best = std::move(text);
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

Rule Normalize(const Rule& r) {
  auto parsed = ParseRule(r.ToText());
  VERISUB_CHECK(parsed.ok());  // a valid rule's own text always parses
  parsed->proof = r.proof;
  return std::move(*parsed);
}

}  // namespace verisub::ruledb
