// The sub-operator fusion a backend runs (runtime/kernel_generator.h): clusters from
// PlanClusters, each lowered (lower.h) and generated with Halide (halide_kernel.h), kernels
// cached on disk.
#pragma once

#include <atomic>
#include <memory>

#include "fusion/halide_kernel.h"
#include "fusion/subop_rules.h"
#include "runtime/kernel_generator.h"

namespace verisub::fusion {

class SubopGenerator : public runtime::KernelGenerator {
 public:
  // `rules` (may be null: none) rewrite each lowered kernel before it is generated (subop_rules.h).
  explicit SubopGenerator(KernelCacheOptions options = {},
                          std::shared_ptr<const SubopRules> rules = nullptr)
      : cache_(std::move(options)), rules_(std::move(rules)) {}

  std::vector<runtime::KernelCluster> Plan(const runtime::Graph& g,
                                           const std::vector<char>& taken) const override;
  StatusOr<std::shared_ptr<const runtime::GeneratedKernel>> Kernel(
      const runtime::Graph& g, const runtime::KernelCluster& cluster,
      const std::vector<specs::Layout>& input_layouts, specs::Layout output_layout) override;
  int compiled() const override { return cache_.compiled(); }
  int cache_hits() const override { return cache_.hits(); }
  int rule_rewrites() const override { return rule_rewrites_; }

 private:
  KernelCache cache_;
  std::shared_ptr<const SubopRules> rules_;
  std::atomic<int> rule_rewrites_{0};
};

// `lowered` rewritten by `rules` (null: none) where that leaves a kernel computing something (a
// kernel whose output would be one of its inputs or a constant is left as lowered); the rewrites
// made are added to `stats`.
SubGraph RewriteLowered(const SubGraph& lowered, const SubopRules* rules, SubopRewriteStats* stats);

// "gen:ewmul+transpose+ewadd": the kinds of a cluster's nodes, for profiles.
std::string ClusterLabel(const runtime::Graph& g, const runtime::KernelCluster& c);

// The sub-operator level of `g` as text (`verisub-opt --dump-after lower|fuse`): every node that
// lowers with its sub-operators (`fused` false), or every cluster PlanClusters makes with its
// fused sub-operator graph (`fused` true; no node is taken by a library kernel here, as the
// backend's own plan would: the backend may run some of them as a convolution's post-ops).
// `rules` (may be null) rewrite each kernel as the generator does; a comment line names the
// rewrites made.
std::string SubopText(const runtime::Graph& g, bool fused, const SubopRules* rules = nullptr);

}  // namespace verisub::fusion
