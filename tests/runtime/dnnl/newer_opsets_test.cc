// Models of opsets 18 to 25 (newer than the linked ONNX 1.12) import lowered into opset 17: each
// changed operator computes what its opset-17 form written by hand computes, on the reference
// backend and on oneDNN; what has no opset-17 form is refused with the node named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/onnx_import.h"
#include "runtime/reference_backend.h"
#include "tests/runtime/dnnl/dnnl_test_util.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;
using testing::SetFloat;
using testing::SetInt;
using testing::SetInts;
using testing::SetString;

struct NewerCase {
  std::string name;
  int64_t opset;
  std::function<void(ModelBuilder&)> newer, standard;  // standard: opset 17
};

void Scalar(ModelBuilder& b, const std::string& name, double v) {
  b.Weight(name, HostTensor::FromDoubles(kFloat, {}, {v}));
}

std::vector<NewerCase> Cases() {
  std::vector<NewerCase> cases;
  cases.push_back(
      {"Reduce-18: axes from an input, keepdims 0, an empty set with noop_with_empty_axes", 18,
       [](ModelBuilder& b) {
         b.Input("x", {2, 3, 4, 5}).Output("m", {2, 5}).Output("mx", {2, 3, 4, 1});
         b.Output("l2", {2, 3, 4, 5}).Output("all", {1, 1, 1, 1});
         b.Int64Weight("axes", {1, 2});
         SetInt(b.Node("ReduceMean", {"x", "axes"}, {"m"}), "keepdims", 0);
         SetInts(b.Node("Constant", {}, {"last"}), "value_ints", {-1});
         b.Node("ReduceMax", {"x", "last"}, {"mx"});
         SetInt(b.Node("ReduceL2", {"x"}, {"l2"}), "noop_with_empty_axes", 1);
         b.Node("ReduceLogSumExp", {"x"}, {"all"});
       },
       [](ModelBuilder& b) {
         b.Input("x", {2, 3, 4, 5}).Output("m", {2, 5}).Output("mx", {2, 3, 4, 1});
         b.Output("l2", {2, 3, 4, 5}).Output("all", {1, 1, 1, 1});
         auto& m = b.Node("ReduceMean", {"x"}, {"m"});
         SetInts(m, "axes", {1, 2});
         SetInt(m, "keepdims", 0);
         SetInts(b.Node("ReduceMax", {"x"}, {"mx"}), "axes", {-1});
         b.Node("Abs", {"x"}, {"l2"});
         b.Node("ReduceLogSumExp", {"x"}, {"all"});
       }});
  cases.push_back({"Split-18 num_outputs, uneven: the last part smaller", 18,
                   [](ModelBuilder& b) {
                     b.Input("x", {2, 7, 3}).Output("a", {2, 3, 3}).Output("b", {2, 3, 3});
                     b.Output("c", {2, 1, 3});
                     auto& s = b.Node("Split", {"x"}, {"a", "b", "c"});
                     SetInt(s, "axis", 1);
                     SetInt(s, "num_outputs", 3);
                   },
                   [](ModelBuilder& b) {
                     b.Input("x", {2, 7, 3}).Output("a", {2, 3, 3}).Output("b", {2, 3, 3});
                     b.Output("c", {2, 1, 3});
                     b.Int64Weight("sizes", {3, 3, 1});
                     SetInt(b.Node("Split", {"x", "sizes"}, {"a", "b", "c"}), "axis", 1);
                   }});
  cases.push_back({"Pad-18 over the axes named, reflect", 19,
                   [](ModelBuilder& b) {
                     b.Input("x", {1, 2, 5, 6}).Output("y", {1, 2, 8, 7});
                     b.Int64Weight("pads", {1, 2, 0, 1}).Int64Weight("axes", {-1, 2});
                     auto& p = b.Node("Pad", {"x", "pads", "", "axes"}, {"y"});
                     SetString(p, "mode", "reflect");
                   },
                   [](ModelBuilder& b) {
                     b.Input("x", {1, 2, 5, 6}).Output("y", {1, 2, 8, 7});
                     b.Int64Weight("pads", {0, 0, 2, 1, 0, 0, 1, 0});
                     SetString(b.Node("Pad", {"x", "pads"}, {"y"}), "mode", "reflect");
                   }});
  cases.push_back({"Gelu-20, exact and tanh", 20,
                   [](ModelBuilder& b) {
                     b.Input("x", {2, 16}).Output("y", {2, 16}).Output("t", {2, 16});
                     b.Node("Gelu", {"x"}, {"y"});
                     SetString(b.Node("Gelu", {"x"}, {"t"}), "approximate", "tanh");
                   },
                   [](ModelBuilder& b) {
                     b.Input("x", {2, 16}).Output("y", {2, 16}).Output("t", {2, 16});
                     Scalar(b, "sqrt2", std::sqrt(2.0));
                     Scalar(b, "one", 1);
                     Scalar(b, "half", 0.5);
                     Scalar(b, "c", 0.044715);
                     Scalar(b, "k", std::sqrt(2.0 / M_PI));
                     b.Node("Div", {"x", "sqrt2"}, {"d"});
                     b.Node("Erf", {"d"}, {"e"});
                     b.Node("Add", {"e", "one"}, {"e1"});
                     b.Node("Mul", {"x", "e1"}, {"xe"});
                     b.Node("Mul", {"xe", "half"}, {"y"});
                     b.Node("Mul", {"x", "x"}, {"x2"});
                     b.Node("Mul", {"x2", "x"}, {"x3"});
                     b.Node("Mul", {"x3", "c"}, {"cx3"});
                     b.Node("Add", {"x", "cx3"}, {"in"});
                     b.Node("Mul", {"in", "k"}, {"arg"});
                     b.Node("Tanh", {"arg"}, {"th"});
                     b.Node("Add", {"th", "one"}, {"t1"});
                     b.Node("Mul", {"x", "t1"}, {"xt"});
                     b.Node("Mul", {"xt", "half"}, {"t"});
                   }});
  cases.push_back({"Mish-18 and Swish-24", 24,
                   [](ModelBuilder& b) {
                     b.Input("x", {3, 8}).Output("m", {3, 8}).Output("s", {3, 8});
                     b.Node("Mish", {"x"}, {"m"});
                     SetFloat(b.Node("Swish", {"x"}, {"s"}), "alpha", 1.702f);
                   },
                   [](ModelBuilder& b) {
                     b.Input("x", {3, 8}).Output("m", {3, 8}).Output("s", {3, 8});
                     Scalar(b, "alpha", 1.702f);
                     b.Node("Softplus", {"x"}, {"sp"});
                     b.Node("Tanh", {"sp"}, {"th"});
                     b.Node("Mul", {"x", "th"}, {"m"});
                     b.Node("Mul", {"x", "alpha"}, {"ax"});
                     b.Node("Sigmoid", {"ax"}, {"sg"});
                     b.Node("Mul", {"x", "sg"}, {"s"});
                   }});
  auto group_norm = [](ModelBuilder& b, bool per_channel) {
    b.Input("x", {2, 6, 4, 5}).Output("y", {2, 6, 4, 5});
    b.Int64Weight("grouped", {0, 3, -1});
    b.Node("Reshape", {"x", "grouped"}, {"g"});
    if (per_channel) {
      b.Weight("ones", HostTensor::FromDoubles(kFloat, {3}, {1, 1, 1}));
      b.Weight("zeros", HostTensor::FromDoubles(kFloat, {3}, {0, 0, 0}));
      SetFloat(b.Node("InstanceNormalization", {"g", "ones", "zeros"}, {"n"}), "epsilon", 1e-3f);
      b.Node("Shape", {"x"}, {"shape"});
      b.Node("Reshape", {"n", "shape"}, {"back"});
      b.Int64Weight("cs", {6, 1, 1});
      b.Node("Reshape", {"scale", "cs"}, {"s"});
      b.Node("Reshape", {"bias", "cs"}, {"bb"});
      b.Node("Mul", {"back", "s"}, {"ys"});
      b.Node("Add", {"ys", "bb"}, {"y"});
    } else {
      SetFloat(b.Node("InstanceNormalization", {"g", "scale", "bias"}, {"n"}), "epsilon", 1e-3f);
      b.Node("Shape", {"x"}, {"shape"});
      b.Node("Reshape", {"n", "shape"}, {"y"});
    }
  };
  for (int64_t opset : {18, 21}) {
    const bool per_channel = opset >= 21;
    const int64_t params = per_channel ? 6 : 3;
    cases.push_back({"GroupNormalization-" + std::to_string(opset), opset,
                     [=](ModelBuilder& b) {
                       b.Input("x", {2, 6, 4, 5}).Output("y", {2, 6, 4, 5});
                       b.RandomWeight("scale", {params}, 3).RandomWeight("bias", {params}, 4);
                       auto& g = b.Node("GroupNormalization", {"x", "scale", "bias"}, {"y"});
                       SetInt(g, "num_groups", 3);
                       SetFloat(g, "epsilon", 1e-3f);
                     },
                     [=](ModelBuilder& b) {
                       b.RandomWeight("scale", {params}, 3).RandomWeight("bias", {params}, 4);
                       group_norm(b, per_channel);
                     }});
  }
  for (int64_t axis : {-1, 1}) {
    cases.push_back(
        {"RMSNormalization-23 from axis " + std::to_string(axis), 23,
         [=](ModelBuilder& b) {
           b.Input("x", {2, 3, 8}).Output("y", {2, 3, 8});
           b.RandomWeight("scale", axis < 0 ? std::vector<int64_t>{8} : std::vector<int64_t>{3, 8},
                          5);
           auto& r = b.Node("RMSNormalization", {"x", "scale"}, {"y"});
           SetInt(r, "axis", axis);
           SetFloat(r, "epsilon", 1e-4f);
         },
         [=](ModelBuilder& b) {
           b.Input("x", {2, 3, 8}).Output("y", {2, 3, 8});
           b.RandomWeight("scale", axis < 0 ? std::vector<int64_t>{8} : std::vector<int64_t>{3, 8},
                          5);
           Scalar(b, "eps", 1e-4);
           b.Node("Mul", {"x", "x"}, {"x2"});
           SetInts(b.Node("ReduceMean", {"x2"}, {"ms"}), "axes",
                   axis < 0 ? std::vector<int64_t>{2} : std::vector<int64_t>{1, 2});
           b.Node("Add", {"ms", "eps"}, {"mse"});
           b.Node("Sqrt", {"mse"}, {"rms"});
           b.Node("Div", {"x", "rms"}, {"n"});
           b.Node("Mul", {"n", "scale"}, {"y"});
         }});
  }
  cases.push_back({"QuantizeLinear-21 to int8 by output_dtype, no zero point; Cast-19 saturate", 21,
                   [](ModelBuilder& b) {
                     b.Input("x", {4, 8}).Output("y", {4, 8});
                     Scalar(b, "scale", 0.05);
                     auto& q = b.Node("QuantizeLinear", {"x", "scale"}, {"q"});
                     SetInt(q, "output_dtype", 3);
                     SetInt(q, "saturate", 1);
                     auto& c = b.Node("Cast", {"q"}, {"y"});
                     SetInt(c, "to", 1);
                     SetInt(c, "saturate", 1);
                   },
                   [](ModelBuilder& b) {
                     b.Input("x", {4, 8}).Output("y", {4, 8});
                     Scalar(b, "scale", 0.05);
                     b.Weight("zero", HostTensor::FromDoubles(kInt8, {}, {0}));
                     b.Node("QuantizeLinear", {"x", "scale", "zero"}, {"q"});
                     SetInt(b.Node("Cast", {"q"}, {"y"}), "to", 1);
                   }});
  cases.push_back({"DFT-20: the axis from an input (and its default, -2), onesided", 20,
                   [](ModelBuilder& b) {
                     b.Input("x", {2, 6, 5, 1}).Output("a", {2, 4, 5, 2});
                     b.Output("d", {2, 6, 5, 2});
                     b.Weight("axis", HostTensor::FromInts(kInt64, {}, {1}));
                     auto& a = b.Node("DFT", {"x", "", "axis"}, {"a"});
                     SetInt(a, "onesided", 1);
                     b.Node("DFT", {"x"}, {"d"});
                   },
                   [](ModelBuilder& b) {
                     b.Input("x", {2, 6, 5, 1}).Output("a", {2, 4, 5, 2});
                     b.Output("d", {2, 6, 5, 2});
                     auto& a = b.Node("DFT", {"x"}, {"a"});
                     SetInt(a, "onesided", 1);
                     SetInt(b.Node("DFT", {"x"}, {"d"}), "axis", 2);
                   }});
  return cases;
}

