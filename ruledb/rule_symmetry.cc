// Symmetry keys of rules.
#include "ruledb/rule_symmetry.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "specs/registry.h"

namespace verisub::ruledb {
namespace {

struct NodeRef {
  PatternGraph* graph;
  size_t node;
};

}  // namespace

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
