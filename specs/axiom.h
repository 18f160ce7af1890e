// Axioms as data: each operator file lists its properties, one per line,
//   name (x:4 w:4 s:0 y) lhs = rhs
// Tensor variables carry allowed ranks (`x:2|4`; none means 1..4). In a term, a parameter is a
// value (`activation=none`), a named variable (`axis=?a`), or omitted, which means the shared
// variable `?<parameter name>`; parameter variables range over the intersection of the domains
// of the parameters they stand for. Axioms are universally quantified over tensors and
// parameter values; verify/ proves rules from them and validates them against the kernels.
#pragma once

#include <string>
#include <vector>

#include "specs/op_spec.h"
#include "specs/term.h"

namespace verisub::specs {

struct AxiomTerm {
  int var = -1;  // tensor variable index, or -1 for an operator application
  OpKind op = OpKind::kNumOps;
  int output = 0;
  Params fixed;                 // parameter values given as constants
  std::vector<int> param_vars;  // per ParamDesc of op: parameter variable index, or -1 if fixed
  std::vector<AxiomTerm> args;
};

struct AxiomTensorVar {
  std::string name;
  std::vector<int> ranks;
  // Written with ranks (`x:2`). Without, `ranks` is 1..4 (what validation covers), and the
  // verifier applies the axiom at any rank.
  bool ranks_declared = false;
};

struct AxiomParamVar {
  std::string name;
  ParamType type = ParamType::kInt;
  std::vector<int64_t> domain;
};

struct Axiom {
  std::string name;
  std::string owner;  // operator file it comes from
  int line = 0;
  std::string text;
  std::vector<AxiomTensorVar> vars;
  std::vector<AxiomParamVar> param_vars;
  AxiomTerm lhs, rhs;

  // Every assignment of the parameter variables (cartesian product of their domains).
  std::vector<std::vector<int64_t>> ParamAssignments() const;
};

// Parses the axiom lines of one operator file; errors name the operator, line and axiom.
StatusOr<std::vector<Axiom>> ParseAxioms(const std::string& owner, const std::string& text);
// Every axiom of the operator set, in registry order.
StatusOr<std::vector<Axiom>> AllAxioms();
// Parameter values of an operator term under an assignment of the axiom's parameter variables.
Params ResolveParams(const AxiomTerm& t, const std::vector<int64_t>& assignment);
// Back to text (parameters always explicit, values substituted when an assignment is given).
std::string FormatAxiomTerm(const Axiom& ax, const AxiomTerm& t,
                            const std::vector<int64_t>* assignment = nullptr);

}  // namespace verisub::specs
