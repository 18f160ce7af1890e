// Rules: canonical form, text, parsing and validation.
#include "ruledb/rule.h"

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "specs/registry.h"
#include "specs/term.h"

namespace verisub::ruledb {
namespace {

// Rebuilds a pattern visiting outputs left to right, each node's inputs left to right
// (post-order), numbering inputs by first visit through `input_map`.
class Renumberer {
 public:
  explicit Renumberer(std::vector<int>* input_map) : input_map_(input_map) {}

  PatternGraph Run(const PatternGraph& g) {
    g_ = &g;
    out_ = PatternGraph();
    node_map_.assign(g.nodes.size(), -1);
    for (const ValueRef& v : g.outputs) out_.outputs.push_back(Visit(v));
    return out_;
  }

 private:
  ValueRef Visit(ValueRef v) {
    if (v.is_input()) {
      if ((*input_map_)[v.index] < 0) {
        int next = 0;
        for (int m : *input_map_) next += m >= 0;
        (*input_map_)[v.index] = next;
      }
      return {ValueRef::kInput, (*input_map_)[v.index]};
    }
    if (node_map_[v.node] < 0) {
      PatternNode n = g_->nodes[v.node];
      for (ValueRef& in : n.inputs) in = Visit(in);
      node_map_[v.node] = static_cast<int>(out_.nodes.size());
      out_.nodes.push_back(std::move(n));
    }
    return {node_map_[v.node], v.index};
  }

  const PatternGraph* g_ = nullptr;
  PatternGraph out_;
  std::vector<int> node_map_;
  std::vector<int>* input_map_;
};

// Builds pattern nodes from parsed terms, merging identical subterms.
class PatternBuilder {
 public:
  explicit PatternBuilder(std::map<std::string, int>* inputs) : inputs_(inputs) {}

  StatusOr<ValueRef> Add(const specs::TermAst& t) {
    if (t.is_leaf) {
      if (t.head.size() < 2 || t.head[0] != '?')
        return InvalidArgument("input '" + t.head + "' must be written ?name");
      auto it = inputs_->find(t.head);
      if (it == inputs_->end())
        it = inputs_->emplace(t.head, static_cast<int>(inputs_->size())).first;
      return ValueRef{ValueRef::kInput, it->second};
    }
    const specs::OpSpec* op = specs::FindOp(t.head);
    if (!op) return InvalidArgument("unknown operator '" + t.head + "'");
    if (static_cast<int>(t.args.size()) != op->num_inputs)
      return InvalidArgument("'" + op->name + "' takes " + std::to_string(op->num_inputs) +
                             " inputs, got " + std::to_string(t.args.size()));
    if (t.output >= op->num_outputs)
      return InvalidArgument("'" + op->name + "' has no output " + std::to_string(t.output));
    PatternNode node;
    node.op = op->kind;
    for (const auto& [key, value] : t.params) {
      const specs::ParamDesc* d = op->FindParam(key);
      if (!d) return InvalidArgument("'" + op->name + "' has no parameter '" + key + "'");
      Status st = specs::ParseParamValue(*d, value, &node.params);
      if (!st.ok()) return st.WithContext(op->name);
    }
    if (t.params.size() != op->params.size())
      return InvalidArgument("'" + op->name + "' needs all of its " +
                             std::to_string(op->params.size()) + " parameters written out");
    for (const specs::TermAst& a : t.args) {
      auto v = Add(a);
      if (!v.ok()) return v.status();
      node.inputs.push_back(*v);
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i] == node) return ValueRef{static_cast<int>(i), t.output};
    g_.nodes.push_back(std::move(node));
    return ValueRef{static_cast<int>(g_.nodes.size() - 1), t.output};
  }

  PatternGraph& graph() { return g_; }