// Imports both models, runs them on the reference backend on the same random inputs and expects
// the same outputs (within `tolerance` of the largest), and `newer` on oneDNN as on the
// reference backend.
void ExpectSameOutputs(const std::string& newer, const std::string& standard, double tolerance) {
  auto g = ImportOnnxBytes(newer, "newer");
  auto want_g = ImportOnnxBytes(standard, "standard");
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(want_g.ok()) << want_g.status().message();
  const std::vector<HostTensor> inputs = testing::RandomInputs(*g, 8);
  auto ref = MakeReferenceBackend()->Prepare(*g, {});
  auto want_ref = MakeReferenceBackend()->Prepare(*want_g, {});
  ASSERT_TRUE(ref.ok() && want_ref.ok());
  auto got = (*ref)->Run(inputs);
  auto want = (*want_ref)->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_TRUE(want.ok()) << want.status().message();
  const testing::Comparison cmp = testing::Compare(*got, *want);
  EXPECT_EQ(cmp.error, "");
  EXPECT_GT(cmp.max_ref, 0.05);
  EXPECT_LE(cmp.max_abs, tolerance * std::max(cmp.max_ref, 1.0));
  PrepareStats stats;
  const testing::Comparison fast = testing::CompareWithReference(*g, inputs, &stats);
  EXPECT_EQ(fast.error, "");
  EXPECT_LE(fast.max_abs, 1e-4 * std::max(fast.max_ref, 1.0));
}

