// DenseNet-121 (torchvision): dense blocks in which every layer reads the concatenation of all
// earlier feature maps of its block, exported (as PyTorch does) as one Concat per layer. The
// layout DP's hardest benchmark: every feature map of a block stays live to the block's end.
#include "runtime/models/cnn_layers.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {

onnx::ModelProto BuildDenseNet121(const BuildOptions& options) {
  constexpr int64_t kGrowth = 32, kBottleneck = 4, kInitFeatures = 64;
  constexpr int64_t kBlocks[] = {6, 12, 24, 16};
  GraphBuilder b("densenet121", options.seed);
  FeatureMap x = ImageInput(b, 3, ImageSize(options, 224));
  x = ConvBnRelu(b, x, SquareConv(kInitFeatures, 7, 2));
  x = MaxPool(b, x, 3, 2, 1);
  for (size_t block = 0; block < std::size(kBlocks); ++block) {
    std::vector<FeatureMap> features{x};
    for (int64_t layer = 0; layer < kBlocks[block]; ++layer) {
      FeatureMap in = features.size() == 1 ? features[0] : ConcatChannels(b, features);
      FeatureMap y = Relu(b, BatchNorm(b, in));
      y = ConvBnRelu(b, y, SquareConv(kBottleneck * kGrowth, 1));
      y = Conv(b, y, SquareConv(kGrowth, 3));
      features.push_back(y);
    }
    x = ConcatChannels(b, features);
    if (block + 1 < std::size(kBlocks)) {  // transition: halve channels and resolution
      x = Relu(b, BatchNorm(b, x));
      x = Conv(b, x, SquareConv(x.channels / 2, 1));
      x = AveragePool(b, x, 2, 2, 0, false);
    }
  }
  x = Relu(b, BatchNorm(b, x));
  ClassifierHead(b, x, 1000);
  return std::move(b).Finish();
}

}  // namespace verisub::runtime::models
