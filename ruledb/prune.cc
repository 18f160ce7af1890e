// Pruning steps and the pruning pipeline.
#include "ruledb/prune.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_set>

#include "ruledb/database.h"
#include "ruledb/generalize.h"
#include "ruledb/rule_symmetry.h"

namespace verisub::ruledb {
namespace {

size_t NumNodes(const Rule& r) { return r.src.nodes.size() + r.dst.nodes.size(); }

Rule WithoutRanks(const Rule& r) {
  Rule out = r;
  out.input_ranks.clear();
  return out;
}

uint32_t OpMask(const PatternGraph& p) {
  uint32_t mask = 0;
  for (const PatternNode& n : p.nodes) mask |= 1u << static_cast<int>(n.op);
  return mask;
}

// Keeps the rules whose flag is false; returns how many it dropped.
int64_t EraseFlagged(std::vector<Rule>* rules, const std::vector<bool>& drop) {
  std::vector<Rule> kept;
  kept.reserve(rules->size());
  for (size_t i = 0; i < rules->size(); ++i)
    if (!drop[i]) kept.push_back(std::move((*rules)[i]));
  int64_t removed = static_cast<int64_t>(rules->size() - kept.size());
  *rules = std::move(kept);
  return removed;
}

// Drops each rule (including rules added on the way) that has a strictly smaller valid
// generalization.
int64_t PruneByGeneralization(std::vector<Rule>* rules, KnownValidRules* known, int64_t* added,
                              std::vector<Rule> (*generalize)(const Rule&)) {
  std::vector<bool> drop;
  for (size_t i = 0; i < rules->size(); ++i) {
    std::vector<Rule> proved;
    bool covered = false;
    for (const Rule& g : generalize((*rules)[i])) {
      if (NumNodes(g) >= NumNodes((*rules)[i])) continue;
      if (known->IsValid(g, &proved)) {
        covered = true;
        break;
      }
    }
    drop.push_back(covered);
    for (Rule& p : proved) rules->push_back(std::move(p));
    *added += static_cast<int64_t>(proved.size());
  }
  int64_t removed = EraseFlagged(rules, drop);
  SortRules(rules);
  return removed;
}

}  // namespace

std::string PruneReport::ToString() const {
  std::string s = "input: " + std::to_string(input) + "\n";
  for (const PruneStep& st : steps) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.3f s", st.seconds);
    s += st.name + ": " + std::to_string(st.before) + " -> " + std::to_string(st.after) +
         " (removed " + std::to_string(st.removed) + ", added " + std::to_string(st.added) + ")" +
         buf + "\n";
  }
  return s + "output: " + std::to_string(output) + "\n";
}

std::vector<std::pair<std::string, int64_t>> PruneReport::Counts() const {
  std::vector<std::pair<std::string, int64_t>> c = {{"input", input}};
  for (const PruneStep& st : steps) c.emplace_back("after_" + st.name, st.after);
  c.emplace_back("output", output);
  return c;
}

int64_t DropUnproved(std::vector<Rule>* rules) {
  std::vector<bool> drop;
  for (const Rule& r : *rules) drop.push_back(r.proof.status != ProofStatus::kProved);
  return EraseFlagged(rules, drop);
}

int64_t DropTrivial(std::vector<Rule>* rules) {
  std::vector<bool> drop;
  for (const Rule& r : *rules) {
    std::vector<std::string> names;
    for (int i = 0; i < r.num_inputs; ++i) names.push_back(InputName(i));
    drop.push_back(FormatPattern(r.src, names) == FormatPattern(r.dst, names));
  }
  return EraseFlagged(rules, drop);
}

int64_t PruneInputRenaming(std::vector<Rule>* rules, const PruneOptions& options) {
  // Canonical text already names inputs by first appearance, so renamings have equal text;
  // symmetry keys also merge commutative and output-order variants. Rules are sorted, so the
  // first of each class (fewest nodes, then smallest text) is kept. A rule without ranks covers
  // its ranked variants; ranked variants with different ranks cover each other only when equal.
  auto key = [&](const Rule& r) {
    return options.merge_symmetric_variants ? SymmetryKey(r, options.max_symmetry_variants)
                                            : Canonicalize(r).ToText();
  };
  std::unordered_set<std::string> generic;
  for (const Rule& r : *rules)
    if (r.input_ranks.empty()) generic.insert(key(r));
  std::unordered_set<std::string> seen;
  std::vector<bool> drop;
  for (const Rule& r : *rules) {
    if (!r.input_ranks.empty() && generic.count(key(WithoutRanks(r)))) {
      drop.push_back(true);
      continue;
    }
    drop.push_back(!seen.insert(key(r)).second);
  }
  return EraseFlagged(rules, drop);
}

