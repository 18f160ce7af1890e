// CNN layer helpers over GraphBuilder: each appends standard ONNX nodes for one layer and tracks
// the NCHW shape (batch 1), so the image-model builders read like their reference definitions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/models/graph_builder.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {

// A float32 feature map [1, channels, height, width] in the graph under construction.
struct FeatureMap {
  std::string name;
  int64_t channels = 0;
  int64_t height = 0;
  int64_t width = 0;
};

struct ConvOptions {
  int64_t out_channels = 0;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride = 1;
  // Symmetric padding; -1 means "same" for odd kernels ((k - 1) / 2 on each side).
  int64_t pad_h = -1;
  int64_t pad_w = -1;
  int64_t group = 1;
  bool bias = false;
};

// Shorthand for a square kernel with "same" padding.
ConvOptions SquareConv(int64_t out_channels, int64_t kernel, int64_t stride = 1, int64_t group = 1);

FeatureMap ImageInput(GraphBuilder& b, int64_t channels, int64_t size);
// The input image size: options.image_size when set, else the network's own.
inline int64_t ImageSize(const BuildOptions& options, int64_t network_default) {
  return options.image_size > 0 ? options.image_size : network_default;
}
FeatureMap Conv(GraphBuilder& b, const FeatureMap& x, const ConvOptions& options);
// Inference-mode BatchNormalization with random but well-conditioned statistics.
FeatureMap BatchNorm(GraphBuilder& b, const FeatureMap& x, float epsilon = 1e-5f);
FeatureMap Relu(GraphBuilder& b, const FeatureMap& x);
// ReLU6 as Clip(x, 0, 6), the form PyTorch exports; the bounds are shared scalar initializers.
FeatureMap Relu6(GraphBuilder& b, const FeatureMap& x);
FeatureMap ConvBn(GraphBuilder& b, const FeatureMap& x, const ConvOptions& options,
                  float epsilon = 1e-5f);
FeatureMap ConvBnRelu(GraphBuilder& b, const FeatureMap& x, const ConvOptions& options,
                      float epsilon = 1e-5f);
FeatureMap MaxPool(GraphBuilder& b, const FeatureMap& x, int64_t kernel, int64_t stride,
                   int64_t pad, bool ceil_mode = false);
FeatureMap AveragePool(GraphBuilder& b, const FeatureMap& x, int64_t kernel, int64_t stride,
                       int64_t pad, bool count_include_pad);
FeatureMap Add(GraphBuilder& b, const FeatureMap& x, const FeatureMap& y);
FeatureMap ConcatChannels(GraphBuilder& b, const std::vector<FeatureMap>& xs);
// GlobalAveragePool, Flatten, Gemm (transB=1, as PyTorch exports nn.Linear); declares the
// [1, classes] graph output and returns its name.
std::string ClassifierHead(GraphBuilder& b, const FeatureMap& x, int64_t classes);

}  // namespace verisub::runtime::models
