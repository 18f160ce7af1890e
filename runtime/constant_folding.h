// Constant folding: nodes whose inputs are all weights are evaluated once with the reference
// executor and replaced by weights (seed 002's constant pre-computation).
#pragma once

#include <cstdint>

#include "base/status.h"
#include "runtime/graph.h"

namespace verisub::runtime {

struct FoldOptions {
  // Results with more elements than this, and more than their largest input, are left to run
  // time (a folded Expand or Tile could otherwise blow up the model size).
  int64_t max_elements = int64_t{1} << 24;
  // A DequantizeLinear of an 8-bit constant (a QDQ model's weights) stays as it is: a model
  // written out again keeps its int8 weights and the form ONNX Runtime runs on its int8 kernels.
  // The import keeps them (the oneDNN backend folds them when it prepares the model).
  bool keep_dequantized_weights = false;
};

struct FoldReport {
  int folded_nodes = 0;
  int skipped_no_kernel = 0;  // foldable but the executor has no kernel for them
};

// Folds in topological order, so chains of constant nodes fold completely. Shape and Size fold
// when their input's shape is static, whatever its data. Nodes producing graph outputs are kept
// so that outputs stay computed. Errors name the node.
StatusOr<FoldReport> FoldConstants(Graph* g, const FoldOptions& options = {});

}  // namespace verisub::runtime
