// ONNX Runtime's contrib operators written out in standard operators (ort_contrib.h).
#include "runtime/ort_contrib.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "runtime/onnx_node_emitter.h"
#include "runtime/onnx_ops/export_context.h"

namespace verisub::runtime {
namespace {

class ContribRewriter : NodeEmitter {
 public:
  ContribRewriter(onnx::GraphProto* g, int64_t opset) : g_(g), opset_(opset) {
    TakeNames(*g_);
    for (const auto& n : g_->node())
      for (const auto& s : n.input()) ++uses_[s];
    for (const auto& v : g_->output()) ++uses_[v.name()];
  }

  // Nodes left for want of a rank the declared shapes did not give.
  int unranked() const { return unranked_; }

  int Run() {
    int rewritten = 0;
    std::vector<onnx::NodeProto> out;
    for (const onnx::NodeProto& n : g_->node()) {
      const size_t before = out.size();
      bool done = false;
      if (n.domain() == "com.microsoft" && n.input_size() > 0 && !n.input(0).empty() &&
          n.output_size() > 0 && !n.output(0).empty()) {
        node_ = &n;
        out_ = &out;
        if (n.op_type() == "FusedConv")
          done = FusedConv();
        else if (n.op_type() == "FusedGemm")
          done = FusedGemm();
        else if (n.op_type() == "FusedMatMul")
          done = FusedMatMul();
        else if (n.op_type() == "Gelu" || n.op_type() == "BiasGelu")
          done = Gelu();
        else if (n.op_type() == "FastGelu")
          done = FastGelu();
        else if (n.op_type() == "QuickGelu")
          done = QuickGelu();
        else if (n.op_type() == "SkipLayerNormalization")
          done = SkipLayerNorm();
        else if (n.op_type() == "Attention")
          done = Attention();
        else if (n.op_type() == "EmbedLayerNormalization")
          done = EmbedLayerNorm();
        else if (n.op_type() == "SkipSimplifiedLayerNormalization")
          done = SkipSimplifiedLayerNorm();
      } else if ((n.domain().empty() || n.domain() == "ai.onnx") &&
                 n.op_type() == "SimplifiedLayerNormalization" && n.input_size() >= 2 &&
                 !n.input(0).empty() && n.output_size() > 0 && !n.output(0).empty()) {
        node_ = &n;
        out_ = &out;
        done = SimplifiedLayerNorm();
      } else if ((n.domain().empty() || n.domain() == "ai.onnx") && opset_ < 10 &&
                 n.input_size() == 1 && n.output_size() == 1 && !n.input(0).empty() &&
                 !n.output(0).empty()) {
        node_ = &n;
        out_ = &out;
        done = Experimental();
      }
      if (!done) {
        out.resize(before);  // a half-built rewrite leaves nothing behind
        out.push_back(n);
        continue;
      }
      ++rewritten;
    }
    if (rewritten) {
      g_->clear_node();
      for (onnx::NodeProto& n : out) *g_->add_node() = std::move(n);
    }
    return rewritten;
  }

 private:
  // An output other than the first that something reads (or the graph returns).
  bool Read(int k) const {
    if (k >= node_->output_size() || node_->output(k).empty()) return false;
    auto it = uses_.find(node_->output(k));
    return it != uses_.end() && it->second > 0;
  }

