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
};

// Every instance of every axiom. An axiom neither side of which can be a trigger (a bare
// variable, or a side missing a variable) is an error: it could never be instantiated.
StatusOr<std::vector<AxiomInstance>> InstantiateAxioms(const std::vector<specs::Axiom>& axioms);

// Indices of the instances that E-matching could ever fire for a query mentioning `functions`:
// the fixed point of "a trigger's functions all occur" (the other side's functions then occur
// too). Dropping the others never loses a proof Z3's E-matching could find, and keeps each query
// small.
std::vector<int> RelevantInstances(const std::vector<AxiomInstance>& instances,
                                   std::vector<std::string> functions);

// Builds Z3 terms in one context (one per thread). Caches function declarations.
class Encoder {
 public:
  explicit Encoder(z3::context& ctx);

  z3::context& ctx() { return ctx_; }
  const z3::sort& tensor_sort() const { return tensor_; }
  z3::func_decl Function(specs::OpKind op, const specs::Params& params, int output);

  // Pattern outputs over the given input constants; `functions` collects the function names.
  std::vector<z3::expr> EncodePattern(const ruledb::PatternGraph& g,
                                      const std::vector<z3::expr>& inputs,
                                      std::vector<std::string>* functions);
  // An axiom side with the given terms for its tensor variables.
  z3::expr EncodeAxiomTerm(const specs::AxiomTerm& t, const std::vector<int64_t>& assignment,
                           const std::vector<z3::expr>& vars);
  // forall vars. lhs = rhs, with each usable side as an alternative trigger.
  z3::expr AxiomFormula(const specs::Axiom& ax, const AxiomInstance& inst);

 private:
  z3::context& ctx_;
  z3::sort tensor_;
  std::unordered_map<std::string, z3::func_decl> functions_;
};

// Names of the functions an axiom term applies under an assignment (appended, unsorted).
void CollectAxiomFunctions(const specs::AxiomTerm& t, const std::vector<int64_t>& assignment,
                           std::vector<std::string>* out);

}  // namespace verisub::verify
