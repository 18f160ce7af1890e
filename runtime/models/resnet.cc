// ResNet-50 and ResNeXt-50 (32x4d): torchvision's bottleneck networks, which differ only in the
// width and grouping of each bottleneck's 3x3 convolution.
#include "runtime/models/cnn_layers.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {
namespace {

struct BottleneckNet {
  std::string_view name;
  int64_t groups;
  int64_t width_per_group;
};

// torchvision's Bottleneck (ResNet v1.5): the stride sits on the 3x3 convolution, and the first
// block of each stage projects the shortcut with a strided 1x1 convolution + BatchNormalization.
FeatureMap Bottleneck(GraphBuilder& b, const FeatureMap& x, int64_t planes, int64_t stride,
                      const BottleneckNet& net) {
  constexpr int64_t kExpansion = 4;
  const int64_t width = planes * net.width_per_group / 64 * net.groups;
  FeatureMap y = ConvBnRelu(b, x, SquareConv(width, 1));
  y = ConvBnRelu(b, y, SquareConv(width, 3, stride, net.groups));
  y = ConvBn(b, y, SquareConv(planes * kExpansion, 1));
  FeatureMap shortcut = x;
  if (stride != 1 || x.channels != planes * kExpansion) {
    shortcut = ConvBn(b, x, SquareConv(planes * kExpansion, 1, stride));
  }
  return Relu(b, Add(b, y, shortcut));
}

onnx::ModelProto BuildBottleneckNet(const BottleneckNet& net, const BuildOptions& options) {
  GraphBuilder b(net.name, options.seed);
  FeatureMap x = ImageInput(b, 3, ImageSize(options, 224));
  x = ConvBnRelu(b, x, SquareConv(64, 7, 2));
  x = MaxPool(b, x, 3, 2, 1);
  constexpr int64_t kBlocks[] = {3, 4, 6, 3};
  int64_t planes = 64;
  for (int stage = 0; stage < 4; ++stage) {
    for (int64_t i = 0; i < kBlocks[stage]; ++i) {
      const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = Bottleneck(b, x, planes, stride, net);
    }
    planes *= 2;
  }
  ClassifierHead(b, x, 1000);
  return std::move(b).Finish();
}

}  // namespace

onnx::ModelProto BuildResNet50(const BuildOptions& options) {
  return BuildBottleneckNet({"resnet50", 1, 64}, options);
}

onnx::ModelProto BuildResNeXt50(const BuildOptions& options) {
  return BuildBottleneckNet({"resnext50_32x4d", 32, 4}, options);
}

}  // namespace verisub::runtime::models
