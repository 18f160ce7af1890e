// Reference executor: runs a whole graph on the CPU with naive kernels (the spec's own kernel
// for spec operators, runtime/onnx_kernels for opaque ones), in double precision, storing every
// value in its element type.
#pragma once

#include <functional>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"
#include "runtime/host_tensor.h"
#include "runtime/memory_budget.h"

namespace verisub::runtime {

// True when the executor has a kernel for the node.
bool HasKernel(const Node& n);

// Runs one node on the given inputs (nullptr for omitted ones); `opset` is the model's opset for
// the node's domain. The result has one tensor per node output.
StatusOr<std::vector<HostTensor>> RunNode(const Graph& g, const Node& n,
                                          const std::vector<const HostTensor*>& inputs);

// Runs the graph on `inputs` (one per graph input, in order) and returns the graph outputs in
// order. Errors name the failing node. A graph holding a tensor over `budget` (counted as the
// doubles the kernels compute in) is refused before anything runs.
// `store`, when set, sees every value a node computes before it is stored (value id, tensor):
// a hook to emulate another storage precision.
using StoreHook = std::function<void(int value, HostTensor* tensor)>;
StatusOr<std::vector<HostTensor>> Execute(const Graph& g, const std::vector<HostTensor>& inputs,
                                          const MemoryBudget& budget = {},
                                          const StoreHook& store = nullptr);

}  // namespace verisub::runtime
