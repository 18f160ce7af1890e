// Differential check of an optimization: the reference executor runs the original and the
// optimized graph on the same random inputs and the outputs are compared with a tolerance.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/graph.h"
#include "base/status.h"

namespace verisub::rewriter {

struct VerifyOptions {
  uint64_t seed = 1;
  int trials = 1;
  // |a - b| <= abs_tol + rel_tol * |a| for every element.
  double abs_tol = 1e-4;
  double rel_tol = 1e-4;
};

struct VerifyReport {
  int outputs_compared = 0;
  int64_t elements_compared = 0;
  double max_abs_diff = 0;
};

// Ok when every output agrees; otherwise an error naming the output, the element and both
// values. Inputs are uniform in [-1, 1] for floating types and 0 for integer types.
Status CompareOutputs(const runtime::Graph& original, const runtime::Graph& optimized,
                      const VerifyOptions& options, VerifyReport* report);

}  // namespace verisub::rewriter