TEST(NewerOpsetsTest, ChangedOperatorsComputeTheirOpset17Forms) {
  for (const NewerCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    ModelBuilder nb(c.opset), sb(17);
    nb.model().set_ir_version(10);
    c.newer(nb);
    c.standard(sb);
    ExpectSameOutputs(nb.Bytes(), sb.Bytes(), 1e-5);
  }
}

// Operators with no kernel here (Compress, LpPool, GlobalLpPool) import written in ones that
// have, computing what their formulas written by hand compute.
TEST(NewerOpsetsTest, OperatorsWithoutKernelsImportWrittenOut) {
  std::vector<std::pair<std::function<void(ModelBuilder&)>, std::function<void(ModelBuilder&)>>>
      cases;
  cases.push_back({[](ModelBuilder& b) {
                     b.Input("x", {2, 5}).Output("y", {2, 3});
                     b.Weight("keep", HostTensor::FromDoubles(kBool, {4}, {1, 0, 1, 1}));
                     SetInt(b.Node("Compress", {"x", "keep"}, {"y"}), "axis", 1);
                   },
                   [](ModelBuilder& b) {
                     b.Input("x", {2, 5}).Output("y", {2, 3});
                     b.Int64Weight("at", {0, 2, 3});
                     SetInt(b.Node("Gather", {"x", "at"}, {"y"}), "axis", 1);
                   }});
  cases.push_back({[](ModelBuilder& b) {
                     b.Input("x", {1, 2, 7, 7}).Output("y", {1, 2, 4, 4});
                     auto& p = b.Node("LpPool", {"x"}, {"y"});
                     SetInt(p, "p", 3);
                     SetInts(p, "kernel_shape", {3, 3});
                     SetInts(p, "strides", {2, 2});
                     SetInts(p, "pads", {1, 1, 1, 1});
                   },
                   [](ModelBuilder& b) {
                     b.Input("x", {1, 2, 7, 7}).Output("y", {1, 2, 4, 4});
                     Scalar(b, "three", 3);
                     Scalar(b, "third", 1.0 / 3);
                     b.Weight("wk", HostTensor::FromDoubles(kFloat, {2, 1, 3, 3},
                                                            std::vector<double>(18, 1.0)));
                     b.Node("Abs", {"x"}, {"a"});
                     b.Node("Pow", {"a", "three"}, {"a3"});
                     auto& c = b.Node("Conv", {"a3", "wk"}, {"s"});
                     SetInt(c, "group", 2);
                     SetInts(c, "strides", {2, 2});
                     SetInts(c, "pads", {1, 1, 1, 1});
                     b.Node("Pow", {"s", "third"}, {"y"});
                   }});
  cases.push_back({[](ModelBuilder& b) {
                     b.Input("x", {2, 3, 5, 4}).Output("y", {2, 3, 1, 1});
                     b.Node("GlobalLpPool", {"x"}, {"y"});
                   },
                   [](ModelBuilder& b) {
                     b.Input("x", {2, 3, 5, 4}).Output("y", {2, 3, 1, 1});
                     Scalar(b, "two", 2);
                     Scalar(b, "half", 0.5);
                     b.Int64Weight("hw", {2, 3});
                     b.Node("Mul", {"x", "x"}, {"x2"});
                     b.Node("ReduceSum", {"x2", "hw"}, {"s"});
                     b.Node("Pow", {"s", "half"}, {"y"});
                   }});
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    ModelBuilder wb(17), sb(17);
    cases[i].first(wb);
    cases[i].second(sb);
    ExpectSameOutputs(wb.Bytes(), sb.Bytes(), 1e-5);
  }
}

