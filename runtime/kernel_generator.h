// The interface through which a backend runs generated kernels (fusion/ implements it; the
// runtime does not depend on fusion/): a generator picks clusters of memory-bound nodes that one
// generated kernel can compute, compiles a kernel per cluster, and the backend runs it in place of
// the cluster's nodes on its float32 buffers, in the layouts they are stored in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"
#include "specs/layout.h"

namespace verisub::runtime {

// A compiled kernel of one cluster: reads the cluster's inputs, writes its output, float32 in the
// storage layouts it was made for (Kernel's). Run keeps no state: threads may call it at once.
class GeneratedKernel {
 public:
  virtual ~GeneratedKernel() = default;
  virtual Status Run(const std::vector<const float*>& inputs, float* output) const = 0;
  // "gen:ewadd+layer_norm#1a2b3c4d": the fused node kinds and the kernel's cache key.
  virtual const std::string& name() const = 0;
};

struct KernelCluster {
  std::vector<int> nodes;   // graph nodes, in node order; the last one writes `output`
  std::vector<int> inputs;  // the values the kernel reads (activations and weights), in order
  int output = kNoValue;    // the one value read outside the cluster
};

class KernelGenerator {
 public:
  virtual ~KernelGenerator() = default;
  // Clusters of at least two nodes, none of which is in `taken` (per node: 1 when another kernel
  // computes it), each computed by one generated kernel.
  virtual std::vector<KernelCluster> Plan(const Graph& g, const std::vector<char>& taken) const = 0;
  // The kernel of `cluster` reading input k stored in `input_layouts[k]` and writing its output in
  // `output_layout` (a backend's blocked or channels-last tensors, no conversion around it),
  // compiled or loaded from a cache; an error when it cannot be made (the backend then runs the
  // nodes one by one).
  virtual StatusOr<std::shared_ptr<const GeneratedKernel>> Kernel(
      const Graph& g, const KernelCluster& cluster, const std::vector<specs::Layout>& input_layouts,
      specs::Layout output_layout) = 0;
  // Counts for reports: kernels compiled, and kernels found in the cache.
  virtual int compiled() const = 0;
  virtual int cache_hits() const = 0;
  // Rewrites made by rules at the sub-operator level in the kernels made so far.
  virtual int rule_rewrites() const { return 0; }
};

}  // namespace verisub::runtime
