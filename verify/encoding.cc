// Z3 encoding of operators, patterns and axioms.
#include "verify/encoding.h"

#include <algorithm>
#include <set>

#include "specs/registry.h"

namespace verisub::verify {

std::string FunctionName(specs::OpKind op, const specs::Params& params, int output) {
  const specs::OpSpec& spec = specs::GetOp(op);
  std::string name = spec.name;
  if (spec.num_outputs > 1) name += "." + std::to_string(output);
  if (!spec.params.empty()) {
    name += "[";
    for (size_t i = 0; i < spec.params.size(); ++i)
      name += (i ? "," : "") + spec.params[i].name + "=" +
              specs::FormatParamValue(spec.params[i], params);
    name += "]";
  }
  return name;
}

void CollectAxiomFunctions(const specs::AxiomTerm& t, const std::vector<int64_t>& assignment,
                           std::vector<std::string>* out) {
  if (t.var >= 0) return;
  out->push_back(FunctionName(t.op, specs::ResolveParams(t, assignment), t.output));
  for (const specs::AxiomTerm& a : t.args) CollectAxiomFunctions(a, assignment, out);
}

namespace {

void CollectVars(const specs::AxiomTerm& t, std::set<int>* vars) {
  if (t.var >= 0) {
    vars->insert(t.var);
    return;
  }
  for (const specs::AxiomTerm& a : t.args) CollectVars(a, vars);
}

bool UsableTrigger(const specs::Axiom& ax, const specs::AxiomTerm& side) {
  if (side.var >= 0) return false;
  std::set<int> vars;
  CollectVars(side, &vars);
  return vars.size() == ax.vars.size();
}

void SortUnique(std::vector<std::string>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

bool AxiomInstance::guarded() const {
  return std::any_of(guards.begin(), guards.end(),
                     [](const std::vector<int>& g) { return !g.empty(); });
}

StatusOr<std::vector<AxiomInstance>> InstantiateAxioms(const std::vector<specs::Axiom>& axioms,
                                                       FunctionRanks* functions) {
  FunctionRanks local;
  if (!functions) functions = &local;
  std::vector<AxiomInstance> out;
  for (size_t i = 0; i < axioms.size(); ++i) {
    const specs::Axiom& ax = axioms[i];
    bool lt = UsableTrigger(ax, ax.lhs), rt = UsableTrigger(ax, ax.rhs);
    if (!lt && !rt)
      return InvalidArgument("axiom '" + ax.name + "' (" + ax.owner +
                             "): neither side is an operator application over all its variables, "
                             "so it can never be instantiated");
    for (auto& assignment : ax.ParamAssignments()) {
      AxiomInstance inst;
      inst.axiom = static_cast<int>(i);
      inst.assignment = assignment;
      CollectAxiomFunctions(ax.lhs, assignment, &inst.lhs_functions);
      CollectAxiomFunctions(ax.rhs, assignment, &inst.rhs_functions);
      SortUnique(&inst.lhs_functions);
      SortUnique(&inst.rhs_functions);
      inst.lhs_trigger = lt;
      inst.rhs_trigger = rt;
      CollectAxiomSignatures(ax.lhs, assignment, functions);
      CollectAxiomSignatures(ax.rhs, assignment, functions);
      inst.guards = AxiomGuards(ax, assignment, functions);
      out.push_back(std::move(inst));
    }
  }
  return out;
}

std::vector<int> RelevantInstances(const std::vector<AxiomInstance>& instances,
                                   std::vector<std::string> functions, bool include_guarded) {
  std::set<std::string> present(functions.begin(), functions.end());
  std::vector<bool> on(instances.size(), false);
  auto all_present = [&](const std::vector<std::string>& fs) {
    for (const std::string& f : fs)
      if (!present.count(f)) return false;
    return true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < instances.size(); ++i) {
      if (on[i]) continue;
      const AxiomInstance& in = instances[i];
      if (!include_guarded && in.guarded()) continue;
      if ((in.lhs_trigger && all_present(in.lhs_functions)) ||
          (in.rhs_trigger && all_present(in.rhs_functions))) {
        on[i] = true;
        changed = true;
        present.insert(in.lhs_functions.begin(), in.lhs_functions.end());
        present.insert(in.rhs_functions.begin(), in.rhs_functions.end());
      }
    }
  }
  std::vector<int> out;
  for (size_t i = 0; i < instances.size(); ++i)
    if (on[i]) out.push_back(static_cast<int>(i));
  return out;
}

z3::expr Forall(const z3::expr_vector& vars, const std::vector<z3::expr>& triggers,
                const z3::expr& body) {
  z3::context& ctx = body.ctx();
  // The context counts references: each raw pattern is held by a z3::ast until the quantifier
  // owns it.
  std::vector<Z3_pattern> patterns;
  std::vector<z3::ast> holders;
  for (const z3::expr& t : triggers) {
    Z3_ast term = t;
    patterns.push_back(Z3_mk_pattern(ctx, 1, &term));
    ctx.check_error();
    holders.emplace_back(ctx, Z3_pattern_to_ast(ctx, patterns.back()));
  }
  std::vector<Z3_app> apps;
  for (unsigned i = 0; i < vars.size(); ++i) apps.push_back(Z3_to_app(ctx, vars[i]));
  Z3_ast q = Z3_mk_forall_const(ctx, 0, static_cast<unsigned>(apps.size()), apps.data(),
                                static_cast<unsigned>(patterns.size()), patterns.data(), body);
  ctx.check_error();
  return z3::expr(ctx, q);
}

Encoder::Encoder(z3::context& ctx)
    : ctx_(ctx), tensor_(ctx.uninterpreted_sort("Tensor")), ranks_(ctx, tensor_) {}

z3::func_decl Encoder::Function(specs::OpKind op, const specs::Params& params, int output) {
  std::string name = FunctionName(op, params, output);
  auto it = functions_.find(name);
  if (it != functions_.end()) return it->second;
  z3::sort_vector domain(ctx_);
  for (int i = 0; i < specs::GetOp(op).num_inputs; ++i) domain.push_back(tensor_);
  z3::func_decl f = ctx_.function(name.c_str(), domain, tensor_);
  functions_.emplace(name, f);
  return f;
}

std::vector<z3::expr> Encoder::EncodePattern(const ruledb::PatternGraph& g,
                                             const std::vector<z3::expr>& inputs,
                                             std::vector<std::string>* functions) {
  std::vector<std::vector<z3::expr>> values;
  auto get = [&](ruledb::ValueRef v) -> z3::expr {
    return v.is_input() ? inputs[v.index] : values[v.node][v.index];
  };
  for (const ruledb::PatternNode& n : g.nodes) {
    z3::expr_vector args(ctx_);
    for (const ruledb::ValueRef& in : n.inputs) args.push_back(get(in));
    std::vector<z3::expr> outs;
    for (int k = 0; k < specs::GetOp(n.op).num_outputs; ++k) {
      outs.push_back(Function(n.op, n.params, k)(args));
      if (functions) functions->push_back(FunctionName(n.op, n.params, k));
    }
    values.push_back(std::move(outs));
  }
  std::vector<z3::expr> out;
  for (const ruledb::ValueRef& v : g.outputs) out.push_back(get(v));
  return out;
}

z3::expr Encoder::EncodeAxiomTerm(const specs::AxiomTerm& t, const std::vector<int64_t>& assignment,
                                  const std::vector<z3::expr>& vars) {
  if (t.var >= 0) return vars[t.var];
  z3::expr_vector args(ctx_);
  for (const specs::AxiomTerm& a : t.args) args.push_back(EncodeAxiomTerm(a, assignment, vars));
  return Function(t.op, specs::ResolveParams(t, assignment), t.output)(args);
}

z3::expr Encoder::AxiomFormula(const specs::Axiom& ax, const AxiomInstance& inst) {
  std::vector<z3::expr> vars;
  z3::expr_vector bound(ctx_);
  for (const specs::AxiomTensorVar& v : ax.vars) {
    vars.push_back(ctx_.constant(v.name.c_str(), tensor_));
    bound.push_back(vars.back());
  }
  z3::expr lhs = EncodeAxiomTerm(ax.lhs, inst.assignment, vars);
  z3::expr rhs = EncodeAxiomTerm(ax.rhs, inst.assignment, vars);
  std::vector<z3::expr> triggers;
  if (inst.lhs_trigger) triggers.push_back(lhs);
  if (inst.rhs_trigger) triggers.push_back(rhs);
  z3::expr body = lhs == rhs;
  z3::expr_vector guard(ctx_);
  for (size_t v = 0; v < vars.size(); ++v)
    if (!inst.guards.empty() && !inst.guards[v].empty())
      guard.push_back(ranks_.RankIn(vars[v], inst.guards[v]));
  if (!guard.empty()) body = z3::implies(z3::mk_and(guard), body);
  return Forall(bound, triggers, body);
}

}  // namespace verisub::verify
