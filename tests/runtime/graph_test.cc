// Graph IR: invariant checker, copy-on-write sharing, dead-code removal.
#include "runtime/graph.h"

#include <gtest/gtest.h>

#include "runtime/graph_hash.h"
#include "runtime/onnx_import.h"
#include "specs/ops/transpose.h"
#include "specs/registry.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

Value FloatValue(const std::string& name, std::vector<int64_t> dims) {
  Value v;
  v.name = name;
  v.dims = std::move(dims);
  v.rank_known = true;
  return v;
}

Node Spec(specs::OpKind kind, std::vector<int> in, std::vector<int> out, const std::string& name) {
  Node n;
  n.name = name;
  n.op = kind;
  n.params = specs::GetOp(kind).DefaultParams();
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// x -> relu -> a ; x -> sigmoid -> b ; ewadd(a, b) -> y
Graph Diamond(bool swap_order, const std::string& prefix) {
  Graph g;
  int x = g.AddValue(FloatValue(prefix + "x", {2, 3}));
  int a = g.AddValue(FloatValue(prefix + "a", {2, 3}));
  int b = g.AddValue(FloatValue(prefix + "b", {2, 3}));
  int y = g.AddValue(FloatValue(prefix + "y", {2, 3}));
  g.mutable_inputs().push_back(x);
  if (swap_order) {
    g.AddNode(Spec(specs::OpKind::kSigmoid, {x}, {b}, prefix + "s"));
    g.AddNode(Spec(specs::OpKind::kRelu, {x}, {a}, prefix + "r"));
  } else {
    g.AddNode(Spec(specs::OpKind::kRelu, {x}, {a}, prefix + "r"));
    g.AddNode(Spec(specs::OpKind::kSigmoid, {x}, {b}, prefix + "s"));
  }
  g.AddNode(Spec(specs::OpKind::kEwAdd, {a, b}, {y}, prefix + "add"));
  g.mutable_outputs().push_back(y);
  return g;
}

TEST(GraphTest, CheckerAcceptsValidGraph) {
  Graph g = Diamond(false, "");
  EXPECT_TRUE(CheckGraph(g).ok());
  EXPECT_TRUE(InferSpecTypes(&g).ok());
}

TEST(GraphTest, CheckerRejectsUseBeforeDefinition) {
  Graph g = Diamond(false, "");
  auto nodes = g.nodes();
  std::swap(nodes[0], nodes[2]);  // the add now reads a before relu defines it
  g.SetNodes(nodes);
  Status st = CheckGraph(g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'add'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("before it is defined"), std::string::npos) << st.message();
}

TEST(GraphTest, CheckerRejectsDoubleDefinitionAndWrongArity) {
  Graph g = Diamond(false, "");
  Node n = g.node(1);
  n.outputs = {g.node(0).outputs[0]};
  g.SetNode(1, n);
  EXPECT_NE(CheckGraph(g).message().find("already defined"), std::string::npos);

  Graph h = Diamond(false, "");
  Node add = h.node(2);
  add.inputs.pop_back();
  h.SetNode(2, add);
  EXPECT_NE(CheckGraph(h).message().find("wrong number of inputs"), std::string::npos);
}

TEST(GraphTest, CheckerRejectsALayoutThatDoesNotFitTheRank) {
  Graph g = Diamond(false, "");
  g.mutable_value(g.outputs()[0]).layout = specs::Layout::kColMajor;  // rank 2: fits
  EXPECT_TRUE(CheckGraph(g).ok());
  EXPECT_EQ(ValueLayouts(g)[g.outputs()[0]], specs::Layout::kColMajor);
  g.mutable_value(g.inputs()[0]).layout = specs::Layout::kNCHW8c;  // needs rank 4
  Status st = CheckGraph(g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'x' is stored nchw8c"), std::string::npos) << st.message();
}

TEST(GraphTest, CopiesShareNodesAndCopyOnWrite) {
  Graph a = Diamond(false, "");
  Graph b = a;
  EXPECT_EQ(a.node_ptr(0).get(), b.node_ptr(0).get());
  b.mutable_node(1).name = "changed";
  EXPECT_EQ(a.node(1).name, "s");
  EXPECT_EQ(b.node(1).name, "changed");
  EXPECT_EQ(a.node_ptr(0).get(), b.node_ptr(0).get());  // untouched nodes stay shared
  EXPECT_NE(a.node_ptr(1).get(), b.node_ptr(1).get());
}

TEST(GraphTest, WeightsAreSharedAcrossCopies) {
  auto g = ImportOnnxBytes(testing::SmallCnnBytes(), "cnn");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph copy = *g;
  int shared = 0;
  for (int v = 0; v < g->num_values(); ++v)
    if (g->value(v).constant) shared += g->value(v).constant.get() == copy.value(v).constant.get();
  EXPECT_GT(shared, 5);
}

TEST(GraphTest, RemoveDeadCodeDropsUnusedNodesAndValues) {
  Graph g = Diamond(false, "");
  int extra = g.AddValue(FloatValue("unused", {2, 3}));
  g.AddNode(Spec(specs::OpKind::kTanh, {g.inputs()[0]}, {extra}, "dead"));
  EXPECT_EQ(g.num_nodes(), 4);
  g.RemoveDeadCode();
  EXPECT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.num_values(), 4);
  EXPECT_TRUE(CheckGraph(g).ok());
  EXPECT_EQ(StructuralHash(g), StructuralHash(Diamond(false, "")));
}

TEST(GraphTest, InferSpecTypesRejectsContradictingShapes) {
  Graph g = Diamond(false, "");
  g.mutable_value(g.outputs()[0]).dims = {3, 3};
  Status st = InferSpecTypes(&g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'add'"), std::string::npos) << st.message();
}

TEST(GraphTest, OpCountsAreSortedByKind) {
  auto counts = OpCounts(Diamond(false, ""));
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[0].first, "ewadd");
  EXPECT_EQ(counts[1].first, "relu");
  EXPECT_EQ(counts[2].first, "sigmoid");
}

}  // namespace
}  // namespace verisub::runtime

namespace verisub::runtime {
namespace {

TEST(ValueTest, AcceptsShapesThatFitItsFixedDimensions) {
  Value v;
  EXPECT_TRUE(v.Accepts({7, 7}));  // rank unknown
  v.rank_known = true;
  v.dims = {-1, 3};
  EXPECT_TRUE(v.Accepts({8, 3}));
  EXPECT_FALSE(v.Accepts({8, 4}));
  EXPECT_FALSE(v.Accepts({8, 3, 1}));
  v.dims = {};
  EXPECT_TRUE(v.Accepts({}));
  EXPECT_FALSE(v.Accepts({1}));
}

}  // namespace
}  // namespace verisub::runtime