// Attention-23 against its definition computed in loops: softmax(Q K^T scale [softcapped] +
// causal bias + mask) V per query head, key heads shared by q_heads / kv_heads query heads, past
// keys and values before the new ones; a query row with every key masked gives zeros.
struct AttentionCase {
  std::string name;
  bool three_d;
  int64_t batch, q_heads, kv_heads, seq, kv_seq, past, head;
  bool causal;
  int mask;              // 0 none, 1 boolean [seq, total], 2 float [seq, total]
  float scale, softcap;  // scale 0: 1 / sqrt(head)
};

std::vector<float> AttentionByDefinition(const AttentionCase& c, const std::vector<float>& q,
                                         const std::vector<float>& k_all,
                                         const std::vector<float>& v_all,
                                         const std::vector<double>& mask) {
  const int64_t total = c.past + c.kv_seq, rep = c.q_heads / c.kv_heads;
  const double scale = c.scale > 0 ? c.scale : 1 / std::sqrt(static_cast<double>(c.head));
  std::vector<float> y(c.batch * c.q_heads * c.seq * c.head, 0.f);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.q_heads; ++h)
      for (int64_t i = 0; i < c.seq; ++i) {
        std::vector<double> s(total);
        double top = -INFINITY;
        for (int64_t j = 0; j < total; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < c.head; ++d)
            dot += q[((b * c.q_heads + h) * c.seq + i) * c.head + d] *
                   k_all[((b * c.kv_heads + h / rep) * total + j) * c.head + d];
          dot *= scale;
          if (c.softcap > 0) dot = c.softcap * std::tanh(dot / c.softcap);
          if (c.causal && j > i + c.past) dot = -INFINITY;
          if (c.mask == 1 && mask[i * total + j] == 0) dot = -INFINITY;
          if (c.mask == 2) dot += mask[i * total + j];
          s[j] = dot;
          top = std::max(top, dot);
        }
        if (top == -INFINITY) continue;  // every key masked: zeros
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - top));
        for (int64_t j = 0; j < total; ++j)
          for (int64_t d = 0; d < c.head; ++d)
            y[((b * c.q_heads + h) * c.seq + i) * c.head + d] += static_cast<float>(
                s[j] / sum * v_all[((b * c.kv_heads + h / rep) * total + j) * c.head + d]);
      }
  return y;
}

