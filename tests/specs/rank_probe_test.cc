// Rank probing: the output ranks the probes find are those of every well-typed input of those
// ranks (random shapes and concat histories), no well-typed input is missed, and the facts of
// the operators the axioms rely on are as expected.
#include "specs/rank_probe.h"

#include <gtest/gtest.h>

#include <random>

#include "specs/evaluate.h"

namespace verisub::specs {
namespace {

Params ParamsOf(const char* op, const std::vector<std::pair<const char*, const char*>>& kv) {
  const OpSpec& spec = *FindOp(op);
  Params p = spec.DefaultParams();
  for (const auto& [name, value] : kv)
    EXPECT_TRUE(ParseParamValue(*spec.FindParam(name), value, &p).ok());
  return p;
}

int Rank(const char* op, const Params& p, std::vector<int> ranks, int output = 0) {
  std::vector<int> out;
  if (!ProbeOutputRanks(FindOp(op)->kind, p, ranks, &out)) return -1;
  return out[output];
}

TEST(RankProbeTest, OperatorsTheAxiomsRelyOn) {
  Params mm = ParamsOf("matmul", {});
  EXPECT_EQ(Rank("matmul", mm, {2, 2}), 2);
  EXPECT_EQ(Rank("matmul", mm, {3, 2}), 3);
  EXPECT_EQ(Rank("matmul", mm, {2, 4}), 4);
  EXPECT_EQ(Rank("matmul", mm, {1, 2}), -1);
  Params conv = ParamsOf("conv2d", {{"padding", "valid"}, {"group", "dw"}});
  EXPECT_EQ(Rank("conv2d", conv, {4, 4}), 4);
  EXPECT_EQ(ProbeRankCases(FindOp("conv2d")->kind, conv).size(), 1u);
  Params split = ParamsOf("split", {{"axis", "1"}});
  EXPECT_EQ(Rank("split", split, {2}, 0), 2);
  EXPECT_EQ(Rank("split", split, {3}, 1), 3);
  EXPECT_EQ(Rank("split", split, {1}), -1);
  EXPECT_EQ(Rank("concat", ParamsOf("concat", {{"axis", "1"}}), {2, 2}), 2);
  EXPECT_EQ(Rank("concat", ParamsOf("concat", {{"axis", "1"}}), {2, 3}), -1);
  EXPECT_EQ(Rank("smul", ParamsOf("smul", {}), {3, 0}), 3);
  EXPECT_EQ(Rank("smul", ParamsOf("smul", {}), {3, 1}), -1);
  EXPECT_EQ(Rank("transpose", ParamsOf("transpose", {{"perm", "[1,0]"}}), {2}), 2);
  EXPECT_EQ(Rank("transpose", ParamsOf("transpose", {{"perm", "[1,0]"}}), {3}), -1);
  // A pooling window of 3 with padding=valid needs inputs of at least 3.
  Params pool = ParamsOf("pool_max", {{"padding", "valid"}});
  EXPECT_EQ(Rank("pool_max", pool, {4}), 4);
  EXPECT_EQ(Rank("const_imatmul", ParamsOf("const_imatmul", {}), {3}), 2);
  // Reshape: only a target shape the probes' element counts reach.
  Params reshape = ParamsOf("reshape", {{"shape", "[1,1,1]"}});
  EXPECT_EQ(Rank("reshape", reshape, {2}), 3);
}

TEST(RankProbeTest, CasesAreEveryTypeCheckingCombinationInOrder) {
  auto cases = ProbeRankCases(FindOp("ewadd")->kind, Params());
  ASSERT_EQ(cases.size(), 5u);
  for (int r = 0; r <= kProbeMaxRank; ++r) {
    EXPECT_EQ(cases[r].inputs, (std::vector<int>{r, r}));
    EXPECT_EQ(cases[r].outputs, (std::vector<int>{r}));
  }
}

// Every parameter assignment of an operator's domains (reshape, with no domain, is left out).
std::vector<Params> AllParams(const OpSpec& op) {
  std::vector<Params> out = {op.DefaultParams()};
  for (const ParamDesc& d : op.params) {
    if (d.domain.empty()) continue;
    std::vector<Params> next;
    for (const Params& p : out)
      for (int64_t v : d.domain) {
        next.push_back(p);
        next.back()[d.slot] = v;
      }
    out = std::move(next);
  }
  return out;
}

// A random type of the given rank: small dimensions, often all equal (so that equality
// constraints between inputs hold), sometimes with a concat history.
TensorType RandomType(int rank, int64_t common, std::mt19937_64& rng) {
  TensorType t;
  t.shape.rank = rank;
  for (int d = 0; d < rank; ++d) {
    t.shape[d] = common > 0 ? common : static_cast<int64_t>(rng() % 4 + 1);
    if (t.shape[d] >= 2 && rng() % 2) t.trees[d] = ConcatTrees(t.shape[d] / 2, nullptr, nullptr);
  }
  return t;
}

TEST(RankProbeTest, ProbesFindTheRankOfEveryWellTypedInput) {
  std::mt19937_64 rng(7);
  int well_typed = 0;
  for (const OpSpec& op : AllOps()) {
    if (op.kind == OpKind::kReshape) continue;
    for (const Params& p : AllParams(op)) {
      std::vector<int> ranks(op.num_inputs, 0);
      while (true) {
        std::vector<int> probed;
        bool known = ProbeOutputRanks(op.kind, p, ranks, &probed);
        for (int sample = 0; sample < 12; ++sample) {
          int64_t common = sample % 2 ? static_cast<int64_t>(rng() % 4 + 1) : 0;
          TensorType in[kMaxOpInputs], out[kMaxOpOutputs];
          const TensorType* ptrs[kMaxOpInputs];
          for (int i = 0; i < op.num_inputs; ++i) {
            in[i] = RandomType(ranks[i], common, rng);
            ptrs[i] = &in[i];
          }
          if (!InferTypes(op.kind, p, ptrs, out).ok()) continue;
          ++well_typed;
          ASSERT_TRUE(known) << op.name << ": well-typed at " << in[0].ToString()
                             << " but no probe of those ranks type-checks";
          for (int k = 0; k < op.num_outputs; ++k)
            ASSERT_EQ(out[k].shape.rank, probed[k]) << op.name << " output " << k;
        }
        int k = op.num_inputs - 1;
        while (k >= 0 && ranks[k] == kMaxRank) ranks[k--] = 0;
        if (k < 0) break;
        ++ranks[k];
      }
    }
  }
  EXPECT_GT(well_typed, 1000);
}

}  // namespace
}  // namespace verisub::specs