  // ONNX's experimental operators of opsets before 10 (removed from ONNX since; the ONNX model
  // zoo's Tiny YOLOv2 and Emotion FER+ begin with ImageScaler), in their documented formulas:
  // ImageScaler (x * scale + bias[c] over NCHW), Scale (x * scale), Affine (alpha x + beta),
  // ScaledTanh (alpha tanh(beta x)), ParametricSoftplus (alpha log(1 + exp(beta x))).
  bool Experimental() {
    const std::string& op = node_->op_type();
    const std::string& x = In(0);
    const std::string& y = node_->output(0);
    if (op == "ImageScaler") {
      const onnx::AttributeProto* bias = Attr("bias");
      const std::string scaled = Emit("Mul", {x, Scalar("scale", Float("scale", 1.f))});
      if (!bias || bias->floats_size() == 0) {
        Emit("Identity", {scaled}, y);
        return true;
      }
      const std::vector<float> b(bias->floats().begin(), bias->floats().end());
      Emit("Add", {scaled, Tensor("bias", {1, static_cast<int64_t>(b.size()), 1, 1}, b)}, y);
      return true;
    }
    if (op == "Scale") {
      Emit("Mul", {x, Scalar("scale", Float("scale", 1.f))}, y);
      return true;
    }
    if (op == "Affine") {
      const std::string ax = Emit("Mul", {x, Scalar("alpha", Float("alpha", 1.f))});
      Emit("Add", {ax, Scalar("beta", Float("beta", 0.f))}, y);
      return true;
    }
    if (op == "ScaledTanh" || op == "ParametricSoftplus") {
      const std::string bx = Emit("Mul", {x, Scalar("beta", Float("beta", 1.f))});
      const std::string f = Emit(op == "ScaledTanh" ? "Tanh" : "Softplus", {bx});
      Emit("Mul", {f, Scalar("alpha", Float("alpha", 1.f))}, y);
      return true;
    }
    return false;
  }

  bool Gelu() {
    if (node_->output_size() != 1) return false;
    std::string x = In(0);
    if (node_->op_type() == "BiasGelu") {
      if (!Has(1)) return false;
      x = Emit("Add", {x, In(1)});
    }
    GeluOf(x, node_->output(0));
    return true;
  }

  bool FastGelu() {
    if (node_->output_size() != 1) return false;
    std::string x = In(0);
    if (Has(1)) x = Emit("Add", {x, In(1)});
    TanhGeluOf(x, node_->output(0));
    return true;
  }

  bool QuickGelu() {
    if (node_->output_size() != 1) return false;
    const double alpha = Float("alpha", 1.702f);
    const std::string x = In(0);
    const std::string arg = alpha == 1.0 ? x : Emit("Mul", {x, Scalar("alpha", alpha)});
    Emit("Mul", {x, Emit("Sigmoid", {arg})}, node_->output(0));
    return true;
  }

  // input + skip [+ the bias at input `bias`], into the fourth output when something reads it.
  std::string SkipSum(int bias) {
    const std::string sum_out = Read(3) ? node_->output(3) : "";
    std::string sum = Emit("Add", {In(0), In(1)}, Has(bias) ? "" : sum_out);
    if (Has(bias)) sum = Emit("Add", {sum, In(bias)}, sum_out);
    return sum;
  }

  bool SkipLayerNorm() {
    if (!Has(1) || !Has(2) || Read(1) || Read(2)) return false;
    LayerNorm(SkipSum(4), In(2), Has(3) ? In(3) : "", Float("epsilon", 1e-12f), node_->output(0));
    return true;
  }

  // SimplifiedLayerNormalization (registered by ONNX Runtime in the default domain; its RMS
  // norm fusion writes it for T5's and LLaMA's norms): x / sqrt(mean(x^2) + epsilon) * scale
  // over the axes from `axis` on. Not rewritten: the inverse deviation output read, a
  // non-negative axis before opset 15.
  bool SimplifiedLayerNorm() {
    const int64_t axis = Int("axis", -1);
    if (!Has(1) || Read(1) || (axis >= 0 && opset_ < 15)) return false;
    RmsNormOf(In(0), In(1), axis, Float("epsilon", 1e-5f), node_->output(0));
    return true;
  }

  // SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): the RMS norm over the last axis
  // of input + skip [+ bias] times gamma; the sum as its fourth output. Not rewritten: the mean
  // or inverse deviation outputs read.
  bool SkipSimplifiedLayerNorm() {
    if (!Has(1) || !Has(2) || Read(1) || Read(2)) return false;
    RmsNormOf(SkipSum(3), In(2), -1, Float("epsilon", 1e-12f), node_->output(0));
    return true;
  }

  // LayerNormalization of x over the last axis into `output` (beta may be ""); before opset 17
  // (no LayerNormalization) written out: (x - mean) / sqrt(var + epsilon) * gamma + beta.
  void LayerNorm(const std::string& x, const std::string& gamma, const std::string& beta,
                 float epsilon, const std::string& output) {
    if (opset_ >= 17) {
      std::vector<std::string> operands = {x, gamma};
      if (!beta.empty()) operands.push_back(beta);
      Emit("LayerNormalization", operands, output, [epsilon](onnx::NodeProto* n) {
        ExportContext::AttrInt(n, "axis", -1);
        ExportContext::AttrFloat(n, "epsilon", epsilon);
      });
      return;
    }
    auto mean = [this](const std::string& v) {
      return Emit("ReduceMean", {v}, "",
                  [](onnx::NodeProto* n) { ExportContext::AttrInts(n, "axes", {-1}); });
    };
    const std::string centered = Emit("Sub", {x, mean(x)});
    const std::string var = mean(Emit("Mul", {centered, centered}));
    const std::string dev = Emit("Sqrt", {Emit("Add", {var, Scalar("epsilon", epsilon)})});
    const std::string scaled = Emit("Mul", {Emit("Div", {centered, dev}), gamma});
    if (!beta.empty())
      Emit("Add", {scaled, beta}, output);
    else
      Emit("Identity", {scaled}, output);
  }

  // Unsqueeze at `axes` in the form of this opset (an input from 13, else an attribute).
  std::string Unsqueeze(const std::string& x, const std::vector<int64_t>& axes) {
    if (opset_ >= 13)
      return Emit("Unsqueeze", {x, Ints("axes", {static_cast<int64_t>(axes.size())}, axes)});
    return Emit("Unsqueeze", {x}, "",
                [axes](onnx::NodeProto* n) { ExportContext::AttrInts(n, "axes", axes); });
  }
  // The declared or inferred dims of value v (-1 for a dimension not known), nullopt when the
  // rank is not known.
  std::optional<std::vector<int64_t>> DeclaredDims(const std::string& v) const {
    return runtime::DeclaredDims(*g_, v);
  }
  // DeclaredDims, empty when the rank is not known.
  std::vector<int64_t> DimsOf(const std::string& v) const {
    return DeclaredDims(v).value_or(std::vector<int64_t>());
  }
  // The rank v is declared with, or -1.
  int RankOf(const std::string& v) const {
    const std::optional<std::vector<int64_t>> d = DeclaredDims(v);
    return d ? static_cast<int>(d->size()) : -1;
  }

