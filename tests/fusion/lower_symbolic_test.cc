// The lowering checked symbolically, as the axioms are validated (verify/validate.h): a spec
// operator lowered into sub-operators and its own reference kernel, both run on polynomials over
// the input elements (verify/poly.h: canonical, so equal expressions have equal ids), agree
// element for element on every shape of rank 1..4 with dimensions 1..4. Functions the
// polynomials cannot expand are atoms both sides share: exp, erf and tanh as the spec kernels'
// activations, the reciprocal, max (min is -max(-a, -b)), sqrt and the other sub-operator
// functions, and constants that are no small rationals. The activations the spec defines by
// formula (specs/params.h) are expanded from those formulas here, as BnScale is 1/sqrt(v + eps):
// a lowering that computes something else, or the same in another form the ring laws cannot
// reconcile (a clamp's bounds applied in the other order), fails with the first differing
// element. Softmax stays with the numeric checks (lower_test.cc): its lowering subtracts the
// row's maximum, which cancels only through exp(a + b) = exp(a) exp(b).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "fusion/lower.h"
#include "fusion/subop_eval.h"
#include "runtime/graph_text.h"
#include "specs/evaluate.h"
#include "verify/poly.h"

namespace verisub::fusion {
namespace {

using runtime::Graph;
using verify::AtomKind;
using verify::PolyStore;
using verify::Rational;
using Id = PolyStore::Id;

// Codes of the functions that are atoms (AtomKind::kFunction).
enum FunctionCode : int64_t { kLog = 1, kSqrt, kAbs, kLess, kPow, kSelect };

// One semantics for both sides: the specs' (reference kernels) and the sub-operators'.
// The ring operations, max and the reciprocal are verify's PolySemantics'; the activations and
// BnScale are expanded here instead of being atoms of their own.
struct Symbolic : verify::PolySemantics {
  mutable std::map<uint64_t, Id> constants;

  Id Min(Id a, Id b) const { return Neg(Max(Neg(a), Neg(b))); }
  Id Fn(FunctionCode f, std::vector<Id> args) const {
    return store->Apply(AtomKind::kFunction, f, std::move(args));
  }
  Id Atom(specs::Activation a, Id x) const {
    return store->Apply(AtomKind::kActivation, static_cast<int64_t>(a), {x});
  }
  Id BnScale(Id var, double epsilon) const {
    return Reciprocal(Fn(kSqrt, {Add(var, Constant(epsilon))}));
  }
  // The spec's definitions (specs/params.h).
  Id Activate(specs::Activation act, Id x) const {
    using specs::Activation;
    auto sigmoid = [&](Id v) { return Reciprocal(Add(One(), Atom(Activation::kExp, Neg(v)))); };
    auto hard_sigmoid = [&](Id v) {
      return Max(Zero(), Min(One(), Add(DivInt(v, 6), Constant(0.5))));
    };
    switch (act) {
      case Activation::kNone:
        return x;
      case Activation::kRelu:
        return Max(x, Zero());
      case Activation::kSigmoid:
        return sigmoid(x);
      case Activation::kRelu6:
        return Min(Max(x, Zero()), FromInt(6));
      case Activation::kHardSigmoid:
        return hard_sigmoid(x);
      case Activation::kHardSwish:
        return Mul(x, hard_sigmoid(x));
      case Activation::kSilu:
        return Mul(x, sigmoid(x));
      case Activation::kGelu:
        return Mul(DivInt(x, 2), Add(One(), Atom(Activation::kErf, Mul(x, Constant(M_SQRT1_2)))));
      case Activation::kGeluTanh: {
        const Id cube = Mul(Mul(x, x), x);
        const Id inner = Mul(Constant(std::sqrt(2 / M_PI)), Add(x, Mul(Constant(0.044715), cube)));
        return Mul(DivInt(x, 2), Add(One(), Atom(Activation::kTanh, inner)));
      }
      case Activation::kTanh:
      case Activation::kExp:
      case Activation::kErf:
        return Atom(act, x);
      case Activation::kLog:
        return Fn(kLog, {x});
      case Activation::kSqrt:
        return Fn(kSqrt, {x});
      case Activation::kRecip:
        return Reciprocal(x);
    }
    return x;
  }

