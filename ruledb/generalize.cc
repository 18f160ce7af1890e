// Common-subgraph generalizations and rule instances.
#include "ruledb/generalize.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>

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
// the source lost) or when both sides are the same (a trivial rule generalizes nothing).
std::optional<Rule> MakeRule(const std::string& src, const std::string& dst) {
  if (src == dst) return std::nullopt;
  auto r = ParseRule(src + " => " + dst);
  if (!r.ok()) return std::nullopt;
  return std::move(*r);
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
  for (size_t i = 0; i < r.src.nodes.size(); ++i) {
    const PatternNode& n = r.src.nodes[i];
    if (!std::all_of(n.inputs.begin(), n.inputs.end(), [](ValueRef v) { return v.is_input(); }))
      continue;
    for (size_t j = 0; j < r.dst.nodes.size(); ++j) {
      if (!(r.dst.nodes[j] == n)) continue;
      std::vector<std::string> src, dst;
      for (ValueRef v : r.src.outputs)
        src.push_back(FormatValue(r.src, v, names, static_cast<int>(i)));
      for (ValueRef v : r.dst.outputs)
        dst.push_back(FormatValue(r.dst, v, names, static_cast<int>(j)));
      if (auto g = MakeRule(JoinOutputs(src), JoinOutputs(dst))) out.push_back(std::move(*g));
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
      if (auto g = MakeRule(JoinOutputs(src), JoinOutputs(dst)))
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
    for (const std::optional<ValueRef>& b : binding) {
      if (!b) return false;  // a target-only input cannot happen in a valid rule
      bound.push_back(FormatValue(specific.src, *b, names));
    }
    std::vector<std::string> dst;
    for (ValueRef v : general.dst.outputs) dst.push_back(FormatValue(general.dst, v, bound));
    auto inst = ParseRule(FormatPattern(specific.src, names) + " => " + JoinOutputs(dst));
    if (!inst.ok()) return false;
    if (!want) want = modulo_symmetry ? SymmetryKey(specific) : Canonicalize(specific).ToText();
    return (modulo_symmetry ? SymmetryKey(*inst) : inst->ToText()) == *want;
  };
  return Match(general.src, specific.src, std::move(todo), Binding(general.num_inputs), accept);
}

}  // namespace verisub::ruledb
