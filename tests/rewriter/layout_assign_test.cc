// Layout assignment on real graphs: the benchmark models and the committed ONNX exports get
// valid assignments (every node in an admissible combination, a conversion wherever a reader
// needs another layout than the stored one, outputs delivered plain) that cost no more than
// all-plain; the node order is never wider than the graph's own.
#include "rewriter/layout_assign.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "rewriter/graph_cost.h"
#include "rewriter/layout_costs.h"
#ifdef VERISUB_HAVE_DNNL
#include "rewriter/measured_layout_costs.h"
#include "runtime/dnnl/fusion.h"
#include "runtime/dnnl/measured_cost.h"
#endif
#include "rewriter/layout_order.h"
#include "rewriter/optimize.h"
#include "runtime/graph_text.h"
#include "runtime/models/models.h"
#include "runtime/onnx_import.h"
#include "tests/rewriter/layout_test_problems.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

using specs::Layout;
using testing::ExpectValidAssignment;

class LayoutAssignTest : public ::testing::Test {
 protected:
  LayoutAssignTest()
      : device_(*runtime::DevicePreset("cpu-2core")), model_(device_), costs_(&model_, device_) {}

  runtime::DeviceDescription device_;
  runtime::AnalyticCostModel model_;
  AnalyticLayoutCosts costs_;
};

// Benchmark models at 96x96 (every operator and the wiring kept), by name.
std::vector<std::pair<std::string, runtime::Graph>> SmallModels() {
  std::vector<std::pair<std::string, runtime::Graph>> out;
  runtime::models::BuildOptions options;
  options.image_size = 96;
  auto add = [&](const std::string& name, onnx::ModelProto m) {
    auto g = runtime::ImportOnnxModel(std::move(m), name);
    EXPECT_TRUE(g.ok()) << name << ": " << g.status().message();
    if (g.ok()) out.emplace_back(name, std::move(*g));
  };
  for (const auto& m : runtime::models::ListModels()) {
    if (m.name.find("bert") != std::string_view::npos) continue;
    add(std::string(m.name), m.build(options));
  }
  runtime::models::BertConfig bert{2, 64, 2, 16, 128};
  add("bert_small", runtime::models::BuildBert(bert, options));
  add("densenet121", runtime::models::BuildDenseNet121(options));
  return out;
}

TEST_F(LayoutAssignTest, BenchmarkModelsGetValidAssignments) {
  for (const auto& [name, g] : SmallModels()) {
    LayoutDpReport r;
    auto a = AssignLayouts(g, costs_, LayoutDpOptions(), &r);
    ASSERT_TRUE(a.ok()) << name << ": " << a.status().message();
    ExpectValidAssignment(name, g, costs_, *a);
    EXPECT_LE(r.cost_us, r.cost_plain_us * (1 + 1e-12)) << name;
    EXPECT_LE(r.max_cut_width, r.given_max_cut_width) << name;
    EXPECT_LE(r.peak_states, LayoutDpOptions().max_states) << name;
    // The greedy order on its own: topological, and never wider than the graph's order on the
    // benchmark models (the DP would fall back to the graph's order if it were).
    auto p = BuildLayoutProblem(g, costs_);
    ASSERT_TRUE(p.ok());
    const std::vector<int> greedy = GreedyNarrowOrder(*p);
    EXPECT_TRUE(IsTopologicalOrder(*p, greedy)) << name;
    EXPECT_LE(MaxCutWidth(*p, greedy), MaxCutWidth(*p, GivenOrder(*p))) << name;
    std::printf(
        "%-16s nodes %4d width %2d (given %2d) states peak %4d mean %7.1f cost %.1f -> "
        "%.1f us (%.2fx)%s\n",
        name.c_str(), r.nodes, r.max_cut_width, r.given_max_cut_width, r.peak_states, r.mean_states,
        r.cost_plain_us, r.cost_us, r.cost_plain_us / r.cost_us, r.exact ? " exact" : "");
  }
}

TEST_F(LayoutAssignTest, ResNetRunsBlocked) {
  runtime::models::BuildOptions options;
  options.image_size = 96;
  auto g = runtime::ImportOnnxModel(runtime::models::BuildResNet50(options), "resnet50");
  ASSERT_TRUE(g.ok());
  LayoutDpReport r;
  auto a = AssignLayouts(*g, costs_, LayoutDpOptions(), &r);
  ASSERT_TRUE(a.ok());
  int conv = 0, blocked = 0;
  for (int i = 0; i < g->num_nodes(); ++i) {
    const runtime::Node& n = g->node(i);
    if (n.op != specs::OpKind::kConv2d) continue;
    ++conv;
    blocked += specs::LayoutChannelBlock(a->value_layouts[n.outputs[0]]) > 1;
  }
  EXPECT_GT(blocked, conv * 9 / 10);
  EXPECT_LT(r.cost_us, 0.8 * r.cost_plain_us);
}