 private:
  std::map<std::string, int>* inputs_;
  PatternGraph g_;
};

StatusOr<PatternGraph> ParseSide(std::string_view text, std::map<std::string, int>* inputs,
                                 const char* side) {
  PatternBuilder b(inputs);
  size_t start = 0;
  while (true) {
    size_t semi = text.find(';', start);
    std::string_view part =
        text.substr(start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
    auto ast = specs::ParseTermString(part);
    if (!ast.ok())
      return ast.status().WithContext(std::string(side) + " output " +
                                      std::to_string(b.graph().outputs.size()));
    auto v = b.Add(*ast);
    if (!v.ok()) return v.status().WithContext(side);
    b.graph().outputs.push_back(*v);
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  return std::move(b.graph());
}

}  // namespace

const char* ProofStatusName(ProofStatus s) {
  switch (s) {
    case ProofStatus::kUnchecked:
      return "unchecked";
    case ProofStatus::kProved:
      return "proved";
    case ProofStatus::kNotProved:
      return "not_proved";
    case ProofStatus::kUnknown:
      return "unknown";
    case ProofStatus::kTimeout:
      return "timeout";
    case ProofStatus::kError:
      return "error";
  }
  return "?";
}

std::string InputName(int i) {
  std::string s = "?";
  s += static_cast<char>('a' + i % 26);
  if (i >= 26) s += std::to_string(i / 26);
  return s;
}

Rule Canonicalize(const Rule& r) {
  Rule out;
  out.proof = r.proof;
  std::vector<int> input_map(std::max({r.num_inputs, r.src.NumInputsUsed(), r.dst.NumInputsUsed()}),
                             -1);
  out.src = Renumberer(&input_map).Run(r.src);
  out.dst = Renumberer(&input_map).Run(r.dst);
  for (int m : input_map) out.num_inputs += m >= 0;
  if (!r.input_ranks.empty()) {
    out.input_ranks.assign(out.num_inputs, -1);
    for (size_t i = 0; i < input_map.size() && i < r.input_ranks.size(); ++i)
      if (input_map[i] >= 0) out.input_ranks[input_map[i]] = r.input_ranks[i];
  }
  return out;
}

std::string Rule::ToText() const {
  std::vector<std::string> names;
  for (int i = 0; i < num_inputs; ++i) names.push_back(InputName(i));
  return FormatPattern(src, names) + " => " + FormatPattern(dst, names) +
         InputRanksText(input_ranks);
}

std::string InputRanksText(const std::vector<int>& input_ranks) {
  if (input_ranks.empty()) return "";
  std::string s = " where";
  for (size_t i = 0; i < input_ranks.size(); ++i)
    s += " " + InputName(static_cast<int>(i)) + ":" + std::to_string(input_ranks[i]);
  return s;
}

std::pair<std::string_view, std::string_view> SplitWhereClause(std::string_view text) {
  constexpr std::string_view kWhere = "where";
  for (size_t pos = text.find(kWhere); pos != std::string_view::npos;
       pos = text.find(kWhere, pos + 1)) {
    size_t end = pos + kWhere.size();
    bool word_start = pos > 0 && std::isspace(static_cast<unsigned char>(text[pos - 1]));
    bool word_end = end == text.size() || std::isspace(static_cast<unsigned char>(text[end]));
    if (word_start && word_end) return {text.substr(0, pos), text.substr(end)};
  }
  return {text, {}};
}

StatusOr<std::vector<int>> ParseInputRanks(std::string_view clause,
                                           const std::map<std::string, int>& inputs) {
  std::vector<int> ranks(inputs.size(), -1);
  size_t pos = 0;
  while (true) {
    while (pos < clause.size() && std::isspace(static_cast<unsigned char>(clause[pos]))) ++pos;
    if (pos == clause.size()) break;
    size_t end = pos;
    while (end < clause.size() && !std::isspace(static_cast<unsigned char>(clause[end]))) ++end;
    std::string_view item = clause.substr(pos, end - pos);
    pos = end;
    size_t colon = item.rfind(':');
    if (colon == std::string_view::npos)
      return InvalidArgument("where: expected ?input:rank, got '" + std::string(item) + "'");
    auto it = inputs.find(std::string(item.substr(0, colon)));
    if (it == inputs.end())
      return InvalidArgument("where: '" + std::string(item.substr(0, colon)) +
                             "' is not an input of the rule");
    std::string_view digits = item.substr(colon + 1);
    if (digits.size() != 1 || digits[0] < '0' || digits[0] - '0' > specs::kMaxRank)
      return InvalidArgument("where: bad rank '" + std::string(digits) + "' for " + it->first);
    if (ranks[it->second] >= 0) return InvalidArgument("where: " + it->first + " is given twice");
    ranks[it->second] = digits[0] - '0';
  }
  for (const auto& [name, index] : inputs)
    if (ranks[index] < 0) return InvalidArgument("where: no rank for input " + name);
  return ranks;
}

std::string Rule::Id() const {
  std::string text = ToText();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())));
  return buf;
}

