// SqueezeNet 1.1 as torchvision defines it (eval mode, so no dropout node).
#include "runtime/models/cnn_layers.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {
namespace {

FeatureMap ConvRelu(GraphBuilder& b, const FeatureMap& x, int64_t out, int64_t kernel,
                    int64_t stride = 1) {
  ConvOptions o = SquareConv(out, kernel, stride);
  o.bias = true;  // SqueezeNet has no BatchNormalization; its convolutions carry biases
  if (stride != 1) o.pad_h = o.pad_w = 0;
  return Relu(b, Conv(b, x, o));
}

// Fire module: 1x1 squeeze, then 1x1 and 3x3 expands concatenated on channels.
FeatureMap Fire(GraphBuilder& b, const FeatureMap& x, int64_t squeeze, int64_t expand) {
  FeatureMap s = ConvRelu(b, x, squeeze, 1);
  return ConcatChannels(b, {ConvRelu(b, s, expand, 1), ConvRelu(b, s, expand, 3)});
}

}  // namespace

onnx::ModelProto BuildSqueezeNet11(const BuildOptions& options) {
  GraphBuilder b("squeezenet1_1", options.seed);
  FeatureMap x = ImageInput(b, 3, ImageSize(options, 224));
  x = ConvRelu(b, x, 64, 3, 2);                    // 111
  x = MaxPool(b, x, 3, 2, 0, /*ceil_mode=*/true);  // 55
  x = Fire(b, x, 16, 64);
  x = Fire(b, x, 16, 64);
  x = MaxPool(b, x, 3, 2, 0, true);  // 27
  x = Fire(b, x, 32, 128);
  x = Fire(b, x, 32, 128);
  x = MaxPool(b, x, 3, 2, 0, true);  // 13
  x = Fire(b, x, 48, 192);
  x = Fire(b, x, 48, 192);
  x = Fire(b, x, 64, 256);
  x = Fire(b, x, 64, 256);
  // The classifier is a 1x1 convolution to 1000 channels, ReLU, then global pooling.
  x = ConvRelu(b, x, 1000, 1);
  const std::string pooled = b.AddNode("GlobalAveragePool", {x.name});
  const std::string logits = b.AddNode("Flatten", {pooled}, {IntAttr("axis", 1)});
  b.AddOutput(logits, {1, 1000});
  return std::move(b).Finish();
}

}  // namespace verisub::runtime::models