// [B, H, S, D] from [B, S, H * D] and back.
std::vector<float> Heads(const std::vector<float>& x, int64_t b, int64_t s, int64_t h, int64_t d,
                         bool split) {
  std::vector<float> out(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t t = 0; t < s; ++t)
      for (int64_t k = 0; k < h; ++k)
        for (int64_t e = 0; e < d; ++e) {
          const int64_t flat = ((i * s + t) * h + k) * d + e, head = ((i * h + k) * s + t) * d + e;
          if (split)
            out[head] = x[flat];
          else
            out[flat] = x[head];
        }
  return out;
}

TEST(NewerOpsetsTest, AttentionComputesItsDefinition) {
  const std::vector<AttentionCase> cases = {
      {"4-D, grouped-query heads, causal and a boolean mask with a row all false", false, 1, 4, 2,
       5, 5, 0, 8, true, 1, 0.f, 0.f},
      {"3-D, one key head, past keys, a float mask, scale and softcap", true, 2, 4, 1, 3, 3, 2, 4,
       false, 2, 0.3f, 2.f},
      {"4-D, equal heads, causal over a past", false, 1, 2, 2, 2, 2, 3, 8, true, 0, 0.f, 0.f},
  };
  for (const AttentionCase& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t total = c.past + c.kv_seq;
    auto dims = [&](int64_t h, int64_t s) {
      return c.three_d ? std::vector<int64_t>{c.batch, s, h * c.head}
                       : std::vector<int64_t>{c.batch, h, s, c.head};
    };
    ModelBuilder b(23);
    b.model().set_ir_version(10);
    b.Input("q_in", dims(c.q_heads, c.seq)).Input("k", dims(c.kv_heads, c.kv_seq));
    b.Input("v", dims(c.kv_heads, c.kv_seq));
    std::vector<std::string> ins = {"q", "k", "v", "", "", ""};
    b.Node("Identity", {"q_in"}, {"q"});  // dims left to shape inference
    if (c.mask == 1) {
      b.Input("keep_not", {c.seq, total}, kBool);
      b.Node("Not", {"keep_not"}, {"mask"});  // a type left to inference
      ins[3] = "mask";
    } else if (c.mask == 2) {
      b.Input("mask", {c.seq, total});
      ins[3] = "mask";
    }
    if (c.past > 0) {
      b.Input("past_k", {c.batch, c.kv_heads, c.past, c.head});
      b.Input("past_v", {c.batch, c.kv_heads, c.past, c.head});
      ins[4] = "past_k";
      ins[5] = "past_v";
    }
    while (ins.back().empty()) ins.pop_back();
    b.Output("y", dims(c.q_heads, c.seq));
    std::vector<std::string> outs = {"y"};
    if (c.past > 0) {
      b.Output("present_k", {c.batch, c.kv_heads, total, c.head});
      outs.push_back("present_k");
    }
    auto& a = b.Node("Attention", ins, outs, "attention");
    if (c.three_d) {
      SetInt(a, "q_num_heads", c.q_heads);
      SetInt(a, "kv_num_heads", c.kv_heads);
    }
    if (c.causal) SetInt(a, "is_causal", 1);
    if (c.scale > 0) SetFloat(a, "scale", c.scale);
    if (c.softcap > 0) SetFloat(a, "softcap", c.softcap);
    auto g = ImportOnnxBytes(b.Bytes(), "attention.onnx");
    ASSERT_TRUE(g.ok()) << g.status().message();

    std::vector<HostTensor> inputs;
    std::vector<std::vector<float>> data;
    uint64_t seed = 11;
    for (const auto& in : b.model().graph().input()) {
      std::vector<int64_t> d;
      for (const auto& dim : in.type().tensor_type().shape().dim()) d.push_back(dim.dim_value());
      if (in.name() == "keep_not") {
        std::vector<double> keep;
        for (int64_t i = 0; i < c.seq; ++i)
          for (int64_t j = 0; j < total; ++j) keep.push_back(i == 1 || (i * 7 + j * 3) % 5 == 0);
        inputs.push_back(HostTensor::FromDoubles(kBool, d, keep));  // Not: true masks
        data.emplace_back();
        continue;
      }
      inputs.push_back(testing::RandomTensor(d, seed++));
      const std::vector<double> v = inputs.back().ToDoubles();
      data.emplace_back(v.begin(), v.end());
    }
    auto ref = MakeReferenceBackend()->Prepare(*g, {});
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    auto got = (*ref)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().message();

    auto as_heads = [&](const std::vector<float>& x, int64_t h, int64_t s) {
      return c.three_d ? Heads(x, c.batch, s, h, c.head, true) : x;
    };
    std::vector<float> q = as_heads(data[0], c.q_heads, c.seq);
    std::vector<float> k = as_heads(data[1], c.kv_heads, c.kv_seq);
    std::vector<float> v = as_heads(data[2], c.kv_heads, c.kv_seq);
    std::vector<double> mask;
    size_t next = 3;
    if (c.mask == 1) {
      for (double keep_not : inputs[next].ToDoubles()) mask.push_back(keep_not == 0);
      ++next;
    } else if (c.mask == 2) {
      mask = inputs[next++].ToDoubles();
    }
    if (c.past > 0) {  // past keys first along the sequence
      auto join = [&](const std::vector<float>& past, const std::vector<float>& now) {
        std::vector<float> all;
        for (int64_t i = 0; i < c.batch * c.kv_heads; ++i) {
          all.insert(all.end(), past.begin() + i * c.past * c.head,
                     past.begin() + (i + 1) * c.past * c.head);
          all.insert(all.end(), now.begin() + i * c.kv_seq * c.head,
                     now.begin() + (i + 1) * c.kv_seq * c.head);
        }
        return all;
      };
      k = join(data[next], k);
      v = join(data[next + 1], v);
    }
    std::vector<float> want = AttentionByDefinition(c, q, k, v, mask);
    if (c.three_d) want = Heads(want, c.batch, c.seq, c.q_heads, c.head, false);
    const std::vector<double> y = (*got)[0].ToDoubles();
    ASSERT_EQ(y.size(), want.size());
    double max_diff = 0, max_ref = 0;
    int zero_rows = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      max_diff = std::max(max_diff, std::abs(y[i] - want[i]));
      max_ref = std::max(max_ref, static_cast<double>(std::abs(want[i])));
      EXPECT_FALSE(std::isnan(y[i])) << i;
    }
    EXPECT_GT(max_ref, 0.05);
    EXPECT_LE(max_diff, 1e-5 * std::max(max_ref, 1.0));
    if (c.mask == 1) {  // query row 1 masks every key
      for (int64_t h = 0; h < c.q_heads; ++h)
        for (int64_t d = 0; d < c.head; ++d) zero_rows += y[(h * c.seq + 1) * c.head + d] == 0;
      EXPECT_EQ(zero_rows, c.q_heads * c.head);
    }
    if (c.past > 0) {
      const std::vector<double> present = (*got)[1].ToDoubles();
      ASSERT_EQ(present.size(), k.size());
      for (size_t i = 0; i < k.size(); ++i) EXPECT_EQ(static_cast<float>(present[i]), k[i]) << i;
    }
    PrepareStats stats;
    const testing::Comparison fast = testing::CompareWithReference(*g, inputs, &stats);
    EXPECT_EQ(fast.error, "");
    EXPECT_LE(fast.max_abs, 1e-4 * std::max(fast.max_ref, 1.0));
  }
}

