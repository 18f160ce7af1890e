// NasRNN as TASO's benchmark (examples/nasrnn.py) builds it: the NAS-discovered recurrent cell,
// unrolled over 5 timesteps with hidden size 512. Each step computes eight x*W + h*U projections
// and combines them with ReLU, Sigmoid, Tanh, Add and Mul.
#include <cmath>

#include "runtime/models/graph_builder.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {
namespace {

constexpr int64_t kHidden = 512;
constexpr int64_t kSteps = 5;
constexpr int kProjections = 8;

struct CellWeights {
  std::string input[kProjections];
  std::string recurrent[kProjections];
};

// Binary node whose operands are produced by `make_x` then `make_y`. Sequencing them explicitly
// fixes node and weight order (function arguments are evaluated in an unspecified order).
template <typename MakeX, typename MakeY>
std::string Binary(GraphBuilder& b, std::string_view op, MakeX make_x, MakeY make_y) {
  const std::string x = make_x();
  const std::string y = make_y();
  return b.AddNode(op, {x, y});
}

// op(f(a), g(c)) for unary activations f and g.
std::string Combine(GraphBuilder& b, std::string_view op, std::string_view f, const std::string& a,
                    std::string_view g, const std::string& c) {
  return Binary(
      b, op, [&] { return b.AddNode(f, {a}); }, [&] { return b.AddNode(g, {c}); });
}

std::string NasCell(GraphBuilder& b, const CellWeights& w, const std::string& h,
                    const std::string& x) {
  std::string t[kProjections];
  for (int i = 0; i < kProjections; ++i) {
    t[i] = Binary(
        b, "Add",
        [&] {
          return b.AddNode("MatMul", {x, w.input[i]});
        },
        [&] {
          return b.AddNode("MatMul", {h, w.recurrent[i]});
        });
  }
  const std::string m0 = Combine(b, "Add", "Relu", t[0], "Sigmoid", t[3]);
  const std::string m1 = Combine(b, "Add", "Sigmoid", t[1], "Tanh", t[2]);
  const std::string m2 = Combine(b, "Mul", "Sigmoid", t[4], "Tanh", t[5]);
  const std::string m3 = Combine(b, "Mul", "Sigmoid", t[6], "Relu", t[7]);
  const std::string m4 = Combine(b, "Add", "Sigmoid", m1, "Tanh", m2);
  const std::string m5 = Combine(b, "Mul", "Tanh", m0, "Tanh", m3);
  const std::string m6 = Combine(b, "Mul", "Tanh", m4, "Tanh", m5);
  return b.AddNode("Tanh", {m6});
}

}  // namespace

onnx::ModelProto BuildNasRnn(const BuildOptions& options) {
  GraphBuilder b("nasrnn", options.seed);
  // Unlike TASO's script, which draws fresh weights per step and starts from a weight, the
  // weights are shared across steps (as in a real RNN) and the initial state is an input, so
  // constant folding cannot collapse the first step.
  std::vector<std::string> xs;
  for (int64_t s = 0; s < kSteps; ++s)
    xs.push_back(b.AddInput("x" + std::to_string(s), {1, kHidden}));
  std::string h = b.AddInput("h0", {1, kHidden});
  const float bound = 1.0f / std::sqrt(static_cast<float>(kHidden));
  CellWeights w;
  for (int i = 0; i < kProjections; ++i) {
    w.input[i] = b.AddUniformWeight("w_x", {kHidden, kHidden}, -bound, bound);
    w.recurrent[i] = b.AddUniformWeight("w_h", {kHidden, kHidden}, -bound, bound);
  }
  for (int64_t s = 0; s < kSteps; ++s) h = NasCell(b, w, h, xs[s]);
  b.AddOutput(h, {1, kHidden});
  return std::move(b).Finish();
}

}  // namespace verisub::runtime::models
