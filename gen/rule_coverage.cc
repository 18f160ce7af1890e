// Rule matching up to renaming, orientation, output order and commutative operand order.
#include "gen/rule_coverage.h"

#include <algorithm>
#include <numeric>

#include "ruledb/rule_list.h"
#include "specs/registry.h"

namespace verisub::gen {
namespace {

// A term's text with inputs named by `names` and the operands of commutative operators sorted.
std::string NormalText(const ruledb::PatternGraph& g, ruledb::ValueRef v,
                       const std::vector<std::string>& names) {
  if (v.is_input()) return names[v.index];
  const ruledb::PatternNode& n = g.nodes[v.node];
  const specs::OpSpec& op = specs::GetOp(n.op);
  std::string s = "(" + op.name + "." + std::to_string(v.index);
  for (const specs::ParamDesc& d : op.params) s += " " + specs::FormatParamValue(d, n.params);
  std::vector<std::string> args;
  for (const ruledb::ValueRef& in : n.inputs) args.push_back(NormalText(g, in, names));
  if (op.commutative) std::sort(args.begin(), args.end());
  for (const std::string& a : args) s += " " + a;
  return s + ")";
}

// Output pairs, each side order and the pairs sorted, so orientation and output order vanish.
std::string Key(const ruledb::Rule& r, const std::vector<std::string>& names) {
  std::vector<std::string> pairs;
  for (size_t i = 0; i < r.src.outputs.size(); ++i) {
    std::string a = NormalText(r.src, r.src.outputs[i], names);
    std::string b = NormalText(r.dst, r.dst.outputs[i], names);
    pairs.push_back(a < b ? a + " = " + b : b + " = " + a);
  }
  std::sort(pairs.begin(), pairs.end());
  std::string key;
  for (const std::string& p : pairs) key += p + " ; ";
  return key;
}

std::vector<std::string> Names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("?" + std::to_string(i));
  std::sort(names.begin(), names.end());  // the first permutation
  return names;
}

// `a => b` or `b => a`, whichever is a valid rule (the target's inputs among the source's).
StatusOr<ruledb::Rule> EitherWay(const std::string& a, const std::string& b) {
  for (const std::string& text : {a + " => " + b, b + " => " + a}) {
    auto r = ruledb::ParseRule(text);
    if (r.ok() && ruledb::ValidateRule(*r).ok()) return r;
  }
  return InvalidArgument("neither '" + a + " => " + b + "' nor its reverse is a valid rule");
}

std::string Trim(std::string_view s) {
  size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(" \t\r") + 1 - first));
}

}  // namespace

RuleIndex::RuleIndex(const std::vector<ruledb::Rule>& candidates) {
  for (const ruledb::Rule& r : candidates) keys_.insert(Key(r, Names(r.num_inputs)));
}

RuleIndex::RuleIndex(const std::vector<std::string>& candidates) {
  for (const std::string& text : candidates) {
    auto r = ruledb::ParseRule(text);
    VERISUB_CHECK(r.ok());
    keys_.insert(Key(*r, Names(r->num_inputs)));
  }
}

bool RuleIndex::Contains(const ruledb::Rule& rule) const {
  // Candidates name their inputs canonically; try every naming of the rule's inputs.
  std::vector<std::string> names = Names(rule.num_inputs);
  do {
    if (keys_.count(Key(rule, names))) return true;
  } while (std::next_permutation(names.begin(), names.end()));
  return false;
}

std::vector<std::string> MissingRules(const std::vector<ruledb::Rule>& candidates,
                                      const std::vector<ruledb::Rule>& reference) {
  RuleIndex index(candidates);
  std::vector<std::string> missing;
  for (const ruledb::Rule& r : reference)
    if (!index.Contains(r)) missing.push_back(r.ToText());
  return missing;
}

StatusOr<std::vector<ReferenceRule>> ParseReferenceRules(std::string_view text,
                                                         const std::string& source) {
  std::vector<ReferenceRule> out;
  Status st = ruledb::ForEachListLine(text, source, [&](std::string_view view) -> Status {
    std::string line(view);
    ReferenceRule ref;
    ref.text = line;
    size_t via = line.find(" via ");
    auto rule = ruledb::ParseRule(line.substr(0, via));
    if (!rule.ok()) return rule.status();
    VERISUB_RETURN_IF_ERROR(ruledb::ValidateRule(*rule));
    ref.rule = std::move(*rule);
    if (via != std::string::npos) {
      size_t arrow = line.find(" => ");
      std::string c = Trim(line.substr(via + 5));
      for (const std::string& side :
           {Trim(line.substr(0, arrow)), Trim(line.substr(arrow + 4, via - arrow - 4))}) {
        auto r = EitherWay(side, c);
        if (!r.ok()) return r.status();
        ref.via.push_back(std::move(*r));
      }
    }
    out.push_back(std::move(ref));
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

CoverageReport CheckCoverage(const RuleIndex& index, const std::vector<ReferenceRule>& reference) {
  CoverageReport report;
  for (const ReferenceRule& ref : reference) {
    if (index.Contains(ref.rule)) {
      ++report.candidates;
      continue;
    }
    bool via = !ref.via.empty();
    for (const ruledb::Rule& r : ref.via) via = via && index.Contains(r);
    (via ? report.via : report.missing).push_back(ref.text);
  }
  return report;
}

}  // namespace verisub::gen
