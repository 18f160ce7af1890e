// conv2d's and matmul's numeric fast paths (whole output planes or rows, several output channels
// or rows at a time) against their generic paths (one output at a time, as for symbolic
// semantics): equal results for every parameter value and every remainder of the blocking.
#include <gtest/gtest.h>

#include <random>

#include "specs/evaluate.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/matmul.h"
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

// Runs `op`'s kernel (conv2d or matmul) in semantics S.
template <class S>
void RunKernel(OpKind op, const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
               Tensor<typename S::Elem>* out) {
  if (op == OpKind::kConv2d)
    ops::Conv2dKernel(s, p, in, out);
  else
    ops::MatmulKernel(s, p, in, out);
}

// Returns false when the shape rule refuses the shapes.
template <class S>
bool ExpectPathsAgree(OpKind op, const Shape& xs, const Shape& ws, const Params& p, uint64_t seed) {
  const TensorType xt(xs), wt(ws);
  const TensorType* types[2] = {&xt, &wt};
  TensorType out_type[kMaxOpOutputs];
  if (!InferTypes(op, p, types, out_type).ok()) return false;
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
  RunKernel(op, s, p, in, fast);

  using B = Boxed<S>;
  Tensor<typename B::Elem> bx{xt, {}}, bw{wt, {}};
  for (auto v : x.data) bx.data.push_back({v});
  for (auto v : w.data) bw.data.push_back({v});
  const Tensor<typename B::Elem>* bin[2] = {&bx, &bw};
  Tensor<typename B::Elem> generic[kMaxOpOutputs];
  generic[0].type = out_type[0];
  RunKernel(op, B{}, p, bin, generic);

  EXPECT_EQ(fast[0].data.size(), generic[0].data.size());
  for (size_t i = 0; i < fast[0].data.size() && i < generic[0].data.size(); ++i)
    EXPECT_EQ(fast[0].data[i], generic[0].data[i].v)
        << "x " << xs.ToString() << " w " << ws.ToString() << " element " << i;
  EXPECT_FALSE(fast[0].data.empty());
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
                                                                                  {4, 6, 1, 1},
                                                                                  {1, 1, 1, 1}})
              // 6 and 12 output channels: blocks of the kernel's size and remainders, per group.
              for (int64_t out_channels : {6, 12}) {
                Params p;
                p[ops::kConvStrideH] = stride_h;
                p[ops::kConvStrideW] = stride_w;
                p[ops::kConvPadding] = static_cast<int64_t>(padding);
                p[ops::kConvActivation] = static_cast<int64_t>(act);
                p[ops::kConvGroup] = group;
                const int64_t c = 6, groups = group == kDepthwiseGroup ? c : group;
                const Shape xs{2, c, h, w}, ws{out_channels, c / groups, kh, kw};
                checked += ExpectPathsAgree<DoubleSemantics>(OpKind::kConv2d, xs, ws, p, ++seed);
                checked += ExpectPathsAgree<ModIntSemantics>(OpKind::kConv2d, xs, ws, p, ++seed);
              }
  EXPECT_GT(checked, 1000);
}

TEST(MatmulKernelTest, FastPathEqualsGenericPath) {
  uint64_t seed = 1;
  int checked = 0;
  for (auto act : {Activation::kNone, Activation::kRelu})
    for (int64_t m : {1, 3, 4, 5, 9})
      for (int64_t k : {1, 7})
        for (int64_t n : {1, 6})
          for (const auto& [a_batch, b_batch] : std::vector<std::pair<Shape, Shape>>{
                   {Shape{}, Shape{}}, {Shape{3}, Shape{}}, {Shape{2, 1}, Shape{1, 3}}}) {
            Params p;
            p[ops::kMatmulActivation] = static_cast<int64_t>(act);
            Shape as = a_batch, bs = b_batch;
            as.rank += 2;
            as[as.rank - 2] = m;
            as[as.rank - 1] = k;
            bs.rank += 2;
            bs[bs.rank - 2] = k;
            bs[bs.rank - 1] = n;
            checked += ExpectPathsAgree<DoubleSemantics>(OpKind::kMatmul, as, bs, p, ++seed);
            checked += ExpectPathsAgree<ModIntSemantics>(OpKind::kMatmul, as, bs, p, ++seed);
          }
  EXPECT_EQ(checked, 2 * 5 * 2 * 2 * 3 * 2);
}

}  // namespace
}  // namespace verisub::specs
