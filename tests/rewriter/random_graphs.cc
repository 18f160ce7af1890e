// Random graphs for the rewriter fuzzers.
#include "tests/rewriter/random_graphs.h"

#include <random>
#include <string>
#include <vector>

#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter::testing {
namespace {

struct Tensor4 {
  int id;
  int64_t channels;
};

}  // namespace

runtime::Graph RandomConvGraph(uint64_t seed, bool more_ops) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  GraphBuilder b;
  std::vector<Tensor4> pool;
  std::vector<int> used;
  int64_t c0 = 2 + pick(3);
  pool.push_back({b.Input("x", {1, c0, 6, 6}), c0});
  int weights = 0;
  const int steps = 3 + pick(6);
  for (int s = 0; s < steps; ++s) {
    const Tensor4 t = pool[pick(static_cast<int>(pool.size()))];
    switch (pick(more_ops ? 8 : 7)) {
      case 0:
      case 1: {  // convolution (often several of one input, so merges can fire)
        int64_t out_c = 1 + pick(4);
        int64_t k = pick(2) ? 3 : 1;
        int w = b.Weight("w" + std::to_string(weights++), {out_c, t.channels, k, k}, rng());
        std::string act = pick(2) ? "relu" : "none";
        pool.push_back(
            {b.Op("conv2d[stride_h=1,stride_w=1,padding=same,activation=" + act + ",group=1]",
                  {t.id, w}),
             out_c});
        break;
      }
      case 2: {
        const char* ops[] = {"relu", "tanh", "sigmoid"};
        pool.push_back({b.Op(ops[pick(3)], {t.id}), t.channels});
        break;
      }
      case 3: {  // elementwise with a same-shaped tensor, if any
        for (const Tensor4& u : pool)
          if (u.channels == t.channels && u.id != t.id) {
            pool.push_back({b.Op(pick(2) ? "ewadd" : "ewmul", {t.id, u.id}), t.channels});
            break;
          }
        break;
      }
      case 4: {
        const Tensor4 u = pool[pick(static_cast<int>(pool.size()))];
        int c = b.Op("concat[axis=1]", {t.id, u.id});
        if (pick(2)) {
          auto parts = b.Ops("split[axis=1]", {c});
          pool.push_back({parts[0], t.channels});
          pool.push_back({parts[1], u.channels});
        } else {
          pool.push_back({c, t.channels + u.channels});
        }
        break;
      }
      case 5:
        pool.push_back({b.Op(std::string(more_ops && pick(2) ? "pool_max" : "pool_avg") +
                                 "[kernel_h=3,kernel_w=3,stride_h=1,stride_w=1,padding=same,"
                                 "activation=none]",
                             {t.id}),
                        t.channels});
        break;
      case 6:
        if (more_ops && pick(2)) {
          int s = b.Weight("s" + std::to_string(weights++), {}, rng());
          pool.push_back({b.Op("smul", {t.id, s}), t.channels});
          break;
        }
        [[fallthrough]];
      default:
        pool.push_back({b.Op("relu", {t.id}), t.channels});
        break;
    }
  }
  // Every value nobody reads becomes an output, so nothing is dead.
  runtime::Graph draft = b.Finish();
  std::vector<int> uses = draft.UseCounts();
  for (size_t i = 1; i < pool.size(); ++i)
    if (uses[pool[i].id] == 0) b.Output(pool[i].id);
  if (pool.size() == 1) b.Output(b.Op("relu", {pool[0].id}));
  return b.Finish();
}

runtime::Graph RandomMatmulGraph(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  GraphBuilder b;
  std::vector<std::pair<int, std::vector<int64_t>>> pool;
  pool.push_back({b.Input("a", {4, 5}), {4, 5}});
  int weights = 0;
  const int steps = 3 + pick(6);
  for (int s = 0; s < steps; ++s) {
    auto t = pool[pick(static_cast<int>(pool.size()))];
    switch (pick(4)) {
      case 0:
      case 1: {
        int64_t n = 2 + pick(4);
        int w = pick(3) ? b.Weight("w" + std::to_string(weights++), {t.second[1], n}, rng())
                        : b.Input("in" + std::to_string(weights++), {t.second[1], n});
        const char* act = pick(2) ? "matmul[activation=none]" : "matmul[activation=relu]";
        pool.push_back({b.Op(act, {t.first, w}), {t.second[0], n}});
        break;
      }
      case 2:
        pool.push_back({b.Op("transpose[perm=[1,0]]", {t.first}), {t.second[1], t.second[0]}});
        break;
      default:
        for (const auto& u : pool)
          if (u.second == t.second && u.first != t.first) {
            pool.push_back({b.Op("ewadd", {t.first, u.first}), t.second});
            break;
          }
        pool.push_back({b.Op("relu", {t.first}), t.second});
        break;
    }
  }
  runtime::Graph draft = b.Finish();
  std::vector<int> uses = draft.UseCounts();
  for (size_t i = 1; i < pool.size(); ++i)
    if (uses[pool[i].first] == 0) b.Output(pool[i].first);
  return b.Finish();
}

runtime::Graph RandomGraph(uint64_t seed) {
  switch (seed % 3) {
    case 0:
      return RandomMatmulGraph(seed);
    case 1:
      return RandomConvGraph(seed, /*more_ops=*/false);
    default:
      return RandomConvGraph(seed, /*more_ops=*/true);
  }
}

}  // namespace verisub::rewriter::testing
