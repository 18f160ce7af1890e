#include "fusion/generator.h"

#include "fusion/lower.h"
#include "fusion/partition.h"

namespace verisub::fusion {

std::string ClusterLabel(const runtime::Graph& g, const runtime::KernelCluster& c) {
  std::string s = "gen:";
  for (size_t k = 0; k < c.nodes.size(); ++k) {
    std::string kind = g.node(c.nodes[k]).KindName();
    if (kind.rfind("onnx:", 0) == 0) kind = kind.substr(5);
    s += (k ? "+" : "") + kind;
  }
  return s;
}

std::string SubopText(const runtime::Graph& g, bool fused) {
  std::string out;
  auto value_list = [&](const std::vector<int>& vs) {
    std::string s;
    for (int v : vs) s += " " + g.value(v).name;
    return s;
  };
  if (!fused) {
    for (int i = 0; i < g.num_nodes(); ++i) {
      if (!Lowerable(g, i)) continue;
      const runtime::Node& n = g.node(i);
      auto lowered = LowerCluster(g, {i}, n.outputs[0]);
      if (!lowered.ok()) continue;
      out += "# node " + n.name + " (" + n.KindName() + "), reads" + value_list(lowered->inputs) +
             "\n" + SubGraphText(lowered->graph) + "\n";
    }
    return out;
  }
  int k = 0;
  for (const runtime::KernelCluster& c : PlanClusters(g, {})) {
    auto lowered = LowerCluster(g, c.nodes, c.output);
    if (!lowered.ok()) continue;
    std::string names;
    for (int n : c.nodes) names += " " + g.node(n).name;
    out += "# kernel " + std::to_string(k++) + " " + ClusterLabel(g, c) + ": nodes" + names +
           "; reads" + value_list(c.inputs) + "; writes " + g.value(c.output).name + "\n" +
           SubGraphText(lowered->graph) + "\n";
  }
  return out;
}

std::vector<runtime::KernelCluster> SubopGenerator::Plan(const runtime::Graph& g,
                                                         const std::vector<char>& taken) const {
  return PlanClusters(g, taken);
}

StatusOr<std::shared_ptr<const runtime::GeneratedKernel>> SubopGenerator::Kernel(
    const runtime::Graph& g, const runtime::KernelCluster& cluster,
    const std::vector<specs::Layout>& input_layouts, specs::Layout output_layout) {
  VERISUB_ASSIGN_OR_RETURN(LoweredCluster lowered, LowerCluster(g, cluster.nodes, cluster.output));
  if (lowered.inputs != cluster.inputs)
    return InternalError("generated kernel: the cluster's inputs changed since it was planned");
  // Element-wise in one layout: indexed as stored, no division per element; else every input and
  // the output converted by its own reindex.
  if (std::optional<SubGraph> physical =
          InPhysicalSpace(lowered.graph, input_layouts, output_layout))
    return cache_.Get(*physical, ClusterLabel(g, cluster));
  VERISUB_ASSIGN_OR_RETURN(SubGraph stored, InLayouts(lowered.graph, input_layouts, output_layout));
  return cache_.Get(stored, ClusterLabel(g, cluster));
}

}  // namespace verisub::fusion
