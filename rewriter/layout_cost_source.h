// Where the layout DP's numbers come from: the time of a node in given layouts and of a layout
// conversion. An analytic source (layout_costs.h) is the default; a backend that measures its
// kernels and reorders (oneDNN) answers the same two questions.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "runtime/graph.h"
#include "specs/layout.h"

namespace verisub::rewriter {

class LayoutCostSource {
 public:
  virtual ~LayoutCostSource() = default;
  virtual std::string Name() const = 0;
  // Time of `node` of `g` reading input slot k in inputs[k] and writing output slot k in
  // outputs[k] (one layout per slot of node.inputs / node.outputs); nullopt when no kernel runs
  // in that combination. Weights and omitted inputs are given kPlain: weights are reordered
  // once at prepare time, into whatever the kernel wants, and cost nothing per run.
  virtual std::optional<double> KernelCostUs(const runtime::Graph& g, const runtime::Node& node,
                                             std::span<const specs::Layout> inputs,
                                             std::span<const specs::Layout> outputs) const = 0;
  // Time of converting `value` (its shape and element type) from one layout to another.
  virtual double ConversionCostUs(const runtime::Value& value, specs::Layout from,
                                  specs::Layout to) const = 0;
};

}  // namespace verisub::rewriter
