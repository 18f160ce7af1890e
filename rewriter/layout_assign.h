// Layout assignment for a model graph: the problem built from a runtime::Graph and a
// LayoutCostSource (which layouts each node can run in, at what cost), solved by the layout DP,
// and handed back per value with the conversions a backend inserts.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "base/status.h"
#include "rewriter/layout_cost_source.h"
#include "rewriter/layout_dp.h"
#include "rewriter/layout_problem.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

// What the problem may use besides plain. Search-space options, kept apart from the DP's.
struct LayoutSpaceOptions {
  // Layouts a rank-4 value may take besides plain (nhwc, nchw8c, nchw16c by default).
  std::vector<specs::Layout> image_layouts{specs::Layout::kNHWC, specs::Layout::kNCHW8c,
                                           specs::Layout::kNCHW16c};
  // Rank-2 and rank-3 values (matrices, batched matrices) may be stored column-major.
  bool column_major = true;
  // A node whose slots allow more layout combinations than this is offered only the uniform
  // ones (every slot in the same layout where it fits, plain elsewhere).
  int max_combinations_per_node = 1024;
  // Precision as a generalized layout: float values may also be stored in these precisions,
  // in every layout they may take, where the cost source has kernels for them
  // (LayoutCostSource::ReducedPrecisions). Empty (the default): float32 only.
  std::vector<Precision> precisions;
  // Graph value ids kept float32 whatever `precisions` says (the accuracy budget's reverts).
  std::vector<int> float32_values;
};

// Pricing shared by the graphs of one search (the joint search prices every graph it builds,
// each a rewrite of an earlier one): a node's layout choices are kept by the node itself (nodes
// are immutable and shared between a graph and the graphs rewritten from it) and its context in
// the graph (LayoutCostSource::ContextOf: on oneDNN, its fusion group), a value's conversions by
// its type. For one cost source and one LayoutSpaceOptions; a source that gives no contexts is
// asked every time. The nodes a key names are held, so their addresses are never reused.
struct LayoutPricingCache {
  int64_t node_hits = 0, node_misses = 0;  // nodes priced from the cache, and afresh

  // The entries, for BuildLayoutProblem only.
  struct NodeEntry {
    std::vector<std::shared_ptr<const runtime::Node>> held;  // the node, then its context's
    std::vector<LayoutChoice> choices;
    bool restricted = false;
  };
  // Key: the node's address, its context's node addresses, 0, then the context's facts.
  std::map<std::vector<uintptr_t>, NodeEntry> nodes;
  // Key: element type, rank (-1 unknown), dims, then the candidates' indices.
  std::map<std::vector<int64_t>, std::array<std::array<double, kNumFormats>, kNumFormats>>
      conversions;
};

// The problem of a graph: its nodes in the graph's order, except nodes computing weights only
// (folded at prepare time, free); its values, except weights. Graph inputs are stored plain and
// graph outputs delivered plain. Fails naming the node when the source admits no layout
// combination for it. With `cache`, prices only what the cache has not seen (the same problem).
StatusOr<LayoutProblem> BuildLayoutProblem(const runtime::Graph& g, const LayoutCostSource& costs,
                                           const LayoutSpaceOptions& space = {},
                                           int* restricted_nodes = nullptr,
                                           LayoutPricingCache* cache = nullptr);

struct LayoutConversion {
  int value = -1;                              // graph value id
  specs::Layout from = specs::Layout::kPlain;  // the stored layout
  specs::Layout to = specs::Layout::kPlain;
  Precision from_precision = Precision::kF32;
  Precision to_precision = Precision::kF32;
  // Graph node indices reading this converted copy, in graph order; -1 stands for delivering a
  // graph output. One conversion per (value, to): its copy is shared by all of them.
  std::vector<int> readers;
};

struct LayoutAssignment {
  // Per graph value id: the layout it is stored in (weights and unused values: plain).
  std::vector<specs::Layout> value_layouts;
  // Per graph value id: the precision it is stored in (float32 unless precisions were searched).
  std::vector<Precision> value_precisions;
  // Per graph node, per input slot: the layout the node reads (weights, omitted inputs and
  // folded nodes: plain).
  std::vector<std::vector<specs::Layout>> node_input_layouts;
  std::vector<std::vector<Precision>> node_input_precisions;
  std::vector<LayoutConversion> conversions;  // by (value, to, to_precision)
  double cost_us = 0;                         // kernels and conversions, as the source priced them
};

// Builds the problem, solves it and translates the solution to the graph. `report` may be null.
StatusOr<LayoutAssignment> AssignLayouts(const runtime::Graph& g, const LayoutCostSource& costs,
                                         const LayoutDpOptions& options, LayoutDpReport* report,
                                         const LayoutSpaceOptions& space = {});

// Writes the stored layouts of `a` (an assignment computed for `g`) into `g`'s values
// (runtime::Value::layout), where the graph text form prints them and runtime::ValueLayouts
// reads them back for PrepareOptions::layouts.
void StoreLayouts(const LayoutAssignment& a, runtime::Graph* g);

// The assignment of a solved problem built from `g` by BuildLayoutProblem.
LayoutAssignment ToAssignment(const runtime::Graph& g, const LayoutProblem& p,
                              const LayoutSolution& s);

}  // namespace verisub::rewriter
