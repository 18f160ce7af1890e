// Where the layout DP's numbers come from: the time of a node in given formats (layouts and
// element precisions) and of a format conversion. An analytic source (layout_costs.h) is the
// default; a backend that measures its kernels and reorders (oneDNN) answers the same questions.
// Layout-only sources implement the two layout methods; the format methods price float32 formats
// with them and have no reduced-precision kernels. A source with reduced-precision kernels
// (precision_costs.h) overrides the format methods and says which precisions it offers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rewriter/layout_format.h"
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

  // Precisions besides float32 this source has kernels for (none by default).
  virtual std::vector<Precision> ReducedPrecisions() const { return {}; }
  // The same two questions in formats. Defaults: float32 formats as above; no kernel and no
  // conversion for a reduced precision (nullopt, infinity).
  virtual std::optional<double> FormatKernelCostUs(const runtime::Graph& g,
                                                   const runtime::Node& node,
                                                   std::span<const Format> inputs,
                                                   std::span<const Format> outputs) const;
  virtual double FormatConversionCostUs(const runtime::Value& value, Format from, Format to) const;

  // The questions about `g`'s nodes come between BeginGraph(g) and EndGraph()
  // (BuildLayoutProblem brackets its own so): a source may prepare what it needs per graph once
  // instead of recognizing the graph in every question. Defaults do nothing.
  virtual void BeginGraph(const runtime::Graph& g) const { (void)g; }
  virtual void EndGraph() const {}

  // What the costs of node `node` of `g` depend on besides the node itself (its operator,
  // parameters and values' types): other nodes of `g` (graph node indices) and any other facts,
  // so that a search pricing many rewrites of one graph prices a node again only where these
  // changed (LayoutPricingCache). nullopt (the default): ask every time. Asked between
  // BeginGraph(g) and EndGraph().
  struct NodeContext {
    std::vector<int> nodes;
    std::vector<int64_t> facts;
  };
  virtual std::optional<NodeContext> ContextOf(const runtime::Graph& g, int node) const {
    (void)g;
    (void)node;
    return std::nullopt;
  }
};

// The precision of `node`'s data slots (activation inputs and outputs; weights and omitted inputs
// left out) when they agree, nullopt when they are mixed; float32 when it has none.
std::optional<Precision> DataPrecision(const runtime::Graph& g, const runtime::Node& node,
                                       std::span<const Format> inputs,
                                       std::span<const Format> outputs);

// The layouts of `formats`, precisions dropped.
std::vector<specs::Layout> LayoutsOf(std::span<const Format> formats);

// The layouts of `formats` when every one is float32, else nullopt.
std::optional<std::vector<specs::Layout>> Float32Layouts(std::span<const Format> formats);

}  // namespace verisub::rewriter
