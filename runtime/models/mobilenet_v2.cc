// MobileNet-v2 (width 1.0) as torchvision defines it: inverted residuals with depthwise 3x3
// convolutions and ReLU6 written as Clip(0, 6).
#include "runtime/models/cnn_layers.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {
namespace {

FeatureMap ConvBnRelu6(GraphBuilder& b, const FeatureMap& x, const ConvOptions& o) {
  return Relu6(b, ConvBn(b, x, o));
}

FeatureMap InvertedResidual(GraphBuilder& b, const FeatureMap& x, int64_t out, int64_t stride,
                            int64_t expand_ratio) {
  const int64_t hidden = x.channels * expand_ratio;
  FeatureMap y = x;
  if (expand_ratio != 1) y = ConvBnRelu6(b, y, SquareConv(hidden, 1));
  y = ConvBnRelu6(b, y, SquareConv(hidden, 3, stride, /*group=*/hidden));
  y = ConvBn(b, y, SquareConv(out, 1));  // linear bottleneck: no activation
  if (stride == 1 && x.channels == out) return Add(b, x, y);
  return y;
}

}  // namespace

onnx::ModelProto BuildMobileNetV2(const BuildOptions& options) {
  GraphBuilder b("mobilenet_v2", options.seed);
  FeatureMap x = ImageInput(b, 3, ImageSize(options, 224));
  x = ConvBnRelu6(b, x, SquareConv(32, 3, 2));
  struct Stage {
    int64_t expand, channels, repeats, stride;
  };
  constexpr Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                               {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const Stage& s : kStages) {
    for (int64_t i = 0; i < s.repeats; ++i) {
      x = InvertedResidual(b, x, s.channels, i == 0 ? s.stride : 1, s.expand);
    }
  }
  x = ConvBnRelu6(b, x, SquareConv(1280, 1));
  ClassifierHead(b, x, 1000);
  return std::move(b).Finish();
}

}  // namespace verisub::runtime::models
