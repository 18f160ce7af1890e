// Parsing of the axiom language.
#include "specs/axiom.h"

#include <algorithm>
#include <sstream>

#include "specs/registry.h"

namespace verisub::specs {
namespace {

class AxiomBinder {
 public:
  explicit AxiomBinder(Axiom* ax) : ax_(ax) {}

  StatusOr<AxiomTerm> Bind(const TermAst& t) {
    AxiomTerm out;
    if (t.is_leaf) {
      for (size_t i = 0; i < ax_->vars.size(); ++i)
        if (ax_->vars[i].name == t.head) {
          out.var = static_cast<int>(i);
          used_[i] = true;
          return out;
        }
      return InvalidArgument("undeclared tensor variable '" + t.head + "'");
    }
    VERISUB_ASSIGN_OR_RETURN(const OpSpec* op, ResolveTermOp(t));
    out.op = op->kind;
    out.output = t.output;
    for (const ParamDesc& d : op->params) {
      auto it = std::find_if(t.params.begin(), t.params.end(),
                             [&](const auto& kv) { return kv.first == d.name; });
      std::string var;
      if (it == t.params.end()) {
        var = "?" + d.name;
      } else if (!it->second.empty() && it->second[0] == '?') {
        var = it->second;
      } else {
        Status st = ParseParamValue(d, it->second, &out.fixed);
        if (!st.ok()) return st.WithContext(op->name);
        out.param_vars.push_back(-1);
        continue;
      }
      auto idx = ParamVar(var, d);
      if (!idx.ok()) return idx.status();
      out.param_vars.push_back(*idx);
    }
    for (const TermAst& a : t.args) {
      auto arg = Bind(a);
      if (!arg.ok()) return arg.status();
      out.args.push_back(std::move(*arg));
    }
    return out;
  }

  Status Finish() {
    for (size_t i = 0; i < ax_->vars.size(); ++i)
      if (!used_[i])
        return InvalidArgument("tensor variable '" + ax_->vars[i].name + "' is never used");
    for (const AxiomParamVar& pv : ax_->param_vars)
      if (pv.domain.empty())
        return InvalidArgument("parameter variable '" + pv.name + "' has an empty domain");
    return Status::Ok();
  }

  void DeclareVars(size_t n) { used_.assign(n, false); }

 private:
  StatusOr<int> ParamVar(const std::string& name, const ParamDesc& d) {
    for (size_t i = 0; i < ax_->param_vars.size(); ++i) {
      AxiomParamVar& pv = ax_->param_vars[i];
      if (pv.name != name) continue;
      if (pv.type != d.type)
        return InvalidArgument("parameter variable '" + name + "' is used with different types");
      std::vector<int64_t> keep;
      for (int64_t v : pv.domain)
        if (std::find(d.domain.begin(), d.domain.end(), v) != d.domain.end()) keep.push_back(v);
      pv.domain = keep;
      return static_cast<int>(i);
    }
    ax_->param_vars.push_back({name, d.type, d.domain});
    return static_cast<int>(ax_->param_vars.size() - 1);
  }

