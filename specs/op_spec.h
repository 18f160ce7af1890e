// The description of one operator: everything the generator, verifier and runtime need to know.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "specs/params.h"
#include "base/status.h"
#include "specs/tensor.h"

namespace verisub::specs {

enum class OpKind : int {
  kConv2d,
  kMatmul,
  kEwAdd,
  kEwMul,
  kSmul,
  kRelu,
  kSigmoid,
  kTanh,
  kTranspose,
  kConcat,
  kSplit,
  kPoolMax,
  kPoolAvg,
  kEnlarge,
  kReshape,
  kBatchnorm,
  kBiasAdd,
  kConstOnes,
  kConstIMatmul,
  kConstIConv,
  kConstPool,
  kNumOps,
};
inline constexpr int kNumOpKinds = static_cast<int>(OpKind::kNumOps);
inline constexpr int kMaxOpInputs = 5;
inline constexpr int kMaxOpOutputs = 2;

// Shape rule: output types from parameters and input types, or an error saying which
// parameter or input is wrong and why (the caller adds the operator's name).
using ShapeRule = Status (*)(const Params& p, const TensorType* const* in, TensorType* out);

struct OpSpec {
  OpKind kind;
  std::string name;
  std::string summary;
  int num_inputs = 0;
  int num_outputs = 1;
  std::vector<ParamDesc> params;
  // Inputs 0 and 1 may be swapped without changing the result (used for symmetry breaking).
  bool commutative = false;
  // A constant: its single input only supplies a shape; its data is never read.
  bool is_constant = false;
  ShapeRule shape_rule = nullptr;
  // Data layouts the runtime may choose for this operator's kernels.
  std::vector<std::string> layouts;
  // Properties of the operator, one per line: `name (vars) lhs = rhs` (see axiom.h).
  std::string axioms;

  const ParamDesc* FindParam(std::string_view pname) const;
  // Default parameters: the first value of each domain.
  Params DefaultParams() const;
};

}  // namespace verisub::specs
