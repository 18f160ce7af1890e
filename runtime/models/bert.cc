// BERT encoder (post-LayerNorm, as in the original and in Hugging Face's BertModel) in the operator
// form PyTorch's exporter produces at opset 17: MatMul + Add projections, Reshape/Transpose head
// splits, Softmax attention, Erf-based GELU and LayerNormalization. The input is the summed
// embedding tensor [1, sequence, hidden]; token lookup and the attention mask are left out.
#include <cmath>

#include "runtime/models/graph_builder.h"
#include "runtime/models/models.h"
#include "base/status.h"

namespace verisub::runtime::models {
namespace {

class BertWriter {
 public:
  BertWriter(GraphBuilder& b, const BertConfig& c) : b_(b), c_(c) {
    VERISUB_CHECK(c.hidden % c.heads == 0);
    head_dim_ = c.hidden / c.heads;
    split_shape_ = b.AddInt64s("heads_shape", {1, c.sequence, c.heads, head_dim_});
    merged_shape_ = b.AddInt64s("hidden_shape", {1, c.sequence, c.hidden});
  }

  std::string Layer(const std::string& x) {
    const std::string attended = LayerNorm(Residual(SelfAttention(x), x));
    return LayerNorm(Residual(FeedForward(attended), attended));
  }

  std::string LayerNorm(const std::string& x) {
    const std::vector<int64_t> dims = {c_.hidden};
    const std::string scale = b_.AddUniformWeight("ln_scale", dims, 0.9f, 1.1f);
    const std::string bias = b_.AddUniformWeight("ln_bias", dims, -0.05f, 0.05f);
    return b_.AddNode("LayerNormalization", {x, scale, bias},
                      {IntAttr("axis", -1), FloatAttr("epsilon", 1e-12f)});
  }

 private:
  // x * W + b with W stored [in, out], as the exporter writes nn.Linear after its transpose.
  std::string Linear(const std::string& x, int64_t in, int64_t out) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(in));
    const std::string w = b_.AddUniformWeight("linear_w", {in, out}, -bound, bound);
    const std::string product = b_.AddNode("MatMul", {x, w});
    return b_.AddNode("Add", {product, b_.AddUniformWeight("linear_b", {out}, -bound, bound)});
  }

  std::string Residual(const std::string& y, const std::string& x) {
    return b_.AddNode("Add", {y, x});
  }

  // [1, seq, hidden] -> [1, heads, seq, head_dim] (or [1, heads, head_dim, seq] for keys).
  std::string SplitHeads(const std::string& x, bool keys) {
    const std::string split = b_.AddNode("Reshape", {x, split_shape_});
    return b_.AddNode("Transpose", {split},
                      {IntsAttr("perm", keys ? std::vector<int64_t>{0, 2, 3, 1}
                                             : std::vector<int64_t>{0, 2, 1, 3})});
  }

  std::string SelfAttention(const std::string& x) {
    const std::string q = SplitHeads(Linear(x, c_.hidden, c_.hidden), false);
    const std::string k = SplitHeads(Linear(x, c_.hidden, c_.hidden), true);
    const std::string v = SplitHeads(Linear(x, c_.hidden, c_.hidden), false);
    const std::string scores = b_.AddNode("MatMul", {q, k});
    const float sqrt_d = std::sqrt(static_cast<float>(head_dim_));
    const std::string scaled = b_.AddNode("Div", {scores, b_.SharedScalar(sqrt_d)});
    const std::string probs = b_.AddNode("Softmax", {scaled}, {IntAttr("axis", -1)});
    const std::string context = b_.AddNode("MatMul", {probs, v});
    const std::string merged =
        b_.AddNode("Transpose", {context}, {IntsAttr("perm", std::vector<int64_t>{0, 2, 1, 3})});
    const std::string flat = b_.AddNode("Reshape", {merged, merged_shape_});
    return Linear(flat, c_.hidden, c_.hidden);
  }

  // GELU(x) = x * 0.5 * (1 + erf(x / sqrt(2))), in the node order torch.onnx emits.
  std::string Gelu(const std::string& x) {
    const std::string scaled = b_.AddNode("Div", {x, b_.SharedScalar(std::sqrt(2.0f))});
    const std::string erf = b_.AddNode("Erf", {scaled});
    const std::string shifted = b_.AddNode("Add", {erf, b_.SharedScalar(1.0f)});
    const std::string gated = b_.AddNode("Mul", {x, shifted});
    return b_.AddNode("Mul", {gated, b_.SharedScalar(0.5f)});
  }

  std::string FeedForward(const std::string& x) {
    return Linear(Gelu(Linear(x, c_.hidden, c_.intermediate)), c_.intermediate, c_.hidden);
  }

  GraphBuilder& b_;
  const BertConfig& c_;
  int64_t head_dim_ = 0;
  std::string split_shape_;
  std::string merged_shape_;
};

}  // namespace

onnx::ModelProto BuildBert(const BertConfig& config, const BuildOptions& options) {
  const std::string name =
      config.layers == 12 ? "bert_base" : "bert_" + std::to_string(config.layers) + "layer";
  GraphBuilder b(name, options.seed);
  const std::vector<int64_t> dims = {1, config.sequence, config.hidden};
  BertWriter writer(b, config);
  // The embedding LayerNorm that BERT applies to the summed embeddings, then the encoder stack.
  std::string x = writer.LayerNorm(b.AddInput("embeddings", dims));
  for (int64_t i = 0; i < config.layers; ++i) x = writer.Layer(x);
  b.AddOutput(x, dims);
  return std::move(b).Finish();
}

}  // namespace verisub::runtime::models
