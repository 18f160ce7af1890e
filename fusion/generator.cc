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

SubGraph RewriteLowered(const SubGraph& lowered, const SubopRules* rules,
                        SubopRewriteStats* stats) {
  if (!rules) return lowered;
  SubopRewriteStats st;
  SubGraph out = rules->Apply(lowered, &st);
  const SubOpKind kind = out.nodes[out.output].kind;
  if (kind == SubOpKind::kInput || kind == SubOpKind::kConst) return lowered;
  if (stats) {
    stats->rewrites += st.rewrites;
    for (const auto& [id, n] : st.by_rule) stats->by_rule[id] += n;
  }
  return out;
}

namespace {

// "# rules: 2 rewrites (0123456789abcdef x2)\n", or "" when none was made.
std::string RewritesComment(const SubopRewriteStats& st) {
  if (st.rewrites == 0) return "";
  std::string s =
      "# rules: " + std::to_string(st.rewrites) + " rewrite" + (st.rewrites == 1 ? "" : "s") + " (";
  bool first = true;
  for (const auto& [id, n] : st.by_rule) {
    s += (first ? "" : ", ") + id + (n > 1 ? " x" + std::to_string(n) : "");
    first = false;
  }
  return s + ")\n";
}

}  // namespace

std::string SubopText(const runtime::Graph& g, bool fused, const SubopRules* rules) {
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
      SubopRewriteStats st;
      const SubGraph sg = RewriteLowered(lowered->graph, rules, &st);
      out += "# node " + n.name + " (" + n.KindName() + "), reads" + value_list(lowered->inputs) +
             "\n" + RewritesComment(st) + SubGraphText(sg) + "\n";
    }
    return out;
  }
  int k = 0;
  for (const runtime::KernelCluster& c : PlanClusters(g, {})) {
    auto lowered = LowerCluster(g, c.nodes, c.output);
    if (!lowered.ok()) continue;
    std::string names;
    for (int n : c.nodes) names += " " + g.node(n).name;
    SubopRewriteStats st;
    const SubGraph sg = RewriteLowered(lowered->graph, rules, &st);
    out += "# kernel " + std::to_string(k++) + " " + ClusterLabel(g, c) + ": nodes" + names +
           "; reads" + value_list(c.inputs) + "; writes " + g.value(c.output).name + "\n" +
           RewritesComment(st) + SubGraphText(sg) + "\n";
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
  SubopRewriteStats st;
  lowered.graph = RewriteLowered(lowered.graph, rules_.get(), &st);
  rule_rewrites_ += st.rewrites;
  // Element-wise in one layout: indexed as stored, no division per element; else every input and
  // the output converted by its own reindex.
  if (std::optional<SubGraph> physical =
          InPhysicalSpace(lowered.graph, input_layouts, output_layout))
    return cache_.Get(*physical, ClusterLabel(g, cluster));
  VERISUB_ASSIGN_OR_RETURN(SubGraph stored, InLayouts(lowered.graph, input_layouts, output_layout));
  return cache_.Get(stored, ClusterLabel(g, cluster));
}

}  // namespace verisub::fusion