// RotaryEmbedding-23 against its definition in loops: pairs (i, i + R/2), or (2i, 2i + 1) when
// interleaved, of each head's first R values rotated by the caches' row for the token's position.
TEST(NewerOpsetsTest, RotaryEmbeddingComputesItsDefinition) {
  const int64_t batch = 2, seq = 3, heads = 2, head = 8, positions = 6;
  for (const bool three_d : {false, true}) {
    SCOPED_TRACE(three_d ? "3-D, interleaved, all of each head" : "4-D, halves, half of each head");
    const bool interleaved = three_d;
    const int64_t rotary = three_d ? head : head / 2, half = rotary / 2;
    ModelBuilder b(23);
    b.model().set_ir_version(10);
    const std::vector<int64_t> dims = three_d ? std::vector<int64_t>{batch, seq, heads * head}
                                              : std::vector<int64_t>{batch, heads, seq, head};
    b.Input("x", dims).Input("pos", {batch, seq}, kInt64).Output("y", dims);
    b.RandomWeight("cos", {positions, half}, 1).RandomWeight("sin", {positions, half}, 2);
    auto& r = b.Node("RotaryEmbedding", {"x", "cos", "sin", "pos"}, {"y"});
    SetInt(r, "interleaved", interleaved);
    if (three_d) SetInt(r, "num_heads", heads);
    if (!three_d) SetInt(r, "rotary_embedding_dim", rotary);
    auto g = ImportOnnxBytes(b.Bytes(), "rotary.onnx");
    ASSERT_TRUE(g.ok()) << g.status().message();
    const HostTensor x = testing::RandomTensor(dims, 3);
    std::vector<double> pos_values;
    for (int64_t i = 0; i < batch * seq; ++i) pos_values.push_back((i * 5 + 1) % positions);
    const HostTensor pos = HostTensor::FromDoubles(kInt64, {batch, seq}, pos_values);
    auto ref = MakeReferenceBackend()->Prepare(*g, {});
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    auto got = (*ref)->Run({x, pos});
    ASSERT_TRUE(got.ok()) << got.status().message();
    const std::vector<double> xv = x.ToDoubles(), y = (*got)[0].ToDoubles();
    const std::vector<double> cos = testing::RandomTensor({positions, half}, 1).ToDoubles();
    const std::vector<double> sin = testing::RandomTensor({positions, half}, 2).ToDoubles();
    std::vector<double> want = xv;
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t t = 0; t < seq; ++t) {
          const int64_t base = three_d ? (bi * seq + t) * heads * head + h * head
                                       : ((bi * heads + h) * seq + t) * head;
          const int64_t p = static_cast<int64_t>(pos_values[bi * seq + t]);
          for (int64_t i = 0; i < half; ++i) {
            const int64_t a = base + (interleaved ? 2 * i : i);
            const int64_t c = base + (interleaved ? 2 * i + 1 : i + half);
            want[a] = cos[p * half + i] * xv[a] - sin[p * half + i] * xv[c];
            want[c] = sin[p * half + i] * xv[a] + cos[p * half + i] * xv[c];
          }
        }
    ASSERT_EQ(y.size(), want.size());
    double max_diff = 0;
    for (size_t i = 0; i < y.size(); ++i) max_diff = std::max(max_diff, std::abs(y[i] - want[i]));
    EXPECT_LE(max_diff, 1e-6);
    PrepareStats stats;
    const testing::Comparison fast = testing::CompareWithReference(*g, {x, pos}, &stats);
    EXPECT_EQ(fast.error, "");
    EXPECT_LE(fast.max_abs, 1e-5);
  }
}

