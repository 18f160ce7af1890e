// Shape search for axioms.
#include "specs/axiom_eval.h"

namespace verisub::specs {

StatusOr<TensorType> InferAxiomTerm(const AxiomTerm& t, const std::vector<int64_t>& assignment,
                                    const std::vector<TensorType>& vars) {
  if (t.var >= 0) return vars[t.var];
  std::vector<TensorType> args;
  args.reserve(t.args.size());
  for (const AxiomTerm& a : t.args) {
    auto v = InferAxiomTerm(a, assignment, vars);
    if (!v.ok()) return v.status();
    args.push_back(std::move(*v));
  }
  const TensorType* in[kMaxOpInputs];
  for (size_t i = 0; i < args.size(); ++i) in[i] = &args[i];
  TensorType out[kMaxOpOutputs];
  VERISUB_RETURN_IF_ERROR(InferTypes(t.op, ResolveParams(t, assignment), in, out));
  return std::move(out[t.output]);
}

bool FindAxiomShapes(const Axiom& ax, const std::vector<int64_t>& assignment, int max_dim,
                     int attempts, std::mt19937_64& rng, AxiomShapeCase* out) {
  // Dimensions come from a small random palette per attempt: independent draws almost never
  // satisfy the many equalities of an axiom like conv_concat_in_channels, a palette of one to
  // three sizes satisfies them often while still mixing sizes.
  std::uniform_int_distribution<int64_t> dim(1, max_dim);
  std::vector<TensorType> vars(ax.vars.size());
  for (int a = 0; a < attempts; ++a) {
    int64_t palette[3] = {dim(rng), dim(rng), dim(rng)};
    int palette_size = 1 + static_cast<int>(rng() % 3);
    for (size_t i = 0; i < ax.vars.size(); ++i) {
      const auto& ranks = ax.vars[i].ranks;
      Shape s;
      s.rank = ranks[rng() % ranks.size()];
      for (int d = 0; d < s.rank; ++d) s[d] = palette[rng() % palette_size];
      vars[i] = TensorType(s);
    }
    auto l = InferAxiomTerm(ax.lhs, assignment, vars);
    if (!l.ok()) continue;
    auto r = InferAxiomTerm(ax.rhs, assignment, vars);
    if (!r.ok()) continue;
    out->var_types = vars;
    out->lhs = std::move(*l);
    out->rhs = std::move(*r);
    return true;
  }
  return false;
}

}  // namespace verisub::specs