  Axiom* ax_;
  std::vector<bool> used_;
};

StatusOr<Axiom> ParseAxiomLine(const std::string& line) {
  Axiom ax;
  ax.text = line;
  size_t pos = 0;
  while (pos < line.size() && !std::isspace(static_cast<unsigned char>(line[pos]))) ++pos;
  ax.name = line.substr(0, pos);
  size_t open = line.find('(', pos), close = line.find(')', pos);
  if (open == std::string::npos || close == std::string::npos || close < open)
    return InvalidArgument("expected '(variables)' after the axiom name");
  std::istringstream vars(line.substr(open + 1, close - open - 1));
  std::string v;
  while (vars >> v) {
    AxiomTensorVar tv;
    size_t colon = v.find(':');
    tv.name = v.substr(0, colon);
    if (colon == std::string::npos) {
      tv.ranks = {1, 2, 3, 4};
    } else {
      tv.ranks_declared = true;
      std::istringstream ranks(v.substr(colon + 1));
      std::string r;
      while (std::getline(ranks, r, '|')) {
        if (r.size() != 1 || !std::isdigit(static_cast<unsigned char>(r[0])) ||
            r[0] - '0' > kMaxRank)
          return InvalidArgument("bad rank '" + r + "' for variable '" + tv.name + "'");
        tv.ranks.push_back(r[0] - '0');
      }
    }
    ax.vars.push_back(tv);
  }
  AxiomBinder binder(&ax);
  binder.DeclareVars(ax.vars.size());
  std::string_view rest(line);
  pos = close + 1;
  auto lhs = ParseTerm(rest, &pos);
  if (!lhs.ok()) return lhs.status();
  while (pos < rest.size() && std::isspace(static_cast<unsigned char>(rest[pos]))) ++pos;
  if (pos >= rest.size() || rest[pos] != '=')
    return InvalidArgument("expected '=' between the two sides");
  ++pos;
  auto rhs = ParseTerm(rest, &pos);
  if (!rhs.ok()) return rhs.status();
  while (pos < rest.size() && std::isspace(static_cast<unsigned char>(rest[pos]))) ++pos;
  if (pos != rest.size()) return InvalidArgument("unexpected text after the right-hand side");
  auto l = binder.Bind(*lhs);
  if (!l.ok()) return l.status();
  auto r = binder.Bind(*rhs);
  if (!r.ok()) return r.status();
  ax.lhs = std::move(*l);
  ax.rhs = std::move(*r);
  VERISUB_RETURN_IF_ERROR(binder.Finish());
  return ax;
}

}  // namespace

std::vector<std::vector<int64_t>> Axiom::ParamAssignments() const {
  std::vector<std::vector<int64_t>> out = {{}};
  for (const AxiomParamVar& pv : param_vars) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& prefix : out)
      for (int64_t v : pv.domain) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    out = std::move(next);
  }
  return out;
}

StatusOr<std::vector<Axiom>> ParseAxioms(const std::string& owner, const std::string& text) {
  std::vector<Axiom> out;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    auto ax = ParseAxiomLine(line.substr(first));
    if (!ax.ok())
      return ax.status().WithContext("axioms of '" + owner + "', line " + std::to_string(line_no));
    ax->owner = owner;
    ax->line = line_no;
    for (const Axiom& prev : out)
      if (prev.name == ax->name)
        return InvalidArgument("axioms of '" + owner + "': duplicate axiom name '" + ax->name +
                               "'");
    out.push_back(std::move(*ax));
  }
  return out;
}

StatusOr<std::vector<Axiom>> AllAxioms() {
  std::vector<Axiom> all;
  for (const OpSpec& op : AllOps()) {
    auto axs = ParseAxioms(op.name, op.axioms);
    if (!axs.ok()) return axs.status();
    for (Axiom& a : *axs) {
      for (const Axiom& prev : all)
        if (prev.name == a.name)
          return InvalidArgument("axiom '" + a.name + "' is defined by both '" + prev.owner +
                                 "' and '" + a.owner + "'");
      all.push_back(std::move(a));
    }
  }
  return all;
}

Params ResolveParams(const AxiomTerm& t, const std::vector<int64_t>& assignment) {
  Params p = t.fixed;
  const OpSpec& op = GetOp(t.op);
  for (size_t i = 0; i < op.params.size(); ++i)
    if (t.param_vars[i] >= 0) p[op.params[i].slot] = assignment[t.param_vars[i]];
  return p;
}

std::string FormatAxiomTerm(const Axiom& ax, const AxiomTerm& t,
                            const std::vector<int64_t>* assignment) {
  if (t.var >= 0) return ax.vars[t.var].name;
  const OpSpec& op = GetOp(t.op);
  std::string s = "(" + op.name;
  if (t.output) s += "." + std::to_string(t.output);
  if (!op.params.empty()) {
    Params p = assignment ? ResolveParams(t, *assignment) : t.fixed;
    s += "[";
    for (size_t i = 0; i < op.params.size(); ++i) {
      s += (i ? "," : "") + op.params[i].name + "=";
      if (t.param_vars[i] >= 0 && !assignment)
        s += ax.param_vars[t.param_vars[i]].name;
      else
        s += FormatParamValue(op.params[i], p);
    }
    s += "]";
  }
  for (const AxiomTerm& a : t.args) s += " " + FormatAxiomTerm(ax, a, assignment);
  return s + ")";
}

}  // namespace verisub::specs