  // Attention (BERT's self-attention as ONNX Runtime's transformer optimizer fuses it): the
  // packed projection input x W [+ bias] split into Q, K, V of num_heads heads, softmax(Q K^T *
  // scale + mask) V, heads merged. The mask_index forms: none, [batch] end positions (keys at
  // or past the end masked), [batch, total] or [batch, seq, total] raw masks (keys with 0
  // masked); masked scores get mask_filter_value added; unidirectional masks later keys (the
  // sequence length must be known); an attention bias input is added to the scores. Not
  // rewritten: past and present (a decoder's cache), unequal qkv_hidden_sizes, rotary
  // embeddings, 4-D masks.
  bool Attention() {
    if (opset_ < 11 || !Has(1) || Has(4) || Has(6) || Has(7) || Read(1) ||
        Int("do_rotary", 0) != 0 || Int("past_present_share_buffer", 0) != 0)
      return false;
    const int64_t heads = Int("num_heads", 0);
    const std::vector<int64_t> w = DimsOf(In(1)), xd = DimsOf(In(0));
    if (heads <= 0 || w.size() != 2 || w[1] <= 0 || w[1] % 3 != 0) return false;
    const int64_t hidden = w[1] / 3;
    if (const auto* sizes = Attr("qkv_hidden_sizes"))
      for (int64_t v : sizes->ints())
        if (v != hidden) return false;
    if (hidden % heads != 0) return false;
    const int64_t head = hidden / heads;
    const float filter = Float("mask_filter_value", -10000.f);
    const float scale = Float("scale", 0.f) != 0.f ? Float("scale", 0.f)
                                                   : 1.f / std::sqrt(static_cast<float>(head));
    std::string qkv = Emit("MatMul", {In(0), In(1)});
    if (Has(2)) qkv = Emit("Add", {qkv, In(2)});
    std::vector<std::string> parts;
    for (int k = 0; k < 3; ++k)
      parts.push_back(Fresh(node_->output(0) + "/qkv" + std::to_string(k)));
    {
      onnx::NodeProto split;
      split.set_op_type("Split");
      split.set_name(Fresh(node_->name() + "/Split"));
      split.add_input(qkv);
      if (opset_ >= 13) split.add_input(Ints("split", {3}, {hidden, hidden, hidden}));
      for (const std::string& p : parts) split.add_output(p);
      auto* axis = split.add_attribute();
      axis->set_name("axis");
      axis->set_type(onnx::AttributeProto::INT);
      axis->set_i(2);
      if (opset_ < 13) ExportContext::AttrInts(&split, "split", {hidden, hidden, hidden});
      out_->push_back(std::move(split));
    }
    const std::string heads_shape = Ints("heads_shape", {4}, {0, 0, heads, head});
    auto by_head = [&](const std::string& v, std::vector<int64_t> perm) {
      const std::string r = Emit("Reshape", {v, heads_shape});
      return Emit("Transpose", {r}, "",
                  [perm](onnx::NodeProto* n) { ExportContext::AttrInts(n, "perm", perm); });
    };
    const std::string q = by_head(parts[0], {0, 2, 1, 3}), k = by_head(parts[1], {0, 2, 3, 1}),
                      v = by_head(parts[2], {0, 2, 1, 3});
    std::string scores = Emit("Mul", {Emit("MatMul", {q, k}), Scalar("scale", scale)});
    if (Has(3)) {
      const std::vector<int64_t> md = DimsOf(In(3));
      std::string valid;  // bool [batch, total] or [batch, seq, total]: keys attended
      if (md.size() == 1) {
        if (xd.size() != 3 || xd[0] <= 0 || md[0] != xd[0]) return false;  // [2 batch]: no
        // Key positions 0..total-1 against each batch's end position.
        const std::string total = Emit("Gather", {Emit("Shape", {In(0)}), Ints("one", {}, {1})});
        const std::string positions =
            Emit("Range", {Ints("zero", {}, {0}), total, Ints("step", {}, {1})});
        const std::string end = Emit("Cast", {In(3)}, "", [](onnx::NodeProto* n) {
          ExportContext::AttrInt(n, "to", onnx::TensorProto::INT64);
        });
        valid = Emit("Less", {Unsqueeze(positions, {0}), Unsqueeze(end, {1})});
      } else if (md.size() == 2 || md.size() == 3) {
        valid = Emit("Greater", {In(3), Ints("zero", {}, {0}, /*int32=*/true)});
      } else {
        if (md.empty()) ++unranked_;
        return false;
      }
      const std::string bias =
          Emit("Where", {valid, Scalar("kept", 0.0), Scalar("masked", filter)});
      scores = Emit("Add", {scores, Unsqueeze(bias, md.size() == 3 ? std::vector<int64_t>{1}
                                                                   : std::vector<int64_t>{1, 2})});
    }
    if (Int("unidirectional", 0) != 0) {
      if (xd.size() != 3 || xd[1] <= 0) {
        ++unranked_;
        return false;
      }
      const int64_t seq = xd[1];
      std::vector<float> causal(static_cast<size_t>(seq * seq), 0.f);
      for (int64_t i = 0; i < seq; ++i)
        for (int64_t j = i + 1; j < seq; ++j) causal[static_cast<size_t>(i * seq + j)] = filter;
      scores = Emit("Add", {scores, Tensor("causal", {seq, seq}, causal)});
    }
    if (Has(5)) scores = Emit("Add", {scores, In(5)});
    // Over the last axis (before opset 13 the axes from 3 on: the same).
    const std::string probs = Emit(
        "Softmax", {scores}, "", [](onnx::NodeProto* n) { ExportContext::AttrInt(n, "axis", 3); });
    const std::string context =
        Emit("Transpose", {Emit("MatMul", {probs, v})}, "", [](onnx::NodeProto* n) {
          ExportContext::AttrInts(n, "perm", {0, 2, 1, 3});
        });
    Emit("Reshape", {context, Ints("merged_shape", {3}, {0, 0, hidden})}, node_->output(0));
    return true;
  }

