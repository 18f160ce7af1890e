// Refutation by evaluation: a candidate whose two sides differ at some concrete shapes can never
// be proved from axioms that hold at every shape, so the verifier need not ask Z3 about it.
// Candidates come from random tests at one set of shapes; many are identities of those shapes
// only (a dimension that happens to be 1, a kernel that is already 3x3, two sizes that happen to
// be equal). Evaluating both sides with the reference kernels at other shapes exposes them in
// microseconds. This only ever refutes: agreement at every shape tried proves nothing.
#pragma once

#include <cstdint>
#include <memory>
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
  int max_bases = 8;       // well-typed combinations of base shapes kept as starting points
  int max_variants = 128;  // random shape assignments type-checked per rule
  // Shape cases evaluated per rule before Z3 is asked. On taso.cfg most refutations come at the
  // first case (a generic point); rules that only batched matmuls break need a few dozen.
  int max_cases = 32;
  // Before a Z3 proof is accepted, the sequence goes on up to this many cases: Z3 proves some
  // false rules (the encoding drops the ranks declared on axiom variables, and instantiates an
  // axiom where only one side type-checks), and a proof is what gets shipped. On taso.cfg the
  // last such rule is refuted at case 54 (no other up to case 512).
  int proof_cases = 64;
  // What neither Z3 nor the normal forms decide is evaluated further, up to this many cases,
  // before it is called unknown: such a candidate is usually an identity of small values (relu6
  // of squares in [-1, 1] never clips) or of the shapes tried so far.
  int undecided_cases = 192;
  // From case max_cases on, every other case draws its inputs from [-wide_range, wide_range]
  // instead of [-1, 1] (clipping activations, saturating ones and other coincidences of small
  // values show there).
  double wide_range = 8;
  int max_dim = 5;                 // largest dimension chosen when shapes are changed
  int64_t max_elements = 1 << 14;  // a case with a larger input tensor is skipped
  // Outputs differ when |a - b| > tolerance * max(1, |a|, |b|) for some element. The kernels are
  // continuous, so a true identity differs by rounding only (~1e-15 here).
  double tolerance = 1e-6;
};

// The base shapes used when none are given: the input shapes of data/gen/taso.cfg, in its order
// (2-D, 4-D activations, 3x3, 1x3, 3x1 and depthwise kernels, a scalar).
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
// them (equal dimensions split apart or changed together). A rule with input ranks is evaluated
// at shapes of those ranks only (it claims nothing elsewhere). Deterministic: the sequence of
// cases depends on the rule and the options only; this evaluates its cases [first_case,
// end_case) (end_case < 0: options.max_cases), so a later call can go on where an earlier one
// stopped.
Refutation RefuteByEvaluation(const ruledb::Rule& rule, const RefuteOptions& options,
                              int first_case = 0, int end_case = -1);

// The same sequence of cases, kept between calls: the prover evaluates the first cases before
// asking Z3 and goes on to more when Z3 proves the rule, without finding the shapes again.
class Refuter {
 public:
  Refuter(const ruledb::Rule& rule, const RefuteOptions& options);  // copies both
  ~Refuter();
  Refuter(const Refuter&) = delete;
  Refuter& operator=(const Refuter&) = delete;

  // Goes on with the sequence up to case `end_case` (exclusive), evaluating each case unless
  // `evaluate` is false; stops at the first counterexample. The result counts every case
  // evaluated so far. Nothing is evaluated when refutation is disabled.
  const Refutation& Run(int end_case, bool evaluate = true);
  int next_case() const;  // the first case not yet passed

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The distinct input-rank tuples of the well-typed base assignments RefuteByEvaluation starts
// from, in its order (the first is that of the first well-typed base), at most `max_tuples`.
// Computed whether or not refutation is enabled.
std::vector<std::vector<int>> WellTypedRankTuples(const ruledb::Rule& rule,
                                                  const RefuteOptions& options, int max_tuples);

}  // namespace verisub::verify
