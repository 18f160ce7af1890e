// The sub-operator fusion a backend runs (runtime/kernel_generator.h): clusters from
// PlanClusters, each lowered (lower.h) and generated with Halide (halide_kernel.h), kernels
// cached on disk.
#pragma once

#include <memory>

#include "fusion/halide_kernel.h"
#include "runtime/kernel_generator.h"

namespace verisub::fusion {

class SubopGenerator : public runtime::KernelGenerator {
 public:
  explicit SubopGenerator(KernelCacheOptions options = {}) : cache_(std::move(options)) {}

  std::vector<runtime::KernelCluster> Plan(const runtime::Graph& g,
                                           const std::vector<char>& taken) const override;
  StatusOr<std::shared_ptr<const runtime::GeneratedKernel>> Kernel(
      const runtime::Graph& g, const runtime::KernelCluster& cluster,
      const std::vector<specs::Layout>& input_layouts, specs::Layout output_layout) override;
  int compiled() const override { return cache_.compiled(); }
  int cache_hits() const override { return cache_.hits(); }

 private:
  KernelCache cache_;
};

// "gen:ewmul+transpose+ewadd": the kinds of a cluster's nodes, for profiles.
std::string ClusterLabel(const runtime::Graph& g, const runtime::KernelCluster& c);

// The sub-operator level of `g` as text (`verisub-opt --dump-after lower|fuse`): every node that
// lowers with its sub-operators (`fused` false), or every cluster PlanClusters makes with its
// fused sub-operator graph (`fused` true; no node is taken by a library kernel here, as the
// backend's own plan would: the backend may run some of them as a convolution's post-ops).
std::string SubopText(const runtime::Graph& g, bool fused);

}  // namespace verisub::fusion