  // EmbedLayerNormalization (BERT's embeddings as ONNX Runtime fuses them): the word, position
  // (position_ids, else 0..seq-1) and segment embeddings gathered and summed (the sum is the
  // optional third output), LayerNormalization over the hidden axis; mask_index (second output)
  // each batch's count of mask entries equal to 1, zeros without a mask, as ONNX Runtime's CPU
  // kernel computes them.
  bool EmbedLayerNorm() {
    if (opset_ < 11 || !Has(2) || !Has(3) || !Has(5)) return false;  // Range: opset 11
    const std::string sum_out = Read(2) ? node_->output(2) : "";
    std::string sum = Emit("Gather", {In(2), In(0)});
    std::string positions;
    if (node_->input_size() > 8 && Has(8)) {
      positions = In(8);
    } else {
      const std::string seq = Emit("Gather", {Emit("Shape", {In(0)}), Ints("one", {}, {1})});
      positions = Emit("Range", {Ints("zero", {}, {0}), seq, Ints("step", {}, {1})});
    }
    const bool segments = Has(1) && Has(4);
    sum = Emit("Add", {sum, Emit("Gather", {In(3), positions})}, segments ? "" : sum_out);
    if (segments) sum = Emit("Add", {sum, Emit("Gather", {In(4), In(1)})}, sum_out);
    LayerNorm(sum, In(5), Has(6) ? In(6) : "", Float("epsilon", 1e-12f), node_->output(0));
    if (Read(1)) {
      if (node_->input_size() > 7 && Has(7)) {
        const std::string ones = Emit(
            "Cast", {Emit("Equal", {In(7), Ints("one32", {}, {1}, true)})}, "",
            [](onnx::NodeProto* n) { ExportContext::AttrInt(n, "to", onnx::TensorProto::INT32); });
        if (opset_ >= 13)
          Emit("ReduceSum", {ones, Ints("axes", {1}, {1})}, node_->output(1),
               [](onnx::NodeProto* n) { ExportContext::AttrInt(n, "keepdims", 0); });
        else
          Emit("ReduceSum", {ones}, node_->output(1), [](onnx::NodeProto* n) {
            ExportContext::AttrInts(n, "axes", {1});
            ExportContext::AttrInt(n, "keepdims", 0);
          });
      } else {
        const std::string batch =
            Emit("Slice", {Emit("Shape", {In(0)}), Ints("from", {1}, {0}), Ints("to", {1}, {1})});
        Emit("ConstantOfShape", {batch}, node_->output(1), [](onnx::NodeProto* n) {
          auto* a = n->add_attribute();
          a->set_name("value");
          a->set_type(onnx::AttributeProto::TENSOR);
          a->mutable_t()->set_data_type(onnx::TensorProto::INT32);
          a->mutable_t()->add_dims(1);
          a->mutable_t()->add_int32_data(0);
        });
      }
    }
    return true;
  }

