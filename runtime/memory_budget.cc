// Checked tensor sizes against a memory budget.
#include "runtime/memory_budget.h"

#include <algorithm>
#include <limits>
#include <string>

#include "runtime/host_tensor.h"

namespace verisub::runtime {

int64_t TensorBytes(const std::vector<int64_t>& dims, int64_t elem_size) {
  if (elem_size < 0) return -1;
  // The product of the nonzero dims must fit too: kernels multiply partial products (outer and
  // inner sizes), so [0, 2^63-1, 2] is refused although it holds no element (found by fuzzing:
  // Concat's output dims overflowed).
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  if (elem_size != 0 && n > std::numeric_limits<int64_t>::max() / elem_size) return -1;
  return empty ? 0 : n * elem_size;
}

MemoryBudget MemoryBudgetFromMb(int64_t mb) {
  MemoryBudget budget;
  if (mb <= 0) return budget;
  const int64_t bytes = mb > (std::numeric_limits<int64_t>::max() >> 20)
                            ? std::numeric_limits<int64_t>::max()
                            : mb << 20;
  budget.max_tensor_bytes = bytes;
  budget.max_total_bytes = bytes;
  return budget;
}

namespace {

constexpr const char* kBudgetName = "(--max-memory-mb; MemoryBudget)";

// `a + b`, saturating instead of overflowing.
int64_t AddBytes(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

// The executor's peak: weights all along, inputs from the start, each node's outputs from the
// node to the last reader (as runtime::Execute frees them). `bytes[v]` is -1 for unknown sizes.
Status CheckExecutorTotal(const Graph& g, const std::vector<int64_t>& bytes, int64_t budget) {
  std::vector<int> uses = g.UseCounts();
  int64_t live = 0;
  for (int v = 0; v < g.num_values(); ++v)
    if (g.value(v).constant && bytes[v] > 0) live = AddBytes(live, bytes[v]);
  for (int v : g.inputs())
    if (!g.value(v).constant && bytes[v] > 0) live = AddBytes(live, bytes[v]);
  for (const auto& np : g.nodes()) {
    for (int o : np->outputs)
      if (o != kNoValue && bytes[o] > 0) live = AddBytes(live, bytes[o]);
    if (live > budget)
      return FailedPrecondition(
          "the reference executor needs " + std::to_string(live) + " bytes at node '" + np->name +
          "' (" + np->KindName() + ": weights, inputs and the tensors alive there), over the " +
          "memory budget of " + std::to_string(budget) + " bytes in all " + kBudgetName);
    for (int v : np->inputs)
      if (v != kNoValue && --uses[v] == 0 && !g.value(v).constant && bytes[v] > 0) live -= bytes[v];
  }
  return Status::Ok();
}

}  // namespace

Status CheckMemoryBudget(const Graph& g, const MemoryBudget& budget, bool executor) {
  std::vector<int64_t> sizes(g.num_values(), -1);
  for (int v = 0; v < g.num_values(); ++v) {
    const Value& val = g.value(v);
    if (!val.rank_known) continue;
    bool is_static = true;
    for (int64_t d : val.dims) is_static &= d >= 0;
    if (!is_static) continue;
    int64_t elem = executor ? 8 : std::max(ElemTypeSize(val.elem_type), 1);
    // A dimension of 0 empties the tensor but not the loops over its other dimensions (found by
    // fuzzing: a softmax over [2^40,4,0] ran for hours): they count as if it were 1.
    std::vector<int64_t> loops = val.dims;
    for (int64_t& d : loops) d = std::max<int64_t>(d, 1);
    int64_t bytes = TensorBytes(loops, elem);
    std::string what = "tensor '" + val.name + "' " + DimsToString(val.dims);
    if (bytes < 0)
      return InvalidArgument(what + ": its size overflows a 64-bit count of elements or bytes");
    if (bytes > budget.max_tensor_bytes)
      return FailedPrecondition(
          what + " needs " + std::to_string(bytes) + " bytes" +
          (executor ? " in the reference executor" : "") + ", over the memory budget of " +
          std::to_string(budget.max_tensor_bytes) + " bytes a tensor " + kBudgetName);
    sizes[v] = bytes;
  }
  if (budget.max_total_bytes <= 0) return Status::Ok();
  if (executor) return CheckExecutorTotal(g, sizes, budget.max_total_bytes);
  int64_t weights = 0;
  for (int v = 0; v < g.num_values(); ++v) {
    const Value& val = g.value(v);
    if ((val.constant || val.input_default) && sizes[v] > 0) weights = AddBytes(weights, sizes[v]);
  }
  if (weights > budget.max_total_bytes)
    return FailedPrecondition("the weights need " + std::to_string(weights) +
                              " bytes in all, over the memory budget of " +
                              std::to_string(budget.max_total_bytes) + " bytes " + kBudgetName);
  return Status::Ok();
}

}  // namespace verisub::runtime
