// Structural hash of search graphs with weight and attribute hashes cached, so hashing a
// candidate costs time in its node count, not in its weight bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>

#include "runtime/graph.h"

namespace verisub::rewriter {

// Same properties as runtime::StructuralHash (independent of names and of the order of
// independent nodes; depends on operators, parameters, opaque attributes, wiring, input
// positions, shapes and weight contents), but not the same numbers, and independent of the
// operand order of commutative operators (ewadd, ewmul): graphs differing only in that order
// compute the same values at the same cost, and the matcher matches either order.
class GraphHasher {
 public:
  uint64_t Hash(const runtime::Graph& g);

 private:
  // Keyed by address; the weak pointer tells whether the address still holds the same object.
  template <class T>
  using Cache = std::unordered_map<const T*, std::pair<std::weak_ptr<const T>, uint64_t>>;
  uint64_t WeightHash(const runtime::Value& v);
  uint64_t AttributeHash(const runtime::Node& n);

  Cache<runtime::HostTensor> weights_;
  Cache<onnx::NodeProto> attributes_;
};

}  // namespace verisub::rewriter