  bool FusedMatMul() {
    if (node_->output_size() != 1 || !Has(1)) return false;
    // Each operand's permutation (ONNX Runtime's MatMulComputeHelper): transBatch reads an
    // operand [M, b0, ..., bn, K] as [b0, ..., bn, M, K] (axis 0 moved before the last), then
    // trans swaps the last two axes. The rank comes from the declared or inferred shapes.
    std::vector<std::string> operands = {In(0), In(1)};
    const char* flags[2][2] = {{"transA", "transBatchA"}, {"transB", "transBatchB"}};
    for (int side = 0; side < 2; ++side) {
      const bool trans = Int(flags[side][0], 0) != 0, batch = Int(flags[side][1], 0) != 0;
      if (!trans && !batch) continue;
      const int rank = RankOf(operands[side]);
      if (rank < 0) ++unranked_;
      if (rank < 2 || (batch && rank < 3)) return false;
      std::vector<int64_t> perm(rank);
      for (int d = 0; d < rank; ++d) perm[d] = d;
      if (batch) {
        for (int d = 0; d + 2 < rank; ++d) perm[d] = d + 1;
        perm[rank - 2] = 0;
      }
      if (trans) std::swap(perm[rank - 2], perm[rank - 1]);
      operands[side] = Emit("Transpose", {operands[side]}, "", [perm](onnx::NodeProto* n) {
        ExportContext::AttrInts(n, "perm", perm);
      });
    }
    const double alpha = Float("alpha", 1.f);
    if (alpha == 1.0) {
      Emit("MatMul", operands, node_->output(0));
    } else {
      Emit("Mul", {Emit("MatMul", operands), Scalar("alpha", alpha)}, node_->output(0));
    }
    return true;
  }

  bool FusedConv() {
    if (node_->output_size() != 1 || !Has(1)) return false;
    const std::string activation = String("activation", "");
    std::vector<float> params;
    if (const auto* p = Attr("activation_params"))
      params.assign(p->floats().begin(), p->floats().end());
    if (!KnownActivation(activation)) return false;
    const onnx::NodeProto& original = *node_;
    auto conv_attrs = [&original](onnx::NodeProto* n) {
      for (const auto& a : original.attribute())
        if (a.name() != "activation" && a.name() != "activation_params") *n->add_attribute() = a;
    };
    std::vector<std::string> conv_inputs = {In(0), In(1)};
    if (Has(2)) conv_inputs.push_back(In(2));
    const std::string& y_out = node_->output(0);
    std::string y =
        Emit("Conv", conv_inputs, activation.empty() && !Has(3) ? y_out : "", conv_attrs);
    if (Has(3)) y = Emit("Add", {y, In(3)}, activation.empty() ? y_out : "");
    if (!activation.empty()) Activate(y, activation, params, y_out);
    return true;
  }

  // FusedGemm(A, B, C?): Gemm (alpha, beta, transA, transB), then its activation
  // (activation_alpha, activation_beta), as ONNX Runtime's Gemm-activation fusion writes it.
  bool FusedGemm() {
    if (node_->output_size() != 1 || !Has(1)) return false;
    const std::string activation = String("activation", "");
    if (!KnownActivation(activation)) return false;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> params = {Float("activation_alpha", nan),
                                       Float("activation_beta", nan)};
    const onnx::NodeProto& original = *node_;
    auto gemm_attrs = [&original](onnx::NodeProto* n) {
      for (const auto& a : original.attribute())
        if (a.name() == "alpha" || a.name() == "beta" || a.name() == "transA" ||
            a.name() == "transB")
          *n->add_attribute() = a;
    };
    std::vector<std::string> inputs = {In(0), In(1)};
    if (Has(2)) inputs.push_back(In(2));
    const std::string& y_out = node_->output(0);
    const std::string y = Emit("Gemm", inputs, activation.empty() ? y_out : "", gemm_attrs);
    if (!activation.empty()) Activate(y, activation, params, y_out);
    return true;
  }

