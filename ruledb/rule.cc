// Rules: canonical form, text, parsing and validation.
#include "ruledb/rule.h"

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "ruledb/rule_text.h"
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
  explicit PatternBuilder(const std::map<std::string, int>& inputs) : inputs_(inputs) {}

  StatusOr<ValueRef> Add(const specs::TermAst& t) {
    if (t.is_leaf) return ValueRef{ValueRef::kInput, inputs_.at(t.head)};
    VERISUB_ASSIGN_OR_RETURN(const specs::OpSpec* op, specs::ResolveTermOp(t));
    PatternNode node;
    node.op = op->kind;
    for (const auto& [key, value] : t.params) {
      Status st = specs::ParseParamValue(*op->FindParam(key), value, &node.params);
      if (!st.ok()) return st.WithContext(op->name);
    }
    if (t.params.size() != op->params.size())
      return InvalidArgument("'" + op->name + "' needs all of its " +
                             std::to_string(op->params.size()) + " parameters written out");
    for (const specs::TermAst& a : t.args) {
      VERISUB_ASSIGN_OR_RETURN(ValueRef v, Add(a));
      node.inputs.push_back(v);
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i] == node) return ValueRef{static_cast<int>(i), t.output};
    g_.nodes.push_back(std::move(node));
    return ValueRef{static_cast<int>(g_.nodes.size() - 1), t.output};
  }

  PatternGraph& graph() { return g_; }

 private:
  const std::map<std::string, int>& inputs_;
  PatternGraph g_;
};

StatusOr<PatternGraph> BuildSide(const std::vector<specs::TermAst>& terms,
                                 const std::map<std::string, int>& inputs, const char* side) {
  PatternBuilder b(inputs);
  for (const specs::TermAst& t : terms) {
    auto v = b.Add(t);
    if (!v.ok()) return v.status().WithContext(side);
    b.graph().outputs.push_back(*v);
  }
  return std::move(b.graph());
}

}  // namespace

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

std::string Rule::Id() const { return RuleIdOfText(ToText()); }

std::string RuleIdOfText(std::string_view text) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())));
  return buf;
}

namespace {

// `ranks_by_name`, when given, supplies the input ranks instead of a where clause.
StatusOr<Rule> ParseRuleText(std::string_view text,
                             const std::map<std::string, int>* ranks_by_name) {
  VERISUB_ASSIGN_OR_RETURN(RuleTextAst ast, ParseRuleTextAst(text));
  if (ranks_by_name && ast.input_ranks) return InvalidArgument("unexpected where clause");
  auto src = BuildSide(ast.src, ast.inputs, "source");
  if (!src.ok()) return src.status();
  auto dst = BuildSide(ast.dst, ast.inputs, "target");
  if (!dst.ok()) return dst.status();
  if (static_cast<int>(ast.inputs.size()) != ast.src_inputs)
    return InvalidArgument("the target uses an input the source does not have");
  Rule r;
  r.num_inputs = static_cast<int>(ast.inputs.size());
  r.src = std::move(*src);
  r.dst = std::move(*dst);
  if (ast.input_ranks) {
    r.input_ranks = std::move(*ast.input_ranks);
  } else if (ranks_by_name) {
    r.input_ranks.assign(ast.inputs.size(), -1);
    for (const auto& [name, index] : ast.inputs) {
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
