// Window geometry (kernel, strides, dilations, explicit pads) of convolution and pooling nodes,
// spec or ONNX, in the form oneDNN takes.
#pragma once

#include <optional>
#include <vector>

#include "runtime/dnnl/fusion.h"
#include "runtime/graph.h"

namespace verisub::runtime::dnnl_backend {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pad_l, pad_r;  // dilations: 1 = dense
};

// For a spec conv2d/pool node or an ONNX Conv/MaxPool/AveragePool node whose input has spatial
// dims `in` (and, for Conv, a kernel `kernel`); nullopt when the attributes are not understood.
std::optional<Window> WindowOf(const Graph& g, const Node& n, const std::vector<int64_t>& in,
                               std::vector<int64_t> kernel);

// Adds a group's absorbed Pad (fusion.h) to the window's pads.
void AddExtraPads(const Group& g, Window* w);

}  // namespace verisub::runtime::dnnl_backend