// The assignment lands on the graph's values: the checker accepts it, the text form prints it,
// and ValueLayouts gives the backend the same layouts.
TEST_F(LayoutAssignTest, StoredLayoutsAreTheGraphs) {
  runtime::models::BuildOptions options;
  options.image_size = 64;
  auto g = runtime::ImportOnnxModel(runtime::models::BuildSqueezeNet11(options), "squeezenet");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto a = AssignLayouts(*g, costs_, LayoutDpOptions(), nullptr);
  ASSERT_TRUE(a.ok()) << a.status().message();
  runtime::Graph laid = *g;
  StoreLayouts(*a, &laid);
  EXPECT_EQ(runtime::ValueLayouts(laid), a->value_layouts);
  EXPECT_TRUE(CheckGraph(laid).ok());
  ASSERT_NE(std::count(a->value_layouts.begin(), a->value_layouts.end(), Layout::kPlain),
            static_cast<long>(a->value_layouts.size()));
  EXPECT_NE(runtime::PrintGraphText(laid), runtime::PrintGraphText(*g));
  // The original is untouched (values are copied on write).
  for (int v = 0; v < g->num_values(); ++v) EXPECT_EQ(g->value(v).layout, Layout::kPlain);
}

TEST_F(LayoutAssignTest, PrunedStaysAtOrAboveExactOnModels) {
  for (const auto& [name, g] : SmallModels()) {
    if (name != "squeezenet1_1" && name != "resnet50" && name != "mobilenet_v2") continue;
    LayoutDpOptions exact;
    exact.threshold = 0;
    exact.pareto = false;
    exact.max_states = 1 << 16;
    LayoutDpReport re, rp;
    auto e = AssignLayouts(g, costs_, exact, &re);
    auto p = AssignLayouts(g, costs_, LayoutDpOptions(), &rp);
    ASSERT_TRUE(e.ok() && p.ok());
    if (!re.exact) continue;  // over the budget: no exact figure to compare with
    EXPECT_GE(p->cost_us, e->cost_us * (1 - 1e-12)) << name;
    std::printf("%-16s exact %.2f us (peak %d states), pruned %.2f us (peak %d): gap %.4f%%\n",
                name.c_str(), e->cost_us, re.peak_states, p->cost_us, rp.peak_states,
                100 * (p->cost_us / e->cost_us - 1));
  }
}

TEST_F(LayoutAssignTest, CommittedExportsGetValidAssignments) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("data/models", ec))
    if (e.path().extension() == ".onnx") files.push_back(e.path().string());
  if (files.empty()) GTEST_SKIP() << "no data/models/*.onnx in this tree";
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    auto g = runtime::ImportOnnxFile(f);
    ASSERT_TRUE(g.ok()) << g.status().message();
    LayoutDpReport r;
    auto a = AssignLayouts(*g, costs_, LayoutDpOptions(), &r);
    ASSERT_TRUE(a.ok()) << f << ": " << a.status().message();
    ExpectValidAssignment(f, *g, costs_, *a);
    EXPECT_LE(r.max_cut_width, r.given_max_cut_width) << f;
  }
}

TEST_F(LayoutAssignTest, DenseNetCutsAreWideInAnyOrder) {
  runtime::models::BuildOptions options;
  options.image_size = 96;
  auto g = runtime::ImportOnnxModel(runtime::models::BuildDenseNet121(options), "densenet121");
  ASSERT_TRUE(g.ok());
  auto p = BuildLayoutProblem(*g, costs_);
  ASSERT_TRUE(p.ok());
  std::vector<int> greedy = GreedyNarrowOrder(*p);
  EXPECT_TRUE(IsTopologicalOrder(*p, greedy));
  const int given = MaxCutWidth(*p, GivenOrder(*p)), narrow = MaxCutWidth(*p, greedy);
  std::printf("densenet121: max cut width %d in the graph's order, %d greedy\n", given, narrow);
  EXPECT_GE(given, 20);  // a dense block keeps its feature maps live
  EXPECT_LE(narrow, given);
}