// Model-local functions (what PyTorch's dynamo exporter writes for modules) import inlined: a
// function called twice (fresh names each time), one calling another, attributes by reference
// from the call or from the function's defaults (FunctionProto.attribute_proto, past ONNX 1.12),
// an unread second output; the model computes what the same nodes written in place compute.
TEST(NewerOpsetsTest, LocalFunctionsImportInlined) {
  auto add_functions = [](onnx::ModelProto& m) {
    auto* op = m.add_opset_import();
    op->set_domain("pkg.test");
    op->set_version(1);
    // Act(x; alpha) = LeakyRelu(x * x, alpha), and x * x as a second output.
    onnx::FunctionProto* act = m.add_functions();
    act->set_domain("pkg.test");
    act->set_name("Act");
    act->add_input("x");
    act->add_output("y");
    act->add_output("sq");
    act->add_attribute("alpha");
    auto* o = act->add_opset_import();
    o->set_version(18);
    onnx::NodeProto* mul = act->add_node();
    mul->set_op_type("Mul");
    mul->add_input("x");
    mul->add_input("x");
    mul->add_output("sq");
    onnx::NodeProto* leaky = act->add_node();
    leaky->set_op_type("LeakyRelu");
    leaky->add_input("sq");
    leaky->add_output("y");
    onnx::AttributeProto* ref = leaky->add_attribute();
    ref->set_name("alpha");
    ref->set_type(onnx::AttributeProto::FLOAT);
    ref->set_ref_attr_name("alpha");
    // Block(x) = Act(Sub(x, 0.5)) with Act's alpha from Block's own default, 0.25.
    onnx::FunctionProto* block = m.add_functions();
    block->set_domain("pkg.test");
    block->set_name("Block");
    block->add_input("x");
    block->add_output("y");
    block->add_attribute("slope");
    *block->add_opset_import() = *o;
    auto* po = block->add_opset_import();
    po->set_domain("pkg.test");
    po->set_version(1);
    onnx::NodeProto* half = block->add_node();
    half->set_op_type("Constant");
    half->add_output("half");
    onnx::AttributeProto* v = half->add_attribute();
    v->set_name("value_float");
    v->set_type(onnx::AttributeProto::FLOAT);
    v->set_f(0.5f);
    onnx::NodeProto* sub = block->add_node();
    sub->set_op_type("Sub");
    sub->add_input("x");
    sub->add_input("half");
    sub->add_output("d");
    onnx::NodeProto* call = block->add_node();
    call->set_op_type("Act");
    call->set_domain("pkg.test");
    call->add_input("d");
    call->add_output("y");
    onnx::AttributeProto* slope = call->add_attribute();
    slope->set_name("alpha");
    slope->set_type(onnx::AttributeProto::FLOAT);
    slope->set_ref_attr_name("slope");
    onnx::AttributeProto fallback;
    fallback.set_name("slope");
    fallback.set_type(onnx::AttributeProto::FLOAT);
    fallback.set_f(0.25f);
    block->GetReflection()->MutableUnknownFields(block)->AddLengthDelimited(
        11, fallback.SerializeAsString());
  };
  ModelBuilder fb(18), sb(18);
  fb.model().set_ir_version(10);
  add_functions(fb.model());
  fb.Input("x", {2, 8}).Output("y", {2, 8});
  auto& first = fb.Node("Act", {"x"}, {"a"}, "act");
  first.set_domain("pkg.test");
  SetFloat(first, "alpha", 0.1f);
  fb.Node("Block", {"a"}, {"b"}, "block").set_domain("pkg.test");
  fb.Node("Block", {"b"}, {"y"}, "block_again").set_domain("pkg.test");

  sb.Input("x", {2, 8}).Output("y", {2, 8});
  Scalar(sb, "half", 0.5);
  sb.Node("Mul", {"x", "x"}, {"s0"});
  SetFloat(sb.Node("LeakyRelu", {"s0"}, {"a"}), "alpha", 0.1f);
  for (const std::string k : {"1", "2"}) {
    const std::string in = k == "1" ? "a" : "b", out = k == "1" ? "b" : "y";
    sb.Node("Sub", {in, "half"}, {"d" + k});
    sb.Node("Mul", {"d" + k, "d" + k}, {"s" + k});
    SetFloat(sb.Node("LeakyRelu", {"s" + k}, {out}), "alpha", 0.25f);
  }
  ExpectSameOutputs(fb.Bytes(), sb.Bytes(), 1e-6);

  // A function calling itself is refused by the node.
  ModelBuilder rb(17);
  auto* op = rb.model().add_opset_import();
  op->set_domain("pkg.test");
  op->set_version(1);
  onnx::FunctionProto* loop = rb.model().add_functions();
  loop->set_domain("pkg.test");
  loop->set_name("Loop");
  loop->add_input("x");
  loop->add_output("y");
  *loop->add_opset_import() = *op;
  onnx::NodeProto* self = loop->add_node();
  self->set_op_type("Loop");
  self->set_domain("pkg.test");
  self->add_input("x");
  self->add_output("y");
  rb.Input("x", {2}).Output("y", {2});
  rb.Node("Loop", {"x"}, {"y"}, "forever").set_domain("pkg.test");
  auto refused = ImportOnnxBytes(rb.Bytes(), "recursive.onnx");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'forever' (pkg.test.Loop)"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("recursion"), std::string::npos);

  // Functions each calling the one below twice, 24 deep: 2^24 nodes inlined; refused by a
  // budget instead of exhausting memory.
  ModelBuilder wide(17);
  *wide.model().add_opset_import() = *op;
  for (int level = 0; level <= 24; ++level) {
    onnx::FunctionProto* f = wide.model().add_functions();
    f->set_domain("pkg.test");
    f->set_name("F" + std::to_string(level));
    f->add_input("x");
    f->add_output("y");
    *f->add_opset_import() = *op;
    auto* o = f->add_opset_import();
    o->set_version(17);
    for (int k = 0; k < 2; ++k) {
      onnx::NodeProto* call = f->add_node();
      call->set_op_type(level == 0 ? "Relu" : "F" + std::to_string(level - 1));
      if (level > 0) call->set_domain("pkg.test");
      call->add_input(k == 0 ? "x" : "t");
      call->add_output(k == 0 ? "t" : "y");
    }
  }
  wide.Input("x", {2}).Output("y", {2});
  wide.Node("F24", {"x"}, {"y"}, "huge").set_domain("pkg.test");
  auto too_many = ImportOnnxBytes(wide.Bytes(), "wide.onnx");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("'huge' (pkg.test.F24)"), std::string::npos)
      << too_many.status().message();
  EXPECT_NE(too_many.status().message().find("more than"), std::string::npos);
}

