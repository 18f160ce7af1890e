// Inception-v3 as torchvision defines it (eval mode: no auxiliary head, no dropout), input 299.
#include "runtime/models/cnn_layers.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {
namespace {

// torchvision's BasicConv2d: conv without bias, BatchNormalization with epsilon 0.001, ReLU.
FeatureMap Basic(GraphBuilder& b, const FeatureMap& x, int64_t out, int64_t kh, int64_t kw,
                 int64_t stride = 1, int64_t pad_h = -1, int64_t pad_w = -1) {
  ConvOptions o;
  o.out_channels = out;
  o.kernel_h = kh;
  o.kernel_w = kw;
  o.stride = stride;
  o.pad_h = pad_h;
  o.pad_w = pad_w;
  return ConvBnRelu(b, x, o, 1e-3f);
}

// Unpadded ("valid") square convolution, as in the stem and the grid reductions.
FeatureMap Valid(GraphBuilder& b, const FeatureMap& x, int64_t out, int64_t k, int64_t stride) {
  return Basic(b, x, out, k, k, stride, 0, 0);
}

// F.avg_pool2d(x, 3, stride=1, padding=1) counts padding in the divisor (PyTorch's default).
FeatureMap PoolBranch(GraphBuilder& b, const FeatureMap& x, int64_t out) {
  return Basic(b, AveragePool(b, x, 3, 1, 1, /*count_include_pad=*/true), out, 1, 1);
}

FeatureMap InceptionA(GraphBuilder& b, const FeatureMap& x, int64_t pool_features) {
  FeatureMap b1 = Basic(b, x, 64, 1, 1);
  FeatureMap b5 = Basic(b, Basic(b, x, 48, 1, 1), 64, 5, 5);
  FeatureMap b3 = Basic(b, Basic(b, Basic(b, x, 64, 1, 1), 96, 3, 3), 96, 3, 3);
  return ConcatChannels(b, {b1, b5, b3, PoolBranch(b, x, pool_features)});
}

FeatureMap InceptionB(GraphBuilder& b, const FeatureMap& x) {
  FeatureMap b3 = Valid(b, x, 384, 3, 2);
  FeatureMap bd = Valid(b, Basic(b, Basic(b, x, 64, 1, 1), 96, 3, 3), 96, 3, 2);
  return ConcatChannels(b, {b3, bd, MaxPool(b, x, 3, 2, 0)});
}

// The factorized 7x7 block: 1x7 and 7x1 convolutions with symmetric "same" padding.
FeatureMap InceptionC(GraphBuilder& b, const FeatureMap& x, int64_t c7) {
  FeatureMap b1 = Basic(b, x, 192, 1, 1);
  FeatureMap b7 = Basic(b, Basic(b, Basic(b, x, c7, 1, 1), c7, 1, 7), 192, 7, 1);
  FeatureMap bd = Basic(b, x, c7, 1, 1);
  bd = Basic(b, bd, c7, 7, 1);
  bd = Basic(b, bd, c7, 1, 7);
  bd = Basic(b, bd, c7, 7, 1);
  bd = Basic(b, bd, 192, 1, 7);
  return ConcatChannels(b, {b1, b7, bd, PoolBranch(b, x, 192)});
}

FeatureMap InceptionD(GraphBuilder& b, const FeatureMap& x) {
  FeatureMap b3 = Valid(b, Basic(b, x, 192, 1, 1), 320, 3, 2);
  FeatureMap b7 = Basic(b, Basic(b, Basic(b, x, 192, 1, 1), 192, 1, 7), 192, 7, 1);
  b7 = Valid(b, b7, 192, 3, 2);
  return ConcatChannels(b, {b3, b7, MaxPool(b, x, 3, 2, 0)});
}

// Each 3x3 path ends in parallel 1x3 and 3x1 convolutions whose outputs are concatenated.
FeatureMap InceptionE(GraphBuilder& b, const FeatureMap& x) {
  FeatureMap b1 = Basic(b, x, 320, 1, 1);
  FeatureMap b3 = Basic(b, x, 384, 1, 1);
  b3 = ConcatChannels(b, {Basic(b, b3, 384, 1, 3), Basic(b, b3, 384, 3, 1)});
  FeatureMap bd = Basic(b, Basic(b, x, 448, 1, 1), 384, 3, 3);
  bd = ConcatChannels(b, {Basic(b, bd, 384, 1, 3), Basic(b, bd, 384, 3, 1)});
  return ConcatChannels(b, {b1, b3, bd, PoolBranch(b, x, 192)});
}

}  // namespace

onnx::ModelProto BuildInceptionV3(const BuildOptions& options) {
  GraphBuilder b("inception_v3", options.seed);
  FeatureMap x = ImageInput(b, 3, ImageSize(options, 299));
  x = Valid(b, x, 32, 3, 2);   // 149
  x = Valid(b, x, 32, 3, 1);   // 147
  x = Basic(b, x, 64, 3, 3);   // 147
  x = MaxPool(b, x, 3, 2, 0);  // 73
  x = Basic(b, x, 80, 1, 1);
  x = Valid(b, x, 192, 3, 1);  // 71
  x = MaxPool(b, x, 3, 2, 0);  // 35
  x = InceptionA(b, x, 32);
  x = InceptionA(b, x, 64);
  x = InceptionA(b, x, 64);
  x = InceptionB(b, x);  // 17
  x = InceptionC(b, x, 128);
  x = InceptionC(b, x, 160);
  x = InceptionC(b, x, 160);
  x = InceptionC(b, x, 192);
  x = InceptionD(b, x);  // 8
  x = InceptionE(b, x);
  x = InceptionE(b, x);
  ClassifierHead(b, x, 1000);
  return std::move(b).Finish();
}

}  // namespace verisub::runtime::models
