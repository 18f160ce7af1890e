// The description of one operator: everything the generator, verifier and runtime need to know.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "specs/layout.h"
#include "specs/ops/op_list.h"
#include "specs/params.h"
#include "specs/tensor.h"

namespace verisub::specs {

#define VERISUB_OP_KIND(name, file) k##name,
enum class OpKind : int { VERISUB_FOR_EACH_OP(VERISUB_OP_KIND) kNumOps };
#undef VERISUB_OP_KIND
inline constexpr int kNumOpKinds = static_cast<int>(OpKind::kNumOps);
inline constexpr int kMaxOpInputs = 5;
inline constexpr int kMaxOpOutputs = 2;

// Shape rule: output types from parameters and input types, or an error saying which
// parameter or input is wrong and why (the caller adds the operator's name).
using ShapeRule = Status (*)(const Params& p, const TensorType* const* in, TensorType* out);

// Arithmetic work of an instance from its input and output shapes.
using FlopsRule = double (*)(const Params& p, const Shape* in, const Shape* out);

struct OpSpec {
  OpKind kind;
  std::string name;
  std::string summary;
  int num_inputs = 0;
  int num_outputs = 1;
  std::vector<ParamDesc> params;
  // Inputs 0 and 1 may be swapped without changing the result (used for symmetry breaking).
  bool commutative = false;
  // op(x, x) = x (max, min): the generator never applies it to one tensor twice, since the graph
  // with x in its place computes the same with one operator less.
  bool idempotent = false;
  // A constant: its single input only supplies a shape; its data is never read.
  bool is_constant = false;
  ShapeRule shape_rule = nullptr;
  // Data layouts this operator's kernels exist for (plain only by default). Not part of the
  // op-set fingerprint: layout work never invalidates a rules file.
  LayoutSupport layouts;
  // Floating-point operations of one instance, for analytic cost models; null means one per
  // output element (elementwise operators, data movement).
  FlopsRule flops = nullptr;
  // Runs no kernel at inference: constants are folded at load time and a reshape is a view.
  bool free_at_inference = false;
  // Properties of the operator, one per line: `name (vars) lhs = rhs` (see axiom.h).
  std::string axioms;
  // Axioms, by name, that hold in the reals (the double and symbolic semantics, where they are
  // validated) but not in the modular integers of the fingerprints, which have no exponential
  // homomorphism and no order that addition respects: the generator cannot find their rules, so
  // a config states those as candidates (gen/README.md). Every other axiom holds exactly there.
  std::vector<std::string> real_only_axioms;

  const ParamDesc* FindParam(std::string_view pname) const;
  // Default parameters: the first value of each domain.
  Params DefaultParams() const;
};

}  // namespace verisub::specs