  // fusion/subop_eval.h
  // A rational p/q (q <= 1000) when the double is exactly one, else an atom of its bits.
  Id Constant(double c) const {
    uint64_t bits;
    std::memcpy(&bits, &c, sizeof bits);
    auto it = constants.find(bits);
    if (it != constants.end()) return it->second;
    Id id = 0;
    bool found = false;
    for (int64_t q = 1; q <= 1000 && !found && std::isfinite(c) && std::fabs(c) < 1e9; ++q) {
      const double p = std::round(c * static_cast<double>(q));
      if (p / static_cast<double>(q) == c) {
        id = store->Constant(Rational::Make(static_cast<int64_t>(p), q));
        found = true;
      }
    }
    if (!found) id = store->Apply(AtomKind::kConstant, static_cast<int64_t>(bits), {});
    constants.emplace(bits, id);
    return id;
  }
  Id Unary(UnaryFn f, Id x) const {
    switch (f) {
      case UnaryFn::kNeg:
        return Neg(x);
      case UnaryFn::kRecip:
        return Reciprocal(x);
      case UnaryFn::kExp:
        return Atom(specs::Activation::kExp, x);
      case UnaryFn::kErf:
        return Atom(specs::Activation::kErf, x);
      case UnaryFn::kTanh:
        return Atom(specs::Activation::kTanh, x);
      case UnaryFn::kLog:
        return Fn(kLog, {x});
      case UnaryFn::kSqrt:
        return Fn(kSqrt, {x});
      case UnaryFn::kAbs:
        return Fn(kAbs, {x});
    }
    return x;
  }
  Id Binary(BinaryFn f, Id a, Id b) const {
    switch (f) {
      case BinaryFn::kAdd:
        return Add(a, b);
      case BinaryFn::kMul:
        return Mul(a, b);
      case BinaryFn::kMax:
        return Max(a, b);
      case BinaryFn::kMin:
        return Min(a, b);
      case BinaryFn::kLess:
        return Fn(kLess, {a, b});
      case BinaryFn::kPow:
        for (int64_t k = 1; k <= 4; ++k)  // a small integer power is a product
          if (b == FromInt(k)) {
            Id r = a;
            for (int64_t i = 1; i < k; ++i) r = Mul(r, a);
            return r;
          }
        return Fn(kPow, {a, b});
    }
    return a;
  }
  Id Select(Id mask, Id a, Id b) const {
    if (mask == One()) return a;
    if (mask == Zero()) return b;
    return Fn(kSelect, {mask, a, b});
  }
};

// Runs `g` (spec operators only) node by node on the spec kernels; `leaf` gives each graph
// input and weight its elements. The values of the first output.
StatusOr<std::vector<Id>> RunSpec(const Symbolic& s, const Graph& g,
                                  const std::map<int, std::vector<Id>>& leaf) {
  std::map<int, specs::Tensor<Id>> vals;
  for (const auto& [v, data] : leaf) {
    if (!g.value(v).spec_type) return InvalidArgument("a leaf without a spec type");
    vals[v] = {*g.value(v).spec_type, data};
  }
  for (int i = 0; i < g.num_nodes(); ++i) {
    const runtime::Node& n = g.node(i);
    if (!n.op) return InvalidArgument("node " + n.name + " is not a spec operator");
    std::vector<const specs::Tensor<Id>*> in;
    for (int v : n.inputs) {
      auto it = vals.find(v);
      if (it == vals.end()) return InvalidArgument("node " + n.name + ": an input is not ready");
      in.push_back(&it->second);
    }
    specs::Tensor<Id> out[specs::kMaxOpOutputs];
    VERISUB_RETURN_IF_ERROR(specs::Evaluate(s, *n.op, n.params, in.data(), out));
    for (size_t k = 0; k < n.outputs.size(); ++k) vals[n.outputs[k]] = std::move(out[k]);
  }
  return vals[g.outputs()[0]].data;
}

// `text` lowered whole and run on its spec kernels, symbolically; an empty string when they
// agree, else the first differing element.
std::string Disagreement(const std::string& text) {
  auto g = runtime::ParseGraphText(text);
  if (!g.ok()) return "parse: " + g.status().message();
  std::vector<int> nodes(g->num_nodes());
  for (int i = 0; i < g->num_nodes(); ++i) nodes[i] = i;
  auto lowered = LowerCluster(*g, nodes, g->outputs()[0]);
  if (!lowered.ok()) return "lowering: " + lowered.status().message();
  PolyStore store;
  Symbolic s{{&store}, {}};
  // Every value the kernel reads is a tensor of input atoms; a weight the lowering inlined (a
  // scalar) is its number on both sides.
  std::map<int, std::vector<Id>> leaf;
  std::vector<std::vector<Id>> kernel_inputs;
  int tensor = 0;
  for (int v : lowered->inputs) {
    std::vector<Id> data(runtime::CountElements(g->value(v).dims));
    for (size_t e = 0; e < data.size(); ++e) data[e] = store.Input(tensor, static_cast<int64_t>(e));
    ++tensor;
    leaf[v] = data;
    kernel_inputs.push_back(std::move(data));
  }
  for (int v = 0; v < g->num_values(); ++v)
    if (g->value(v).constant && !leaf.count(v)) {
      std::vector<Id> data;
      for (double x : g->value(v).constant->ToDoubles()) data.push_back(s.Constant(x));
      leaf[v] = data;
    }
  auto want = RunSpec(s, *g, leaf);
  if (!want.ok()) return "spec kernel: " + want.status().message();
  auto got = EvaluateSubGraphIn(s, lowered->graph, kernel_inputs);
  if (!got.ok()) return "sub-operators: " + got.status().message();
  if (got->size() != want->size()) return "sizes differ";
  for (size_t e = 0; e < got->size(); ++e)
    if ((*got)[e] != (*want)[e])
      return "element " + std::to_string(e) + ": lowered " + store.ToString((*got)[e]) + ", spec " +
             store.ToString((*want)[e]);
  return "";
}

std::string Dims(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// Every shape of rank 1..4 (from `min_rank`) with dimensions 1..4.
std::vector<std::vector<int64_t>> SmallShapes(int min_rank = 1) {
  std::vector<std::vector<int64_t>> out;
  for (int rank = min_rank; rank <= 4; ++rank) {
    std::vector<int64_t> d(rank, 1);
    while (true) {
      out.push_back(d);
      int k = rank - 1;
      while (k >= 0 && d[k] == 4) d[k--] = 1;
      if (k < 0) break;
      ++d[k];
    }
  }
  return out;
}

// Checks `make(shape)` for every small shape; stops at the first disagreement.
template <class Make>
void ExpectEveryShape(const char* what, int min_rank, Make make) {
  int checked = 0;
  for (const std::vector<int64_t>& d : SmallShapes(min_rank))
    for (const std::string& text : make(d)) {
      const std::string why = Disagreement(text);
      ASSERT_EQ(why, "") << what << " on " << Dims(d) << ":\n" << text;
      ++checked;
    }
  EXPECT_GT(checked, 0) << what;
}

TEST(LowerSymbolicTest, ActivationsAsTheSpecDefinesThem) {
  for (const char* op : {"relu", "sigmoid", "tanh", "relu6", "hard_sigmoid", "hard_swish", "silu",
                         "gelu", "gelu_tanh", "exp", "erf"})
    ExpectEveryShape(op, 1, [&](const std::vector<int64_t>& d) {
      return std::vector<std::string>{"input x " + Dims(d) + "\noutput (" + op + " x)\n"};
    });
}

TEST(LowerSymbolicTest, ElementwiseBinariesAndScalars) {
  ExpectEveryShape("binaries", 1, [](const std::vector<int64_t>& d) {
    const std::string xy = "input x " + Dims(d) + "\ninput y " + Dims(d) + "\n";
    return std::vector<std::string>{xy + "output (ewadd x y)\n", xy + "output (ewsub x y)\n",
                                    xy + "output (ewmul x y)\n",
                                    "input x " + Dims(d) + "\ninput s []\noutput (smul x s)\n",
                                    xy + "output (ewmul (sigmoid x) (ewadd x y))\n"};
  });
}

TEST(LowerSymbolicTest, PerAxisScalesBiasesAndNormalizations) {
  ExpectEveryShape("per-axis", 2, [](const std::vector<int64_t>& d) {
    std::vector<std::string> out;
    for (size_t axis = 0; axis < d.size(); ++axis) {
      const std::string a = std::to_string(axis), x = "input x " + Dims(d) + "\n";
      const std::string vec = "[" + std::to_string(d[axis]) + "]";
      out.push_back(x + "input s " + vec + "\ninput b " + vec + "\noutput (bias_add[axis=" + a +
                    "] (channel_scale[axis=" + a + "] x s) b)\n");
      const std::vector<int64_t> tail(d.begin() + static_cast<std::ptrdiff_t>(axis), d.end());
      // (A variance over more than 32 elements is a polynomial of hundreds of terms per element:
      // rank 4 over its last axes, not all of them.)
      if (runtime::CountElements(tail) <= 32)
        out.push_back(x + "input s " + Dims(tail) + "\ninput b " + Dims(tail) +
                      "\noutput (layer_norm[axis=" + a + ",epsilon=1e-5] x s b)\n");
      for (int keep : {0, 1})
        out.push_back(x + "output (reduce_mean[axes=" + std::to_string(1 << axis) +
                      ",keepdims=" + std::to_string(keep) + "] x)\n");
    }
    if (d.size() == 4) {  // batchnorm's inputs are images
      const std::string ch = "[" + std::to_string(d[1]) + "]";
      out.push_back("input x " + Dims(d) + "\ninput s " + ch + "\ninput b " + ch + "\ninput m " +
                    ch + "\ninput v " + ch + "\noutput (batchnorm[epsilon=1e-3] x s b m v)\n");
    }
    return out;
  });
}

TEST(LowerSymbolicTest, DataMovement) {
  ExpectEveryShape("data movement", 1, [](const std::vector<int64_t>& d) {
    std::vector<std::string> out;
    const std::string x = "input x " + Dims(d) + "\n";
    std::vector<int> perm(d.size());
    for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int>(perm.size() - 1 - k);
    std::string p = "[";
    for (size_t k = 0; k < perm.size(); ++k) p += (k ? "," : "") + std::to_string(perm[k]);
    p += "]";
    out.push_back(x + "output (transpose[perm=" + p + "] x)\n");
    out.push_back(x + "output (reshape[shape=[-1]] (transpose[perm=" + p + "] (relu x)))\n");
    for (size_t axis = 0; axis < d.size(); ++axis)
      for (int64_t start = 0; start < d[axis]; ++start)
        out.push_back(x + "output (slice[axis=" + std::to_string(axis) + ",start=" +
                      std::to_string(start) + ",end=" + std::to_string(d[axis]) + "] x)\n");
    return out;
  });
}

// The check can fail: a lowering of relu6 with its bounds swapped, or a sigmoid written as
// exp(x) / (1 + exp(x)), is a different expression.
TEST(LowerSymbolicTest, ADifferentFormulaIsCaught) {
  PolyStore store;
  Symbolic s{{&store}, {}};
  const Id x = store.Input(0, 0);
  EXPECT_NE(s.Activate(specs::Activation::kRelu6, x), s.Max(s.Min(x, s.FromInt(6)), s.Zero()));
  const Id e = s.Unary(UnaryFn::kExp, x);
  EXPECT_NE(s.Activate(specs::Activation::kSigmoid, x), s.Mul(e, s.Reciprocal(s.Add(s.One(), e))));
  // and the same expression built twice is one id.
  EXPECT_EQ(s.Activate(specs::Activation::kSilu, x), s.Activate(specs::Activation::kSilu, x));
}

}  // namespace
}  // namespace verisub::fusion
