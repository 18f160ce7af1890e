// conv2d's numeric fast path (whole output planes at a time) against its generic path (one
// output at a time, as for symbolic semantics): equal results for every parameter value.
#include <gtest/gtest.h>

#include <random>

#include "specs/evaluate.h"
#include "specs/ops/conv2d.h"
#include "specs/semantics.h"

namespace verisub::specs {
namespace {

// A semantics whose element is not an arithmetic type, so Conv2dKernel takes its generic path.
template <class S>
struct Boxed {
  struct Elem {
    typename S::Elem v;
  };
  S s;
  Elem Zero() const { return {s.Zero()}; }
  Elem Add(Elem a, Elem b) const { return {s.Add(a.v, b.v)}; }
  Elem Mul(Elem a, Elem b) const { return {s.Mul(a.v, b.v)}; }
  Elem Activate(Activation act, Elem x) const { return {s.Activate(act, x.v)}; }
};

// Returns false when the shape rule refuses the shapes.
template <class S>
bool ExpectPathsAgree(const Shape& xs, const Shape& ws, const Params& p, uint64_t seed) {
  const TensorType xt(xs), wt(ws);
  const TensorType* types[2] = {&xt, &wt};
  TensorType out_type[kMaxOpOutputs];
  if (!InferTypes(OpKind::kConv2d, p, types, out_type).ok()) return false;
  std::mt19937_64 rng(seed);
  S s;
  auto fill = [&](Tensor<typename S::Elem>* t) {
    for (int64_t i = 0; i < t->shape().NumElements(); ++i) {
      if constexpr (std::is_floating_point_v<typename S::Elem>) {
        t->data.push_back(std::uniform_real_distribution<double>(-1, 1)(rng));
      } else {
        t->data.push_back(static_cast<typename S::Elem>(rng() % ModIntSemantics::kPrime));
      }
    }
  };
  Tensor<typename S::Elem> x{xt, {}}, w{wt, {}};
  fill(&x);
  fill(&w);
  const Tensor<typename S::Elem>* in[2] = {&x, &w};
  Tensor<typename S::Elem> fast[kMaxOpOutputs];
  fast[0].type = out_type[0];
  ops::Conv2dKernel(s, p, in, fast);

  using B = Boxed<S>;
  Tensor<typename B::Elem> bx{xt, {}}, bw{wt, {}};
  for (auto v : x.data) bx.data.push_back({v});
  for (auto v : w.data) bw.data.push_back({v});
  const Tensor<typename B::Elem>* bin[2] = {&bx, &bw};
  Tensor<typename B::Elem> generic[kMaxOpOutputs];
  generic[0].type = out_type[0];
  ops::Conv2dKernel(B{}, p, bin, generic);

  EXPECT_EQ(fast[0].data.size(), generic[0].data.size());
  for (size_t i = 0; i < fast[0].data.size() && i < generic[0].data.size(); ++i)
    EXPECT_EQ(fast[0].data[i], generic[0].data[i].v)
        << "x " << xs.ToString() << " w " << ws.ToString() << " element " << i;
  return true;
}

TEST(Conv2dKernelTest, FastPathEqualsGenericPath) {
  uint64_t seed = 1;
  int checked = 0;
  for (int64_t stride_h : {1, 2})
    for (int64_t stride_w : {1, 2})
      for (auto padding : {Padding::kSame, Padding::kValid})
        for (auto act : {Activation::kNone, Activation::kRelu, Activation::kTanh})
          for (int64_t group : {int64_t{1}, int64_t{2}, kDepthwiseGroup})
            for (const auto& [h, w, kh, kw] : std::vector<std::array<int64_t, 4>>{{5, 5, 3, 3},
                                                                                  {5, 5, 1, 3},
                                                                                  {5, 5, 3, 1},
                                                                                  {4, 6, 3, 3},
                                                                                  {2, 2, 3, 3},
                                                                                  {7, 3, 5, 2},
                                                                                  {1, 1, 1, 1}}) {
              Params p;
              p[ops::kConvStrideH] = stride_h;
              p[ops::kConvStrideW] = stride_w;
              p[ops::kConvPadding] = static_cast<int64_t>(padding);
              p[ops::kConvActivation] = static_cast<int64_t>(act);
              p[ops::kConvGroup] = group;
              const int64_t c = 4, groups = group == kDepthwiseGroup ? c : group;
              const Shape xs{2, c, h, w}, ws{4, c / groups, kh, kw};
              checked += ExpectPathsAgree<DoubleSemantics>(xs, ws, p, ++seed);
              checked += ExpectPathsAgree<ModIntSemantics>(xs, ws, p, ++seed);
            }
  EXPECT_GT(checked, 500);
}

}  // namespace
}  // namespace verisub::specs
