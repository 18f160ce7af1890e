// Refutation by evaluation: a candidate whose two sides differ at some concrete shapes can never
// be proved from axioms that hold at every shape, so the verifier need not ask Z3 about it.
// Candidates come from random tests at one set of shapes; many are identities of those shapes
// only (a dimension that happens to be 1, a kernel that is already 3x3, two sizes that happen to
// be equal). Evaluating both sides with the reference kernels at other shapes exposes them in
// microseconds. This only ever refutes: agreement at every shape tried proves nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ruledb/rule.h"
#include "specs/tensor.h"

namespace verisub::verify {

struct RefuteOptions {
  bool enabled = true;
  uint64_t seed = 1;  // of the random shapes and inputs (each rule also hashes its own text)
  // Shapes tried for each rule input when looking for shapes at which both sides type-check;
  // empty: DefaultBaseShapes(). Give the generator's input shapes so every candidate has one.
  std::vector<specs::Shape> base_shapes;
  int max_bases = 8;               // well-typed combinations of base shapes kept as starting points
  int max_variants = 48;           // perturbed shape assignments type-checked per rule
  int max_cases = 16;              // shape cases evaluated per rule (bases and variants)
  int max_dim = 7;                 // largest dimension a perturbation picks
  int64_t max_elements = 1 << 14;  // skip a case with a larger input tensor
  // Outputs differ when |a - b| > tolerance * max(1, |a|, |b|) for some element. The kernels are
  // continuous, so a true identity differs by rounding only (~1e-15 here).
  double tolerance = 1e-6;
};

// The base shapes used when none are given: a scalar and the 2-D and 4-D shapes of the
// generator's default search space (activations, 3x3, 1x3, 3x1 and depthwise kernels).
std::vector<specs::Shape> DefaultBaseShapes();

// Every refutation's reason starts with this.
inline constexpr const char* kRefutationReasonPrefix = "counterexample by evaluation";

struct Refutation {
  bool refuted = false;
  // When refuted: "counterexample by evaluation: inputs ?a [3,5] ?b [5,2]: output 0 element 3:
  // 0.25 vs -0.5" (or the two output types when they differ).
  std::string reason;
  int cases = 0;  // shape cases evaluated
};

// Evaluates both sides of `rule` in double precision on seeded random inputs in [-1, 1], at
// shapes where both sides type-check: combinations of the base shapes, then perturbations of
// them (equal dimensions split apart or changed together). Deterministic: the result depends on
// the rule and the options only.
Refutation RefuteByEvaluation(const ruledb::Rule& rule, const RefuteOptions& options);

}  // namespace verisub::verify
