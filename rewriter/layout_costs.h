// The analytic layout cost source: a node's plain time from a runtime::CostModel, scaled by a
// documented factor per layout; conversions priced as the bytes they read and write.
//
// The model, and why:
// - Convolutions vectorize over a block of channels in nChw8c/nChw16c (every load of an input
//   pixel feeds 8 or 16 output-channel lanes, with no gather), and over contiguous channels in
//   NHWC. oneDNN measured on this machine: blocked nChw8c convolutions 1.2x to 1.8x faster than
//   plain NCHW (issue 16), hence the factors below. A blocked layout pads C up to a multiple of
//   the block: the padded channels are computed and moved too (factor padded/real channels, on
//   the input and the output side). Grouped convolutions need whole blocks per group. The first
//   convolution of a network (C <= 4) may read plain and write blocked (oneDNN has such
//   kernels), so an image input does not need a conversion.
// - Pooling runs in NHWC and blocked layouts (vectorized over channels), a little faster; so
//   does a mean over the spatial axes of an image (a global pooling on oneDNN), whose output,
//   of spatial extent 1, is plain in every layout.
// - Elementwise operators (relu, sigmoid, tanh, ewadd, ewmul, smul, batchnorm, bias_add and
//   channel_scale along channels) are layout-agnostic: every data input and the output in the
//   same layout, same time except the padding of blocked layouts.
// - Concat and split along channels: plain and NHWC; blocked only when every part's channel
//   count is a multiple of the block (a block never straddles two parts).
// - Matmul reads either operand row- or column-major (a BLAS transpose flag), same time.
// - Everything else, opaque operators included: plain only.
// - A conversion reads the tensor in one layout and writes it in the other: (bytes read +
//   bytes written) / bandwidth + a kernel launch, with padded sizes for blocked layouts.
#pragma once

#include "rewriter/layout_cost_source.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/cost/cost_model.h"

namespace verisub::rewriter {

// Time factors relative to plain NCHW (smaller is faster).
inline constexpr double kConvNhwcFactor = 0.85;
inline constexpr double kConvBlocked8Factor = 0.6;  // 1.67x: the middle of oneDNN's 1.2x-1.8x
// AVX2 (this machine) has 8 float lanes: nChw16c runs as two 8-lane halves, a little slower
// than nChw8c before padding (on AVX-512 the order would flip).
inline constexpr double kConvBlocked16Factor = 0.65;
inline constexpr double kPoolNhwcFactor = 0.9;
inline constexpr double kPoolBlockedFactor = 0.8;
// A convolution with at most this many input channels may read plain and write blocked.
inline constexpr int64_t kFirstLayerMaxChannels = 4;

// True when `n` is a reduce_mean over the spatial axes (2 and 3) of a rank-4 tensor: a global
// pooling, which reads its input in any image layout whose channel blocks divide C.
bool IsSpatialMean(const runtime::Graph& g, const runtime::Node& n);

// Whether node `n` is a slice or a split whose outputs, stored in the layout of its input, are
// contiguous pieces of the input's buffer (specs::ContiguousPieceOffset), which the oneDNN
// backend runs as views (data.cc, SubTensorInPlace): a channel split of one image, plain or on
// whole blocks (ShuffleNet's halves, the outputs of convolutions merged along output channels).
// Not for a graph output (copied).
bool SubTensorIsAView(const runtime::Graph& g, const runtime::Node& n,
                      std::span<const specs::Layout> inputs,
                      std::span<const specs::Layout> outputs);

class AnalyticLayoutCosts : public LayoutCostSource {
 public:
  // `kernels` prices every node in plain layout (it must outlive this object); `device` gives
  // the bandwidth and launch overhead of conversions.
  AnalyticLayoutCosts(const runtime::CostModel* kernels, runtime::DeviceDescription device)
      : kernels_(kernels), device_(std::move(device)) {}

  std::string Name() const override { return "analytic-layout:" + kernels_->Name(); }
  std::optional<double> KernelCostUs(const runtime::Graph& g, const runtime::Node& node,
                                     std::span<const specs::Layout> inputs,
                                     std::span<const specs::Layout> outputs) const override;
  double ConversionCostUs(const runtime::Value& value, specs::Layout from,
                          specs::Layout to) const override;
  // A node's time here is its operator instance's on its values' shapes: nothing else in the
  // graph changes it.
  std::optional<NodeContext> ContextOf(const runtime::Graph& g, int node) const override {
    (void)g;
    (void)node;
    return NodeContext{};
  }

 private:
  const runtime::CostModel* kernels_;
  runtime::DeviceDescription device_;
};

}  // namespace verisub::rewriter