  static bool KnownActivation(const std::string& activation) {
    static const std::set<std::string> kActivations = {"",          "Relu", "Tanh",       "Sigmoid",
                                                       "LeakyRelu", "Clip", "HardSigmoid"};
    return kActivations.count(activation) > 0;
  }

  // y's activation into y_out; params[k] (absent or NaN: the operator's default) are its
  // parameters in ONNX Runtime's order (Clip: min, max; LeakyRelu: alpha; HardSigmoid: alpha,
  // beta).
  void Activate(const std::string& y, const std::string& activation,
                const std::vector<float>& params, const std::string& y_out) {
    auto param = [&](size_t k, float fallback) {
      return k < params.size() && !std::isnan(params[k]) ? params[k] : fallback;
    };
    if (activation == "Clip") {
      const float lo = param(0, -std::numeric_limits<float>::max()),
                  hi = param(1, std::numeric_limits<float>::max());
      if (opset_ < 11)  // the bounds as attributes
        Emit("Clip", {y}, y_out, [lo, hi](onnx::NodeProto* n) {
          ExportContext::AttrFloat(n, "min", lo);
          ExportContext::AttrFloat(n, "max", hi);
        });
      else
        Emit("Clip", {y, Scalar("min", lo), Scalar("max", hi)}, y_out);
    } else if (activation == "LeakyRelu") {
      const float alpha = param(0, 0.01f);
      Emit("LeakyRelu", {y}, y_out,
           [alpha](onnx::NodeProto* n) { ExportContext::AttrFloat(n, "alpha", alpha); });
    } else if (activation == "HardSigmoid") {
      const float alpha = param(0, 0.2f), beta = param(1, 0.5f);
      Emit("HardSigmoid", {y}, y_out, [alpha, beta](onnx::NodeProto* n) {
        ExportContext::AttrFloat(n, "alpha", alpha);
        ExportContext::AttrFloat(n, "beta", beta);
      });
    } else {
      Emit(activation, {y}, y_out);
    }
  }

  onnx::GraphProto* g_;
  int64_t opset_;
  std::map<std::string, int> uses_;
  int unranked_ = 0;
};

}  // namespace

int RewriteOrtContribOps(onnx::ModelProto* model, int64_t opset) {
  int rewritten = 0;
  for (;;) {
    ContribRewriter pass(model->mutable_graph(), opset);
    const int done = pass.Run();
    rewritten += done;
    if (pass.unranked() == 0) return rewritten;
    // The ranks from ONNX's shape inference, which now sees through the nodes rewritten (a
    // FusedMatMul after a SkipLayerNormalization or another FusedMatMul); its errors leave the
    // shapes as declared. Again while a pass makes progress.
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                          /*data_prop=*/true);
      onnx::shape_inference::InferShapes(*model, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception&) {
      return rewritten;
    }
    ContribRewriter ranked(model->mutable_graph(), opset);
    const int more = ranked.Run();
    rewritten += more;
    if (more == 0 || ranked.unranked() == 0) return rewritten;
  }
}

std::string HardwareSpecificOrtNode(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& n : graph.node())
    if (n.domain() == "com.microsoft.nchwc")
      return "node '" + n.name() + "' (com.microsoft.nchwc." + n.op_type() +
             ") is ONNX Runtime's NCHWc layout, which it writes only into a model optimized at "
             "level 'all' for the CPU it ran on (weights packed for that CPU; ONNX Runtime warns "
             "that such a model is hardware specific). Save the model at level 'extended' "
             "(graph_optimization_level ORT_ENABLE_EXTENDED) or give the original model";
  return "";
}

}  // namespace verisub::runtime