namespace {

// `ranks_by_name`, when given, supplies the input ranks instead of a where clause.
StatusOr<Rule> ParseRuleText(std::string_view full_text,
                             const std::map<std::string, int>* ranks_by_name) {
  auto [text, where] = SplitWhereClause(full_text);
  if (ranks_by_name && where.data()) return InvalidArgument("unexpected where clause");
  size_t arrow = text.find("=>");
  if (arrow == std::string_view::npos) return InvalidArgument("expected 'source => target'");
  if (text.find("=>", arrow + 2) != std::string_view::npos)
    return InvalidArgument("more than one '=>'");
  std::map<std::string, int> inputs;
  auto src = ParseSide(text.substr(0, arrow), &inputs, "source");
  if (!src.ok()) return src.status();
  size_t src_inputs = inputs.size();
  auto dst = ParseSide(text.substr(arrow + 2), &inputs, "target");
  if (!dst.ok()) return dst.status();
  if (inputs.size() != src_inputs)
    return InvalidArgument("the target uses an input the source does not have");
  Rule r;
  r.num_inputs = static_cast<int>(inputs.size());
  r.src = std::move(*src);
  r.dst = std::move(*dst);
  if (where.data()) {
    auto ranks = ParseInputRanks(where, inputs);
    if (!ranks.ok()) return ranks.status();
    r.input_ranks = std::move(*ranks);
  } else if (ranks_by_name) {
    r.input_ranks.assign(inputs.size(), -1);
    for (const auto& [name, index] : inputs) {
      auto it = ranks_by_name->find(name);
      if (it == ranks_by_name->end()) return InvalidArgument("no rank for input " + name);
      r.input_ranks[index] = it->second;
    }
  }
  VERISUB_RETURN_IF_ERROR(ValidateRule(r));
  return Canonicalize(r);
}

}  // namespace

StatusOr<Rule> ParseRule(std::string_view text) { return ParseRuleText(text, nullptr); }

StatusOr<Rule> ParseRuleWithRanks(std::string_view text,
                                  const std::map<std::string, int>& ranks_by_name) {
  return ParseRuleText(text, &ranks_by_name);
}

Status ValidateRule(const Rule& r) {
  if (!r.input_ranks.empty() && static_cast<int>(r.input_ranks.size()) != r.num_inputs)
    return InvalidArgument(std::to_string(r.input_ranks.size()) + " input ranks for " +
                           std::to_string(r.num_inputs) + " inputs");
  for (int rank : r.input_ranks)
    if (rank < 0 || rank > specs::kMaxRank)
      return InvalidArgument("input rank " + std::to_string(rank) + " out of range");
  if (r.src.outputs.size() != r.dst.outputs.size())
    return InvalidArgument("source has " + std::to_string(r.src.outputs.size()) +
                           " outputs, target has " + std::to_string(r.dst.outputs.size()));
  if (r.src.outputs.empty()) return InvalidArgument("a rule needs at least one output");
  std::vector<bool> src_uses(r.num_inputs, false);
  for (const PatternGraph* g : {&r.src, &r.dst}) {
    const char* side = g == &r.src ? "source" : "target";
    auto check_ref = [&](ValueRef v, size_t before) -> Status {
      if (v.is_input()) {
        if (v.index < 0 || v.index >= r.num_inputs)
          return InvalidArgument(std::string(side) + ": input index out of range");
        if (g == &r.src)
          src_uses[v.index] = true;
        else if (!src_uses[v.index])
          return InvalidArgument("target uses input " + InputName(v.index) +
                                 " that the source does not");
        return Status::Ok();
      }
      if (v.node < 0 || static_cast<size_t>(v.node) >= before)
        return InvalidArgument(std::string(side) + ": nodes are not in topological order");
      if (v.index < 0 || v.index >= specs::GetOp(g->nodes[v.node].op).num_outputs)
        return InvalidArgument(std::string(side) + ": output index out of range");
      return Status::Ok();
    };
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      const PatternNode& n = g->nodes[i];
      if (static_cast<int>(n.op) < 0 || n.op >= specs::OpKind::kNumOps)
        return InvalidArgument(std::string(side) + ": unknown operator");
      const specs::OpSpec& op = specs::GetOp(n.op);
      if (static_cast<int>(n.inputs.size()) != op.num_inputs)
        return InvalidArgument(std::string(side) + ": '" + op.name +
                               "' has the wrong number of inputs");
      for (const specs::ParamDesc& d : op.params) {
        Status st = specs::CheckParamValue(d, n.params);
        if (!st.ok()) return st.WithContext(std::string(side) + ": " + op.name);
      }
      for (const ValueRef& v : n.inputs) VERISUB_RETURN_IF_ERROR(check_ref(v, i));
    }
    for (const ValueRef& v : g->outputs) VERISUB_RETURN_IF_ERROR(check_ref(v, g->nodes.size()));
  }
  return Status::Ok();
}

}  // namespace verisub::ruledb
