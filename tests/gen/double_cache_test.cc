// The double cache gives the values a plain evaluation gives, across generations.
#include "gen/double_cache.h"

#include <gtest/gtest.h>

#include "gen/graph_terms.h"
#include "specs/evaluate.h"
#include "specs/semantics.h"

namespace verisub::gen {
namespace {

constexpr const char* kSpace = R"(
input x0 [2,4]
input x1 [2,4]
input y [4,4]
double_tests 2
op matmul activation=none
op ewadd
op relu
op concat axis=1
op split axis=1
)";

// Values of every operator output of g on test t, computed directly.
std::vector<specs::Tensor<double>> Direct(const SearchSpace& s, const Graph& g, int t) {
  const int num_initial = static_cast<int>(s.initial.size());
  std::vector<specs::Tensor<double>> v(2 * g.ops.size());
  specs::DoubleSemantics db;
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const specs::Tensor<double>* in[specs::kMaxOpInputs];
    for (int i = 0; i < 2 && g.ops[k].in[i] != kNoTensor; ++i) {
      int id = g.ops[k].in[i];
      in[i] = id < num_initial ? &s.doubles[t][id] : &v[id - num_initial];
    }
    const OpInstance& inst = s.config->ops[g.ops[k].inst];
    EXPECT_TRUE(specs::Evaluate(db, inst.kind, inst.params, in, &v[2 * k]).ok());
  }
  return v;
}

TEST(DoubleCacheTest, ValuesMatchAPlainEvaluationAcrossGenerations) {
  auto config = ParseConfig(kSpace, "test.cfg");
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto s = BuildSearchSpace(*config);
  ASSERT_TRUE(s.ok());
  // Instances are sorted: matmul 0, ewadd 1, relu 2, concat 3, split 4. Tensors: x0 0, x1 1,
  // y 2, then operator k's outputs 3 + 2k and 4 + 2k.
  Graph a;  // relu(ewadd(matmul(x0, y), x1))
  a.ops.push_back(GraphOp{0, {0, 2}});
  a.ops.push_back(GraphOp{1, {3, 1}});
  a.ops.push_back(GraphOp{2, {5, kNoTensor}});
  Graph b;  // split(concat(matmul(x0, y), x1)): two outputs
  b.ops.push_back(GraphOp{0, {0, 2}});
  b.ops.push_back(GraphOp{3, {3, 1}});
  b.ops.push_back(GraphOp{4, {5, kNoTensor}});
  for (size_t budget : {size_t{1}, size_t{1} << 30}) {
    DoubleCache cache(*s, budget);
    for (int round = 0; round < 3; ++round)
      for (const Graph* g : {&a, &b, &a}) {
        cache.Trim();
        uint64_t keys[kMaxGraphOutputs];
        OpTermKeys(*s, *g, keys);
        const DoubleCache::Values* values[kMaxGraphOutputs];
        cache.Evaluate(*g, keys, values);
        for (int t = 0; t < 2; ++t) {
          auto direct = Direct(*s, *g, t);
          for (size_t k = 0; k < g->ops.size(); ++k)
            for (int j = 0; j < s->num_outputs[g->ops[k].inst]; ++j) {
              const auto& got = (*values[2 * k + j])[t];
              EXPECT_TRUE(got.type == direct[2 * k + j].type);
              EXPECT_EQ(got.data, direct[2 * k + j].data) << "op " << k << " output " << j;
            }
        }
      }
    // matmul(x0, y) is shared by both graphs: with room to keep it, later lookups reuse it.
    if (budget > 1) {
      EXPECT_GT(cache.reused(), cache.evaluated());
    }
    EXPECT_GT(cache.evaluated(), 0u);
  }
}

}  // namespace
}  // namespace verisub::gen
