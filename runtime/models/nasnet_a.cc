// NasNet-A as TASO's benchmark (examples/nasnet_a.py) builds it: a stem, then three stages of five
// normal cells and one reduction cell, with separable convolutions (depthwise + pointwise), pools,
// pairwise adds and a five-way concat per cell. Like TASO's graph it has no BatchNormalization; we
// add a classifier head so the output is [1, 1000].
#include "runtime/models/cnn_layers.h"
#include "runtime/models/models.h"
#include "base/status.h"

namespace verisub::runtime::models {
namespace {

FeatureMap ConvRelu(GraphBuilder& b, const FeatureMap& x, const ConvOptions& o) {
  return Relu(b, Conv(b, x, o));
}

// TASO's `squeeze`: a 1x1 convolution with ReLU to the cell's channel count.
FeatureMap Squeeze(GraphBuilder& b, const FeatureMap& x, int64_t channels) {
  return ConvRelu(b, x, SquareConv(channels, 1));
}

// TASO's `fit` brings the previous cell's output to the current one's channels. Its strided 3x3
// branch never fires in this network (cells only take inputs of equal resolution), so only the
// 1x1 branch is built and the equal resolution is checked.
FeatureMap Fit(GraphBuilder& b, const FeatureMap& current, const FeatureMap& x) {
  VERISUB_CHECK(x.height == current.height && x.width == current.width);
  return Squeeze(b, x, current.channels);
}

// TASO's `seperable_conv`: a grouped convolution with one group per output channel (depthwise
// here, since every input already has `out` channels), then a 1x1 pointwise convolution.
FeatureMap Separable(GraphBuilder& b, const FeatureMap& x, int64_t out, int64_t kernel,
                     int64_t stride) {
  VERISUB_CHECK(x.channels % out == 0);
  FeatureMap t = Conv(b, x, SquareConv(out, kernel, stride, /*group=*/out));
  return Conv(b, t, SquareConv(out, 1));
}

// TF's NasNet pools with "SAME" padding that is not counted in the average.
FeatureMap Avg3(GraphBuilder& b, const FeatureMap& x, int64_t stride) {
  return AveragePool(b, x, 3, stride, 1, /*count_include_pad=*/false);
}

FeatureMap NormalCell(GraphBuilder& b, const FeatureMap& prev_in, const FeatureMap& cur_in,
                      int64_t out) {
  const FeatureMap cur = Squeeze(b, cur_in, out);
  const FeatureMap prev = Fit(b, cur, prev_in);
  const FeatureMap pairs[5][2] = {
      {Separable(b, cur, out, 3, 1), cur},
      {Separable(b, prev, out, 3, 1), Separable(b, cur, out, 3, 1)},
      {Avg3(b, cur, 1), prev},
      {Avg3(b, prev, 1), Avg3(b, prev, 1)},
      {Separable(b, prev, out, 3, 1), Separable(b, prev, out, 3, 1)},
  };
  std::vector<FeatureMap> outputs;
  for (const auto& pair : pairs) outputs.push_back(Add(b, pair[0], pair[1]));
  return ConcatChannels(b, outputs);
}

FeatureMap ReductionCell(GraphBuilder& b, const FeatureMap& prev_in, const FeatureMap& cur_in,
                         int64_t out) {
  const FeatureMap cur = Squeeze(b, cur_in, out);
  const FeatureMap prev = Fit(b, cur, prev_in);
  // Braced lists evaluate left to right, which fixes the node and weight order.
  const FeatureMap a[2] = {Separable(b, prev, out, 7, 2), Separable(b, cur, out, 5, 2)};
  const FeatureMap o0 = Add(b, a[0], a[1]);
  const FeatureMap c[6] = {MaxPool(b, cur, 3, 2, 1), Separable(b, prev, out, 7, 2),
                           Avg3(b, cur, 2),          Separable(b, prev, out, 5, 2),
                           MaxPool(b, cur, 3, 2, 1), Separable(b, o0, out, 3, 1)};
  const FeatureMap o1 = Add(b, c[0], c[1]);
  const FeatureMap o2 = Add(b, c[2], c[3]);
  const FeatureMap o3 = Add(b, c[4], c[5]);
  const FeatureMap o4 = Add(b, Avg3(b, o0, 1), o1);
  return ConcatChannels(b, {o0, o1, o2, o3, o4});
}

}  // namespace

onnx::ModelProto BuildNasNetA(const BuildOptions& options) {
  GraphBuilder b("nasnet_a", options.seed);
  FeatureMap x = ImageInput(b, 3, ImageSize(options, 224));
  x = ConvRelu(b, x, SquareConv(64, 7, 2));  // 112
  x = MaxPool(b, x, 3, 2, 1);                // 56
  int64_t out = 128;
  for (int stage = 0; stage < 3; ++stage) {
    FeatureMap prev = x;
    FeatureMap cur = x;
    for (int cell = 0; cell < 5; ++cell) {
      FeatureMap next = NormalCell(b, prev, cur, out);
      prev = cur;
      cur = next;
    }
    out *= 2;
    x = ReductionCell(b, prev, cur, out);
  }
  ClassifierHead(b, x, 1000);
  return std::move(b).Finish();
}

}  // namespace verisub::runtime::models