TEST_F(LayoutAssignTest, SmallBeamOnDenseNetStaysValidAndSaysSo) {
  runtime::models::BuildOptions options;
  options.image_size = 96;
  auto g = runtime::ImportOnnxModel(runtime::models::BuildDenseNet121(options), "densenet121");
  ASSERT_TRUE(g.ok());
  LayoutDpOptions o;
  o.pareto = false;  // let the beam do the work
  o.max_states = 8;
  LayoutDpReport r;
  auto a = AssignLayouts(*g, costs_, o, &r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ExpectValidAssignment("densenet121 beam 8", *g, costs_, *a);
  EXPECT_LE(r.peak_states, 8);
  EXPECT_GT(r.beam_cuts, 0);
  EXPECT_GT(r.pruned_beam, 0);
  EXPECT_FALSE(r.exact);
  EXPECT_GE(r.cost_us, r.lower_bound_us);
}

// A source that runs nothing: the error names the node.
class NoKernels : public LayoutCostSource {
 public:
  std::string Name() const override { return "none"; }
  std::optional<double> KernelCostUs(const runtime::Graph&, const runtime::Node&,
                                     std::span<const Layout>,
                                     std::span<const Layout>) const override {
    return std::nullopt;
  }
  double ConversionCostUs(const runtime::Value&, Layout, Layout) const override { return 1; }
};

TEST_F(LayoutAssignTest, NoAdmissibleCombinationIsAnError) {
  runtime::models::BuildOptions options;
  options.image_size = 32;
  auto g = runtime::ImportOnnxModel(runtime::models::BuildSqueezeNet11(options), "squeezenet");
  ASSERT_TRUE(g.ok());
  auto a = AssignLayouts(*g, NoKernels(), LayoutDpOptions(), nullptr);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("runs in no layout combination of cost source none"),
            std::string::npos)
      << a.status().message();
}

// Every field of two problems, for the pricing cache's test.
void ExpectSameProblem(const LayoutProblem& a, const LayoutProblem& b) {
  ASSERT_EQ(a.values.size(), b.values.size());
  for (size_t v = 0; v < a.values.size(); ++v) {
    EXPECT_EQ(a.values[v].graph_value, b.values[v].graph_value);
    EXPECT_EQ(a.values[v].candidates, b.values[v].candidates);
    EXPECT_EQ(a.values[v].graph_input, b.values[v].graph_input);
    EXPECT_EQ(a.values[v].graph_output, b.values[v].graph_output);
    EXPECT_EQ(a.values[v].conversion_us, b.values[v].conversion_us) << a.values[v].name;
  }
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t n = 0; n < a.nodes.size(); ++n) {
    const LayoutProblemNode &x = a.nodes[n], &y = b.nodes[n];
    EXPECT_EQ(x.graph_node, y.graph_node);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    ASSERT_EQ(x.choices.size(), y.choices.size()) << x.name;
    for (size_t c = 0; c < x.choices.size(); ++c) {
      EXPECT_EQ(x.choices[c].inputs, y.choices[c].inputs) << x.name;
      EXPECT_EQ(x.choices[c].outputs, y.choices[c].outputs) << x.name;
      EXPECT_EQ(x.choices[c].cost_us, y.choices[c].cost_us) << x.name;
    }
  }
}

// The most nodes of `x` a cache may have to price again, given which nodes are new (not in any
// graph priced before): for a source whose costs need no context, the new nodes themselves.
using RepricingBound = std::function<int64_t(const runtime::Graph& x, const LayoutProblem& p,
                                             const std::vector<char>& is_new)>;

int64_t NewNodesIn(const runtime::Graph& x, const LayoutProblem& p,
                   const std::vector<char>& is_new) {
  (void)x;
  int64_t n = 0;
  for (const LayoutProblemNode& pn : p.nodes) n += is_new[pn.graph_node];
  return n;
}

