// Common-subgraph generalizations and rule instances.
#include "ruledb/generalize.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "ruledb/pattern_ranks.h"
#include "ruledb/rule_symmetry.h"
#include "specs/registry.h"

namespace verisub::ruledb {
namespace {

std::vector<std::string> InputNames(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(InputName(i));
  return names;
}

std::string JoinOutputs(const std::vector<std::string>& terms) {
  std::string s;
  for (size_t i = 0; i < terms.size(); ++i) s += (i ? " ; " : "") + terms[i];
  return s;
}

// Parses `src => dst`; nullopt when it is not a valid rule (e.g. the target would use an input
// the source lost) or when both sides are the same (a trivial rule generalizes nothing). With
// `ranks` (input name -> rank), the rule is ranked: a generalization of a ranked rule holds
// only where the terms it abstracts have the ranks they had there.
std::optional<Rule> MakeRule(const std::string& src, const std::string& dst,
                             const std::map<std::string, int>* ranks = nullptr) {
  if (src == dst) return std::nullopt;
  std::string text = src + " => " + dst;
  auto r = ranks ? ParseRuleWithRanks(text, *ranks) : ParseRule(text);
  if (!r.ok()) return std::nullopt;
  return std::move(*r);
}

// Input name -> rank of a ranked rule (empty for a rule without ranks).
std::map<std::string, int> RanksByName(const Rule& r, const std::vector<std::string>& names) {
  std::map<std::string, int> out;
  for (size_t i = 0; i < r.input_ranks.size(); ++i) out[names[i]] = r.input_ranks[i];
  return out;
}

Rule WithoutRanks(const Rule& r) {
  Rule out = r;
  out.input_ranks.clear();
  return out;
}

bool SameOperator(const PatternNode& a, const PatternNode& b) {
  return a.op == b.op && a.params == b.params;
}

// Term matching of a general pattern against a specific one: binds general inputs to values of
// the specific source, trying operands of commutative operators in both orders, and calls
// `accept` on every complete binding until it returns true.
using Binding = std::vector<std::optional<ValueRef>>;
using Todo = std::vector<std::pair<ValueRef, ValueRef>>;

bool Match(const PatternGraph& g, const PatternGraph& s, Todo todo, Binding binding,
           const std::function<bool(const Binding&)>& accept) {
  while (!todo.empty()) {
    auto [gv, sv] = todo.back();
    todo.pop_back();
    if (gv.is_input()) {
      std::optional<ValueRef>& b = binding[gv.index];
      if (!b) {
        b = sv;
      } else if (*b != sv) {
        return false;
      }
      continue;
    }
    if (sv.is_input() || gv.index != sv.index) return false;
    const PatternNode& gn = g.nodes[gv.node];
    const PatternNode& sn = s.nodes[sv.node];
    if (!SameOperator(gn, sn)) return false;
    if (specs::GetOp(gn.op).commutative) {
      Todo swapped = todo;
      swapped.push_back({gn.inputs[0], sn.inputs[1]});
      swapped.push_back({gn.inputs[1], sn.inputs[0]});
      if (Match(g, s, std::move(swapped), binding, accept)) return true;
    }
    for (size_t k = 0; k < gn.inputs.size(); ++k) todo.push_back({gn.inputs[k], sn.inputs[k]});
  }
  return accept(binding);
}

}  // namespace

std::vector<Rule> CommonOperatorGeneralizations(const Rule& r) {
  std::vector<Rule> out;
  const std::vector<std::string> names = InputNames(r.num_inputs);
  const bool ranked = !r.input_ranks.empty();
  const PatternRanks src_ranks(r.src, r.input_ranks);
  for (size_t i = 0; i < r.src.nodes.size(); ++i) {
    const PatternNode& n = r.src.nodes[i];
    if (!std::all_of(n.inputs.begin(), n.inputs.end(), [](ValueRef v) { return v.is_input(); }))
      continue;
    // The fresh inputs `?new<k>` stand for the operator's outputs, with their ranks.
    std::map<std::string, int> ranks = RanksByName(r, names);
    bool known = true;
    for (int k = 0; ranked && k < specs::GetOp(n.op).num_outputs; ++k) {
      ranks["?new" + std::to_string(k)] = src_ranks.Rank({static_cast<int>(i), k});
      known = known && ranks["?new" + std::to_string(k)] >= 0;
    }
    if (!known) continue;
    for (size_t j = 0; j < r.dst.nodes.size(); ++j) {
      if (!(r.dst.nodes[j] == n)) continue;
      std::vector<std::string> src, dst;
      for (ValueRef v : r.src.outputs)
        src.push_back(FormatValue(r.src, v, names, static_cast<int>(i)));
      for (ValueRef v : r.dst.outputs)
        dst.push_back(FormatValue(r.dst, v, names, static_cast<int>(j)));
      if (auto g = MakeRule(JoinOutputs(src), JoinOutputs(dst), ranked ? &ranks : nullptr))
        out.push_back(std::move(*g));
    }
  }
  return out;
}

std::vector<Rule> CommonOutputGeneralizations(const Rule& r) {
  const std::vector<std::string> names = InputNames(r.num_inputs);
  // Each output pair becomes a list of alternatives, each a list of new (src, dst) pairs.
  using Pairs = std::vector<std::pair<ValueRef, ValueRef>>;
  std::vector<std::vector<Pairs>> choices;
  bool stripped = false;
  for (size_t k = 0; k < r.src.outputs.size(); ++k) {
    ValueRef s = r.src.outputs[k], d = r.dst.outputs[k];
    if (FormatValue(r.src, s, names) == FormatValue(r.dst, d, names)) {
      choices.push_back({Pairs{}});
      continue;
    }
    if (s.is_input() || d.is_input() || s.index != d.index) return {};
    const PatternNode& sn = r.src.nodes[s.node];
    const PatternNode& dn = r.dst.nodes[d.node];
    if (!SameOperator(sn, dn)) return {};
    stripped = true;
    std::vector<Pairs> alternatives(1);
    for (size_t a = 0; a < sn.inputs.size(); ++a)
      alternatives[0].push_back({sn.inputs[a], dn.inputs[a]});
    if (specs::GetOp(sn.op).commutative) {
      Pairs swapped = alternatives[0];
      std::swap(swapped[0].second, swapped[1].second);
      alternatives.push_back(std::move(swapped));
    }
    choices.push_back(std::move(alternatives));
  }
  if (!stripped) return {};
  // The operands that become outputs are terms over the same inputs: their ranks carry over.
  const std::map<std::string, int> ranks = RanksByName(r, names);
  const std::map<std::string, int>* ranks_or_null = r.input_ranks.empty() ? nullptr : &ranks;
  std::vector<Rule> out;
  std::set<std::string> seen;
  std::vector<size_t> pick(choices.size(), 0);
  while (true) {
    std::vector<std::string> src, dst;
    std::set<std::pair<std::string, std::string>> pairs;
    for (size_t k = 0; k < choices.size(); ++k)
      for (const auto& [s, d] : choices[k][pick[k]]) {
        std::string st = FormatValue(r.src, s, names), dt = FormatValue(r.dst, d, names);
        if (st == dt || !pairs.insert({st, dt}).second) continue;
        src.push_back(std::move(st));
        dst.push_back(std::move(dt));
      }
    if (!src.empty())
      if (auto g = MakeRule(JoinOutputs(src), JoinOutputs(dst), ranks_or_null))
        if (seen.insert(g->ToText()).second) out.push_back(std::move(*g));
    size_t k = 0;
    while (k < pick.size() && ++pick[k] == choices[k].size()) pick[k++] = 0;
    if (k == pick.size()) break;
  }
  return out;
}

bool IsInstanceOf(const Rule& specific, const Rule& general, bool modulo_symmetry, bool strict,
                  std::optional<std::string>* specific_key) {
  if (specific.src.outputs.size() != general.src.outputs.size()) return false;
  // A ranked rule covers only instances whose terms bound to its inputs have its ranks: the
  // instance must be ranked itself, so that those ranks are known.
  const bool general_ranked = !general.input_ranks.empty();
  if (general_ranked && specific.input_ranks.empty()) return false;
  std::optional<PatternRanks> specific_ranks;
  if (general_ranked) specific_ranks.emplace(specific.src, specific.input_ranks);
  Todo todo;
  for (size_t k = 0; k < general.src.outputs.size(); ++k)
    todo.push_back({general.src.outputs[k], specific.src.outputs[k]});
  const std::vector<std::string> names = InputNames(specific.num_inputs);
  // Computed on the first source match only: most pairs of rules fail to match at the root.
  std::optional<std::string> local_key;
  std::optional<std::string>& want = specific_key ? *specific_key : local_key;
  // Instantiates the general target with the bound terms and compares it with the specific one.
  auto accept = [&](const Binding& binding) {
    if (strict) {
      std::set<int> targets;
      bool renaming = true;
      for (const std::optional<ValueRef>& b : binding)
        renaming = renaming && b && b->is_input() && targets.insert(b->index).second;
      if (renaming) return false;
    }
    std::vector<std::string> bound;
    for (size_t i = 0; i < binding.size(); ++i) {
      const std::optional<ValueRef>& b = binding[i];
      if (!b) return false;  // a target-only input cannot happen in a valid rule
      if (general_ranked && specific_ranks->Rank(*b) != general.input_ranks[i]) return false;
      bound.push_back(FormatValue(specific.src, *b, names));
    }
    std::vector<std::string> dst;
    for (ValueRef v : general.dst.outputs) dst.push_back(FormatValue(general.dst, v, bound));
    auto inst = ParseRule(FormatPattern(specific.src, names) + " => " + JoinOutputs(dst));
    if (!inst.ok()) return false;
    // Texts without ranks: the instance is built from text, and ranks were checked above.
    if (!want) {
      Rule plain = WithoutRanks(specific);
      want = modulo_symmetry ? SymmetryKey(plain) : Canonicalize(plain).ToText();
    }
    return (modulo_symmetry ? SymmetryKey(*inst) : inst->ToText()) == *want;
  };
  return Match(general.src, specific.src, std::move(todo), Binding(general.num_inputs), accept);
}

}  // namespace verisub::ruledb
