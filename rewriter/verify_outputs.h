// Differential check of an optimization: the reference executor runs the original and the
// optimized graph on the same random inputs and the outputs are compared with a tolerance.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "base/status.h"
#include "runtime/graph.h"
#include "runtime/host_tensor.h"
#include "runtime/memory_budget.h"

namespace verisub::rewriter {

struct VerifyOptions {
  uint64_t seed = 1;
  int trials = 1;
  // |a - b| <= abs_tol + rel_tol * max |a| over the output, for every element (the rounding of
  // float32 sums follows the magnitudes summed: folding 54 batch-norm scales into ResNet-50's
  // kernels moved a logit of 0.245 by 1.6e-4, 3.5e-8 of the largest logit, 4,590).
  double abs_tol = 1e-4;
  double rel_tol = 1e-4;
};

// Whether the graphs were found to differ, or could not be run at all (no kernel for an
// operator, a tensor over the memory budget): the two must never be confused.
enum class VerifyOutcome { kEqual, kDifferent, kCouldNotRun };

struct VerifyReport {
  VerifyOutcome outcome = VerifyOutcome::kEqual;
  int outputs_compared = 0;
  int64_t elements_compared = 0;
  double max_abs_diff = 0;
};

// One tensor per graph input: uniform in [-1, 1] for floating types, 0 for integer types. Fails
// naming an input without a static shape or too large to count.
StatusOr<std::vector<runtime::HostTensor>> RandomInputs(const runtime::Graph& g,
                                                        std::mt19937_64* rng);

// The relative error of outputs against reference ones: ||got - want|| / ||want|| of each float
// output, the worst of them (NaN counts as infinity; outputs of other shapes are skipped). The
// usual accuracy measure of reduced-precision inference.
double RelativeOutputError(const std::vector<runtime::HostTensor>& got,
                           const std::vector<runtime::HostTensor>& want);

// How outputs agree with reference ones, element by element (verisub-run --check).
struct OutputAgreement {
  bool shapes_match = true;         // as many outputs, each of the reference's shape
  bool nonfinite_mismatch = false;  // a NaN or an infinity on one side only
  double max_abs = 0;               // largest |got - want|
  double max_rel = 0;               // largest |got - want| / max(|want|, 1)
  double max_scaled = 0;            // largest |got - want| / max(max |want| over its output, 1)
  // The accepted float32 agreement: every element within `tolerance` of its output's scale. A
  // float32 sum's rounding error grows with the magnitudes summed, not with the result, so an
  // element that cancels to near 0 keeps an error of the order of the large values around it.
  bool Within(double tolerance) const {
    return shapes_match && !nonfinite_mismatch && max_scaled <= tolerance;
  }
};
OutputAgreement CompareWithReference(const std::vector<runtime::HostTensor>& got,
                                     const std::vector<runtime::HostTensor>& want);

// Ok when every output agrees (names, order, shapes and values); otherwise an error naming the
// output, the element and both values (report->outcome kDifferent), or saying why the graphs
// could not be run (kCouldNotRun). Inputs are uniform in [-1, 1] for floating types and 0 for
// integer types; `budget` bounds every tensor the executor would hold.
Status CompareOutputs(const runtime::Graph& original, const runtime::Graph& optimized,
                      const VerifyOptions& options, VerifyReport* report,
                      const runtime::MemoryBudget& budget = {});

}  // namespace verisub::rewriter
