// Random small graphs of spec operators for the rewriter's differential fuzzing (fuzz_test.cc
// and the `make fuzz` program diff_fuzz/diff_fuzz_main.cc): operators, shapes, weights and
// wiring drawn from a seed; every value nobody reads is a graph output.
#pragma once

#include <cstdint>

#include "runtime/graph.h"

namespace verisub::rewriter::testing {

// Convolutional family: [1, C, 6, 6] tensors (conv2d, activations, ewadd/ewmul, concat/split,
// pool_avg; with `more_ops` also pool_max and smul).
runtime::Graph RandomConvGraph(uint64_t seed, bool more_ops = false);
// Matrix family: [4, N] tensors with matmuls sharing inputs, transposes, adds.
runtime::Graph RandomMatmulGraph(uint64_t seed);
// One of the three, by seed.
runtime::Graph RandomGraph(uint64_t seed);

}  // namespace verisub::rewriter::testing
