// The Z3 encoding shared by proofs, redundancy checks and dumps: an uninterpreted Tensor sort,
// one uninterpreted function per operator instance (operator, parameter values, output), and
// every axiom instantiated per parameter assignment as a quantified equation with triggers.
#pragma once

#include <z3++.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "ruledb/pattern.h"
#include "specs/axiom.h"
#include "verify/rank_encoding.h"

namespace verisub::verify {

// The name of the uninterpreted function of one operator instance, e.g.
// `conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]` or `split.1[axis=0]`.
// Two instances share a function exactly when their names are equal.
std::string FunctionName(specs::OpKind op, const specs::Params& params, int output);

// One axiom under one assignment of its parameter variables, in context-free form: which
// functions each side mentions (for relevance filtering) and whether it can serve as a trigger.
struct AxiomInstance {
  int axiom = 0;  // index into the axiom list
  std::vector<int64_t> assignment;
  std::vector<std::string> lhs_functions, rhs_functions;  // sorted, unique
  bool lhs_trigger = false, rhs_trigger = false;          // side is an application over all vars
  // Per tensor variable: the ranks its guard allows, or empty (AxiomGuards).
  std::vector<std::vector<int>> guards;
  bool guarded() const;
};

// Every instance of every axiom, with its guards; `functions`, when given, receives the rank
// cases of every function the instances apply. An axiom neither side of which can be a trigger
// (a bare variable, or a side missing a variable) is an error: it could never be instantiated.
StatusOr<std::vector<AxiomInstance>> InstantiateAxioms(const std::vector<specs::Axiom>& axioms,
                                                       FunctionRanks* functions = nullptr);

// Indices of the instances that E-matching could ever fire for a query mentioning `functions`:
// the fixed point of "a trigger's functions all occur" (the other side's functions then occur
// too). Dropping the others never loses a proof Z3's E-matching could find, and keeps each query
// small. Without `include_guarded`, guarded instances are left out (a query that asserts no
// ranks can never discharge a guard).
std::vector<int> RelevantInstances(const std::vector<AxiomInstance>& instances,
                                   std::vector<std::string> functions, bool include_guarded = true);

// forall vars. body, with one alternative trigger (pattern) per term of `triggers`.
z3::expr Forall(const z3::expr_vector& vars, const std::vector<z3::expr>& triggers,
                const z3::expr& body);

// Builds Z3 terms in one context (one per thread). Caches function declarations.
class Encoder {
 public:
  explicit Encoder(z3::context& ctx);

  z3::context& ctx() { return ctx_; }
  const z3::sort& tensor_sort() const { return tensor_; }
  const RankEncoder& ranks() const { return ranks_; }
  z3::func_decl Function(specs::OpKind op, const specs::Params& params, int output);

  // Pattern outputs over the given input constants; `functions` collects the function names.
  std::vector<z3::expr> EncodePattern(const ruledb::PatternGraph& g,
                                      const std::vector<z3::expr>& inputs,
                                      std::vector<std::string>* functions);
  // An axiom side with the given terms for its tensor variables.
  z3::expr EncodeAxiomTerm(const specs::AxiomTerm& t, const std::vector<int64_t>& assignment,
                           const std::vector<z3::expr>& vars);
  // forall vars. guard -> lhs = rhs, with each usable side as an alternative trigger; the guard
  // says that every guarded variable has one of its ranks (no guard: lhs = rhs).
  z3::expr AxiomFormula(const specs::Axiom& ax, const AxiomInstance& inst);

 private:
  z3::context& ctx_;
  z3::sort tensor_;
  RankEncoder ranks_;
  std::unordered_map<std::string, z3::func_decl> functions_;
};

// Names of the functions an axiom term applies under an assignment (appended, unsorted).
void CollectAxiomFunctions(const specs::AxiomTerm& t, const std::vector<int64_t>& assignment,
                           std::vector<std::string>* out);

}  // namespace verisub::verify
