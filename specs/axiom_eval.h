// Evaluation of axiom terms through the reference kernels, under any semantics, and a random
// search for tensor shapes on which both sides of an axiom are defined.
#pragma once

#include <random>

#include "specs/axiom.h"
#include "specs/evaluate.h"

namespace verisub::specs {

// Types of the tensor variables for which both sides of an axiom are defined, and the two sides'
// output types.
struct AxiomShapeCase {
  std::vector<TensorType> var_types;
  TensorType lhs, rhs;
};

// Infers the type of a term (no data).
StatusOr<TensorType> InferAxiomTerm(const AxiomTerm& t, const std::vector<int64_t>& assignment,
                                    const std::vector<TensorType>& vars);

// Random shapes for the variables (ranks as declared, every dimension in [1, max_dim]) until
// both sides type-check; up to `attempts` tries. Returns false if none was found.
bool FindAxiomShapes(const Axiom& ax, const std::vector<int64_t>& assignment, int max_dim,
                     int attempts, std::mt19937_64& rng, AxiomShapeCase* out);

template <class S>
StatusOr<Tensor<typename S::Elem>> EvalAxiomTerm(
    const S& s, const AxiomTerm& t, const std::vector<int64_t>& assignment,
    const std::vector<Tensor<typename S::Elem>>& vars) {
  using T = Tensor<typename S::Elem>;
  if (t.var >= 0) return vars[t.var];
  std::vector<T> args;
  args.reserve(t.args.size());
  for (const AxiomTerm& a : t.args) {
    auto v = EvalAxiomTerm(s, a, assignment, vars);
    if (!v.ok()) return v.status();
    args.push_back(std::move(*v));
  }
  const T* in[kMaxOpInputs];
  for (size_t i = 0; i < args.size(); ++i) in[i] = &args[i];
  T out[kMaxOpOutputs];
  VERISUB_RETURN_IF_ERROR(Evaluate(s, t.op, ResolveParams(t, assignment), in, out));
  return std::move(out[t.output]);
}

}  // namespace verisub::specs
