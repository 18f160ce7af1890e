// CNN layer helpers: Conv, BatchNormalization, activations, pools, merges and the classifier head.
#include "runtime/models/cnn_layers.h"

#include <cmath>

#include "base/status.h"

namespace verisub::runtime::models {
namespace {

int64_t PooledSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode) {
  const int64_t span = in + 2 * pad - kernel;
  VERISUB_CHECK(span >= 0);
  return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

std::vector<int64_t> Dims(const FeatureMap& x) { return {1, x.channels, x.height, x.width}; }

}  // namespace

ConvOptions SquareConv(int64_t out_channels, int64_t kernel, int64_t stride, int64_t group) {
  ConvOptions o;
  o.out_channels = out_channels;
  o.kernel_h = o.kernel_w = kernel;
  o.stride = stride;
  o.group = group;
  return o;
}

FeatureMap ImageInput(GraphBuilder& b, int64_t channels, int64_t size) {
  FeatureMap x{"", channels, size, size};
  x.name = b.AddInput("input", Dims(x));
  return x;
}

FeatureMap Conv(GraphBuilder& b, const FeatureMap& x, const ConvOptions& o) {
  const int64_t pad_h = o.pad_h >= 0 ? o.pad_h : (o.kernel_h - 1) / 2;
  const int64_t pad_w = o.pad_w >= 0 ? o.pad_w : (o.kernel_w - 1) / 2;
  VERISUB_CHECK(x.channels % o.group == 0 && o.out_channels % o.group == 0);
  const int64_t in_per_group = x.channels / o.group;
  const int64_t fan_in = in_per_group * o.kernel_h * o.kernel_w;
  // He-uniform keeps activations of deep ReLU stacks in a sane range for executor tests.
  const float bound = std::sqrt(6.0f / static_cast<float>(fan_in));
  std::vector<std::string> inputs = {
      x.name, b.AddUniformWeight("conv_w", {o.out_channels, in_per_group, o.kernel_h, o.kernel_w},
                                 -bound, bound)};
  if (o.bias) {
    const float bias_bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    inputs.push_back(b.AddUniformWeight("conv_b", {o.out_channels}, -bias_bound, bias_bound));
  }
  std::vector<onnx::AttributeProto> attrs = {
      IntsAttr("kernel_shape", {o.kernel_h, o.kernel_w}),
      IntsAttr("strides", {o.stride, o.stride}),
      IntsAttr("pads", {pad_h, pad_w, pad_h, pad_w}),
      IntsAttr("dilations", {1, 1}),
      IntAttr("group", o.group),
  };
  FeatureMap y;
  y.name = b.AddNode("Conv", inputs, std::move(attrs));
  y.channels = o.out_channels;
  y.height = PooledSize(x.height, o.kernel_h, o.stride, pad_h, false);
  y.width = PooledSize(x.width, o.kernel_w, o.stride, pad_w, false);
  return y;
}

FeatureMap BatchNorm(GraphBuilder& b, const FeatureMap& x, float epsilon) {
  const std::vector<int64_t> c = {x.channels};
  std::vector<std::string> inputs = {
      x.name,
      b.AddUniformWeight("bn_scale", c, 0.8f, 1.2f),
      b.AddUniformWeight("bn_bias", c, -0.1f, 0.1f),
      b.AddUniformWeight("bn_mean", c, -0.1f, 0.1f),
      b.AddUniformWeight("bn_var", c, 0.5f, 1.5f),  // strictly positive, as a variance must be
  };
  FeatureMap y = x;
  y.name = b.AddNode("BatchNormalization", inputs, {FloatAttr("epsilon", epsilon)});
  return y;
}

FeatureMap Relu(GraphBuilder& b, const FeatureMap& x) {
  FeatureMap y = x;
  y.name = b.AddNode("Relu", {x.name});
  return y;
}

FeatureMap Relu6(GraphBuilder& b, const FeatureMap& x) {
  FeatureMap y = x;
  y.name = b.AddNode("Clip", {x.name, b.SharedScalar(0.0f), b.SharedScalar(6.0f)});
  return y;
}

FeatureMap ConvBn(GraphBuilder& b, const FeatureMap& x, const ConvOptions& options, float epsilon) {
  return BatchNorm(b, Conv(b, x, options), epsilon);
}

FeatureMap ConvBnRelu(GraphBuilder& b, const FeatureMap& x, const ConvOptions& options,
                      float epsilon) {
  return Relu(b, ConvBn(b, x, options, epsilon));
}

FeatureMap MaxPool(GraphBuilder& b, const FeatureMap& x, int64_t kernel, int64_t stride,
                   int64_t pad, bool ceil_mode) {
  FeatureMap y = x;
  y.name =
      b.AddNode("MaxPool", {x.name},
                {IntsAttr("kernel_shape", {kernel, kernel}), IntsAttr("strides", {stride, stride}),
                 IntsAttr("pads", {pad, pad, pad, pad}), IntAttr("ceil_mode", ceil_mode)});
  y.height = PooledSize(x.height, kernel, stride, pad, ceil_mode);
  y.width = PooledSize(x.width, kernel, stride, pad, ceil_mode);
  return y;
}

FeatureMap AveragePool(GraphBuilder& b, const FeatureMap& x, int64_t kernel, int64_t stride,
                       int64_t pad, bool count_include_pad) {
  FeatureMap y = x;
  y.name = b.AddNode(
      "AveragePool", {x.name},
      {IntsAttr("kernel_shape", {kernel, kernel}), IntsAttr("strides", {stride, stride}),
       IntsAttr("pads", {pad, pad, pad, pad}), IntAttr("count_include_pad", count_include_pad)});
  y.height = PooledSize(x.height, kernel, stride, pad, false);
  y.width = PooledSize(x.width, kernel, stride, pad, false);
  return y;
}

FeatureMap Add(GraphBuilder& b, const FeatureMap& x, const FeatureMap& y) {
  VERISUB_CHECK(x.channels == y.channels && x.height == y.height && x.width == y.width);
  FeatureMap z = x;
  z.name = b.AddNode("Add", {x.name, y.name});
  return z;
}

FeatureMap ConcatChannels(GraphBuilder& b, const std::vector<FeatureMap>& xs) {
  VERISUB_CHECK(!xs.empty());
  FeatureMap y = xs.front();
  y.channels = 0;
  std::vector<std::string> names;
  for (const FeatureMap& x : xs) {
    VERISUB_CHECK(x.height == y.height && x.width == y.width);
    y.channels += x.channels;
    names.push_back(x.name);
  }
  y.name = b.AddNode("Concat", names, {IntAttr("axis", 1)});
  return y;
}

std::string ClassifierHead(GraphBuilder& b, const FeatureMap& x, int64_t classes) {
  const std::string pooled = b.AddNode("GlobalAveragePool", {x.name});
  const std::string flat = b.AddNode("Flatten", {pooled}, {IntAttr("axis", 1)});
  const float bound = 1.0f / std::sqrt(static_cast<float>(x.channels));
  const std::string logits =
      b.AddNode("Gemm",
                {flat, b.AddUniformWeight("fc_w", {classes, x.channels}, -bound, bound),
                 b.AddUniformWeight("fc_b", {classes}, -bound, bound)},
                {IntAttr("transB", 1)});
  b.AddOutput(logits, {1, classes});
  return logits;
}

}  // namespace verisub::runtime::models
