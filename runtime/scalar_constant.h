// The value of a one-element float weight, which import canonicalization and backend fusions
// both look for (a scale, an exponent, a bias of one element).
#pragma once

#include <optional>

#include "runtime/graph.h"

namespace verisub::runtime {

// The one value of value `v` when it is a weight of one element of type float or double;
// nullopt otherwise (kNoValue, computed values, other element types, other sizes).
std::optional<double> ScalarConstant(const Graph& g, int v);

}  // namespace verisub::runtime