// The joint search prices every graph it builds through a LayoutPricingCache: on each graph of a
// search over `models` (shipped rules, `costs` changing with the layouts), the problem built with
// the cache is the one built afresh, every node no earlier graph had is priced afresh, and no
// more nodes than `bound` says. Returns the graphs compared.
int64_t ExpectPricingCacheExact(const LayoutCostSource& costs,
                                const std::vector<std::string>& models,
                                const RepricingBound& bound) {
  auto rules = testing::ShippedRules();
  EXPECT_NE(rules, nullptr);
  if (!rules) return 0;
  int64_t graphs = 0;
  for (auto& [name, g] : SmallModels()) {
    if (std::find(models.begin(), models.end(), name) == models.end()) continue;
    SCOPED_TRACE(name);
    LayoutPricingCache cache;
    std::set<const runtime::Node*> seen;  // nodes of the graphs priced so far, held below
    std::vector<std::shared_ptr<const runtime::Node>> held;
    int64_t model_graphs = 0;
    OptimizeOptions o;
    o.search.time_limit_s = 0;
    o.search.budget = 6;
    o.search.graph_cost = [&](const runtime::Graph& x) -> StatusOr<double> {
      const int64_t misses = cache.node_misses;
      auto cached = BuildLayoutProblem(x, costs, {}, nullptr, &cache);
      auto fresh = BuildLayoutProblem(x, costs);
      EXPECT_EQ(cached.ok(), fresh.ok());
      if (!cached.ok() || !fresh.ok()) return cached.status();
      ExpectSameProblem(*cached, *fresh);
      std::vector<char> is_new(x.num_nodes());
      for (int i = 0; i < x.num_nodes(); ++i) is_new[i] = seen.count(&x.node(i)) == 0;
      const int64_t priced = cache.node_misses - misses;
      EXPECT_GE(priced, NewNodesIn(x, *cached, is_new)) << "graph " << model_graphs;
      EXPECT_LE(priced, bound(x, *cached, is_new)) << "graph " << model_graphs;
      for (int i = 0; i < x.num_nodes(); ++i)
        if (seen.insert(&x.node(i)).second) held.push_back(x.node_ptr(i));
      ++graphs;
      ++model_graphs;
      auto s = SolveLayoutProblem(*cached, LayoutDpOptions(), nullptr);
      if (!s.ok()) return s.status();
      return s->cost_us;
    };
    runtime::Graph out;
    OptimizeReport report;
    Status st = Optimize(g, *rules, o, &out, &report);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_GE(model_graphs, 4);  // the input, rewrites of it, the result
    EXPECT_GT(cache.node_hits, 0);
  }
  return graphs;
}

TEST_F(LayoutAssignTest, PricingCacheGivesTheProblemBuiltAfresh) {
  // Analytic costs need no context: exactly the new nodes are priced.
  EXPECT_GT(ExpectPricingCacheExact(
                costs_, {"resnet50", "squeezenet1_1", "densenet121", "bert_small"}, NewNodesIn),
            16);
}

#ifdef VERISUB_HAVE_DNNL
// The same with oneDNN's measured costs, where a node's costs depend on its fusion group.
TEST(MeasuredLayoutCostsTest, PricingCacheGivesTheProblemBuiltAfresh) {
  runtime::MeasuredCpuCostModel model({}, runtime::CostTable(runtime::ThisMachine(1)));
  MeasuredLayoutCosts costs(&model);
  // A node's fusion group changes only where a new node joins, leaves or touches it: at most the
  // new nodes, the nodes sharing a value with one, and the rest of their groups.
  auto touched = [](const runtime::Graph& x, const LayoutProblem& p,
                    const std::vector<char>& is_new) -> int64_t {
    std::vector<char> value(x.num_values(), 0), node(x.num_nodes(), 0);
    auto ends = [&](const runtime::Node& n) {
      std::vector<int> v(n.inputs.begin(), n.inputs.end());
      v.insert(v.end(), n.outputs.begin(), n.outputs.end());
      return v;
    };
    for (int i = 0; i < x.num_nodes(); ++i)
      if (is_new[i])
        for (int v : ends(x.node(i)))
          if (v != runtime::kNoValue) value[v] = 1;
    for (int i = 0; i < x.num_nodes(); ++i) {
      node[i] = is_new[i];
      for (int v : ends(x.node(i))) node[i] |= v != runtime::kNoValue && value[v];
    }
    const runtime::dnnl_backend::FusionPlan plan = runtime::dnnl_backend::PlanFusion(x);
    for (const runtime::dnnl_backend::Group& group : plan.groups) {
      bool any = false;
      for (int m : group.members) any |= node[m] != 0;
      if (any)
        for (int m : group.members) node[m] = 1;
    }
    int64_t n = 0;
    for (const LayoutProblemNode& pn : p.nodes) n += node[pn.graph_node];
    return n;
  };
  EXPECT_GT(ExpectPricingCacheExact(costs, {"squeezenet1_1", "mobilenet_v2"}, touched), 8);
}
#endif

}  // namespace
}  // namespace verisub::rewriter
