// Memory budgets: the largest tensor a graph may hold, checked before any of it is allocated, so
// a hostile or mistyped shape ([1,3,2^31,2^31]) is refused with the tensor's name instead of
// overflowing a size or dying of bad_alloc.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"

namespace verisub::runtime {

struct MemoryBudget {
  // Bytes one tensor may take in its element type (import, export, folding) and, in the
  // reference executor, as doubles (8 bytes an element, which is how it computes).
  int64_t max_tensor_bytes = int64_t{4} << 30;
  // Bytes all of them together may take, 0 for no bound: the weights (import, export), or the
  // weights plus the tensors alive at once while the reference executor runs the graph in node
  // order (inputs, and every intermediate until its last reader). The programs' --max-memory-mb
  // sets both.
  int64_t max_total_bytes = 0;
};

// The budget of a program's --max-memory-mb: `mb` MiB for one tensor and for all together;
// 0 keeps the defaults (4 GiB a tensor, no total).
MemoryBudget MemoryBudgetFromMb(int64_t mb);

// Bytes of `dims` at `elem_size` bytes an element, or -1 when a dimension is negative or the
// product of the nonzero dimensions (times `elem_size`) overflows int64.
int64_t TensorBytes(const std::vector<int64_t>& dims, int64_t elem_size);

// Checks every value of the graph with a known static shape: element count and bytes must not
// overflow and must fit `budget`, one by one and (with max_total_bytes) together. `executor`
// counts 8 bytes an element (the reference executor's doubles) instead of the element type's
// size, and the executor's peak of live tensors instead of the weights alone. Errors name the
// value and its shape, or the node at the peak.
Status CheckMemoryBudget(const Graph& g, const MemoryBudget& budget, bool executor);

}  // namespace verisub::runtime
