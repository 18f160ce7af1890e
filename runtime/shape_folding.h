// Shape-computation folding: constant folding and ONNX's per-node shape inference alternated to
// a fixed point, so that shapes computed at run time by Shape/Gather/Div/Concat chains
// (ShuffleNet's channel shuffle, a transformer's head split) become constants and every downstream
// shape becomes known.
#pragma once

#include "base/status.h"
#include "runtime/constant_folding.h"
#include "runtime/graph.h"

namespace verisub::runtime {

struct ShapeFoldOptions {
  FoldOptions fold;
  // Fold/infer rounds at most; every round but the last folds a node or learns a dimension, so
  // the limit only guards against a bug.
  int max_rounds = 10000;
  // Constant inputs larger than this are not shown to ONNX's inference functions (they read
  // shape-like operands: Reshape targets, Slice bounds, pads, repeats).
  int64_t max_data_elements = int64_t{1} << 16;
};

struct ShapeFoldReport {
  int rounds = 0;
  int folded_nodes = 0;
  int refined_values = 0;  // values whose element type, rank or a dimension was learnt
  int skipped_no_kernel = 0;
  bool reached_limit = false;
};

// Re-runs ONNX's inference on every opaque node with an output whose shape or element type is
// not fully known, using the current input types and the data of constant inputs; merges what
// it learns. Returns the number of values refined. A contradiction with a known dimension, or an
// inference failure, is an error naming the node.
StatusOr<int> RefineOpaqueTypes(Graph* g, const ShapeFoldOptions& options = {});

// FoldConstants and RefineOpaqueTypes alternated until neither changes the graph.
StatusOr<ShapeFoldReport> FoldShapes(Graph* g, const ShapeFoldOptions& options = {});

}  // namespace verisub::runtime