// Refused, naming the node: an operator with no opset-17 form, axes computed at run time, a
// float8 weight, an opset newer than 25.
TEST(NewerOpsetsTest, WhatHasNoOpset17FormIsRefusedByName) {
  auto expect_error = [](ModelBuilder& b, const std::vector<std::string>& parts) {
    auto g = ImportOnnxBytes(b.Bytes(), "newer.onnx");
    ASSERT_FALSE(g.ok());
    for (const std::string& p : parts)
      EXPECT_NE(g.status().message().find(p), std::string::npos)
          << "'" << p << "' not in: " << g.status().message();
  };
  {
    ModelBuilder b(23);
    b.Input("q", {1, 2, 4, 8}).Input("k", {1, 2, 4, 8}).Input("v", {1, 2, 4, 8});
    b.Output("y", {1, 2, 4, 8}).Output("qk", {1, 2, 4, 4});
    b.Node("Attention", {"q", "k", "v"}, {"y", "", "", "qk"}, "attn0");
    expect_error(b, {"newer.onnx", "'attn0' (Attention, opset 23)", "qk_matmul_output"});
  }
  {
    ModelBuilder b(24);
    b.Input("x", {1, 2, 4, 8}).Input("cache", {1, 2, 6, 8}).Input("idx", {1}, kInt64);
    b.Output("y", {1, 2, 6, 8});
    b.Node("TensorScatter", {"cache", "x", "idx"}, {"y"}, "scatter0");
    expect_error(b, {"'scatter0' (TensorScatter, opset 24)", "opset 17"});
  }
  {
    ModelBuilder b(18);
    b.Input("x", {2, 3}).Input("axes", {1}, kInt64).Output("y", {-1});
    b.Node("ReduceMean", {"x", "axes"}, {"y"}, "mean0");
    expect_error(b, {"'mean0' (ReduceMean, opset 18)", "run time"});
  }
  {
    ModelBuilder b(19);
    b.Input("x", {2}).Output("y", {2});
    onnx::TensorProto* w = b.model().mutable_graph()->add_initializer();
    w->set_name("w8");
    w->set_data_type(17);  // FLOAT8E4M3FN
    w->add_dims(2);
    w->set_raw_data(std::string(2, '\0'));
    b.Node("Add", {"x", "w8"}, {"y"});
    expect_error(b, {"initializer 'w8'", "float8"});
  }
  {
    ModelBuilder b(26);
    b.Input("x", {2}).Output("y", {2});
    b.Node("Relu", {"x"}, {"y"});
    expect_error(b, {"unsupported opset 26", "1 to 25"});
  }
}

}  // namespace
}  // namespace verisub::runtime
