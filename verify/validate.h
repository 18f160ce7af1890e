// Validation of the axioms against the reference kernels by symbolic execution: every parameter
// assignment, every tensor shape (dimensions 1..max_dim, convolution kernels of the given sizes)
// on which both sides type-check, both sides evaluated over canonical polynomials (PolyStore)
// and compared elementwise; Z3 (reals with uninterpreted activations) only when two canonical
// forms differ.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "specs/axiom.h"

namespace verisub::verify {

// The largest max_dim: shapes are enumerated per tensor (max_dim^rank of them) and every case of
// every parameter assignment is held at once, so a larger bound exhausts memory (issue 17:
// max_dim 1000 aborted with bad_alloc).
inline constexpr int kMaxValidateDim = 8;

struct ValidateOptions {
  int max_dim = 4;  // every dimension ranges over 1..max_dim, at most kMaxValidateDim
  std::vector<int64_t> kernel_dims = {1, 3};  // spatial dims of tensors used as conv kernels
  // Per parameter assignment, check only the N smallest shape cases (by total elements, then
  // dimensions); 0 checks all of them.
  int64_t max_cases_per_assignment = 0;
  // Enumeration stops (the axiom is then reported incomplete) beyond this many cases.
  int64_t max_enumerated_per_assignment = 2000000;
  int threads = 0;                   // 0: every core
  int solver_timeout_ms = 10000;     // per fallback query
  bool progress = true;              // progress lines and a summary on stderr
  std::vector<specs::Axiom> axioms;  // empty: specs::AllAxioms()
};

enum class AxiomVerdict { kValid, kWrong, kUndecided };
const char* AxiomVerdictName(AxiomVerdict v);

struct AxiomValidation {
  std::string name, owner;
  AxiomVerdict verdict = AxiomVerdict::kValid;
  int assignments = 0;
  int assignments_without_shapes = 0;  // assignments under which no shape type-checks
  int64_t cases_enumerated = 0;        // shape cases where both sides type-check
  int64_t cases_checked = 0;
  int64_t elements_compared = 0;
  int64_t solver_calls = 0;  // elements whose canonical forms differed
  bool complete = true;      // every enumerated case was checked (no cap, no early stop)
  // For kWrong: the smallest breaking case (parameters, shapes, element, both sides); for
  // kUndecided: what the solver said.
  std::string detail;
};

struct ValidationReport {
  std::vector<AxiomValidation> axioms;  // in axiom order
  int valid = 0, wrong = 0, undecided = 0;
  int64_t cases = 0;
  double seconds = 0;
  int threads = 0;
  std::string Summary() const;
};

StatusOr<ValidationReport> ValidateAxioms(const ValidateOptions& options);

}  // namespace verisub::verify