int64_t PruneSubsumed(std::vector<Rule>* rules, const PruneOptions& options) {
  // A rule is dropped when it is a strict instance of another rule of the set. Strict instance
  // is a well-founded order, so every dropped rule is an instance of a kept one. Candidates are
  // indexed by output count and the operator at the root of the first source output (-1 for a
  // bare input, which matches anything); their source operators, and their target operators,
  // must all occur in the rule's (an instance only adds nodes to both sides).
  auto root = [](const Rule& r) {
    ValueRef v = r.src.outputs[0];
    return v.is_input() ? -1 : static_cast<int>(r.src.nodes[v.node].op);
  };
  std::map<std::pair<size_t, int>, std::vector<size_t>> index;
  std::vector<uint32_t> masks, dst_masks;
  for (size_t j = 0; j < rules->size(); ++j) {
    const Rule& r = (*rules)[j];
    masks.push_back(OpMask(r.src));
    dst_masks.push_back(OpMask(r.dst));
    index[{r.src.outputs.size(), root(r)}].push_back(j);
  }
  std::vector<bool> drop(rules->size(), false);
  for (size_t i = 0; i < rules->size(); ++i) {
    const Rule& specific = (*rules)[i];
    std::optional<std::string> specific_key;
    for (int key : {root(specific), -1}) {
      auto it = index.find({specific.src.outputs.size(), key});
      if (it == index.end()) continue;
      for (size_t j : it->second) {
        if (drop[i]) break;
        if (i == j || (masks[j] & ~masks[i]) != 0 || (dst_masks[j] & ~dst_masks[i]) != 0) continue;
        drop[i] = IsInstanceOf(specific, (*rules)[j], options.merge_symmetric_variants,
                               /*strict=*/true, &specific_key);
      }
      if (key == -1) break;
    }
  }
  return EraseFlagged(rules, drop);
}

KnownValidRules::KnownValidRules(const std::vector<Rule>& proved, const PruneOptions& options,
                                 const ValidityOracle& is_valid)
    : options_(options), is_valid_(is_valid) {
  for (const Rule& r : proved) keys_.insert(Key(r));
}

std::string KnownValidRules::Key(const Rule& r) const {
  return options_.merge_symmetric_variants ? SymmetryKey(r, options_.max_symmetry_variants)
                                           : Canonicalize(r).ToText();
}

bool KnownValidRules::IsValid(const Rule& r, std::vector<Rule>* added) {
  std::string key = Key(r);
  if (keys_.count(key)) return true;
  // A ranked rule is also valid when the same rule without ranks is.
  if (!r.input_ranks.empty() && keys_.count(Key(WithoutRanks(r)))) return true;
  if (!is_valid_ || rejected_.count(key)) return false;
  if (!is_valid_(r)) {
    rejected_.insert(std::move(key));
    return false;
  }
  keys_.insert(std::move(key));
  Rule proved = r;
  proved.proof = ProofRecord();
  proved.proof.status = ProofStatus::kProved;
  added->push_back(std::move(proved));
  return true;
}

int64_t PruneCommonOperator(std::vector<Rule>* rules, KnownValidRules* known, int64_t* added) {
  return PruneByGeneralization(rules, known, added, &CommonOperatorGeneralizations);
}

int64_t PruneCommonOutputs(std::vector<Rule>* rules, KnownValidRules* known, int64_t* added) {
  return PruneByGeneralization(rules, known, added, &CommonOutputGeneralizations);
}

StatusOr<PruneResult> PruneRules(std::vector<Rule> rules, const PruneOptions& options,
                                 const ValidityOracle& is_valid) {
  for (size_t i = 0; i < rules.size(); ++i) {
    Status st = ValidateRule(rules[i]);
    if (!st.ok()) return st.WithContext("rule " + std::to_string(i));
    rules[i] = Normalize(rules[i]);
  }
  SortRules(&rules);
  PruneResult result;
  result.report.input = static_cast<int64_t>(rules.size());
  auto run = [&](const char* name, const std::function<int64_t(int64_t*)>& step) {
    PruneStep st;
    st.name = name;
    st.before = static_cast<int64_t>(rules.size());
    auto start = std::chrono::steady_clock::now();
    st.removed = step(&st.added);
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    st.after = static_cast<int64_t>(rules.size());
    result.report.steps.push_back(st);
  };
  if (options.proved_only) run("unproved", [&](int64_t*) { return DropUnproved(&rules); });
  run("trivial", [&](int64_t*) { return DropTrivial(&rules); });
  run("input_renaming", [&](int64_t*) { return PruneInputRenaming(&rules, options); });
  // Generalizations are checked against every rule that survived renaming (all proved unless
  // proved_only is off, in which case the caller vouches for them).
  KnownValidRules known(rules, options, is_valid);
  if (options.common_operator)
    run("common_operator",
        [&](int64_t* added) { return PruneCommonOperator(&rules, &known, added); });
  if (options.common_outputs)
    run("common_outputs",
        [&](int64_t* added) { return PruneCommonOutputs(&rules, &known, added); });
  if (options.subsumption)
    run("subsumed", [&](int64_t*) { return PruneSubsumed(&rules, options); });
  result.report.output = static_cast<int64_t>(rules.size());
  result.rules = std::move(rules);
  return result;
}

}  // namespace verisub::ruledb
