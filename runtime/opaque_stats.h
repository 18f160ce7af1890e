// How much of an imported graph the rules cannot see: opaque nodes per ONNX operator type, and
// values whose shape stayed dynamic. verisub-onnx and verisub-opt report it per model.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/graph.h"

namespace verisub::runtime {

struct OpaqueStats {
  int nodes = 0;
  int opaque = 0;
  int dynamic_values = 0;  // values without a static shape or element type
  // Opaque nodes per operator ("Softmax", "com.microsoft.Attention"), most frequent first, ties
  // by name.
  std::vector<std::pair<std::string, int>> opaque_ops;

  double Percent() const { return nodes ? 100.0 * opaque / nodes : 0.0; }
};

OpaqueStats MeasureOpaque(const Graph& g);

// "opaque: 12 of 240 nodes (5.0%): Softmax 4, Erf 2, ..." with the `top` most frequent types.
std::string OpaqueSummaryLine(const OpaqueStats& stats, int top = 5);

}  // namespace verisub::runtime
