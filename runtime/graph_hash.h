// The structural hash of graphs, one for every use: equality checks in tests and tools, the
// search's deduplication of the graphs it builds, and (through OperatorHash and HashMix) the
// search's incremental graph keys.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>

#include "runtime/graph.h"
#include "specs/op_spec.h"
#include "specs/params.h"

namespace onnx {
class NodeProto;
}

namespace verisub::runtime {

struct GraphHashOptions {
  // Ignore the operand order of commutative spec operators (ewadd, ewmul): such graphs compute
  // the same values at the same cost, and the rewriter's matcher binds either order.
  bool commutative = false;
  enum class Weights {
    // Equal contents hash equal, in every process (deterministic).
    kByValue,
    // A weight is known by the shared tensor it points to: cheaper, but equal only for graphs
    // sharing the tensor and alive together (numbers differ from run to run).
    kByIdentity,
  };
  Weights weights = Weights::kByValue;
};

// Folds an integer into a hash (two rounds of the splitmix64 finalizer): cheaper than a
// hash-function call per integer. The one mixer of the graph hash and the search's graph keys.
uint64_t HashMix(uint64_t seed, uint64_t v);

// Hash of spec operator `op` with `params` applied to inputs hashed `inputs[0..num_inputs)`;
// with `commutative`, the two inputs of a commutative operator in either order hash equal.
uint64_t OperatorHash(specs::OpKind op, const specs::Params& params, const uint64_t* inputs,
                      int num_inputs, bool commutative);

// Hashes graphs independently of value and node names and of the order of independent nodes;
// depends on operators, parameters, opaque attributes, wiring, graph input positions, shapes,
// element types, layouts and weights (by value or identity, see the options). Weight contents
// and opaque attributes are hashed once per shared object and cached, so hashing many variants
// of one graph costs time in their node counts, not in their weight bytes.
class GraphHasher {
 public:
  explicit GraphHasher(GraphHashOptions options = {}) : options_(options) {}
  uint64_t Hash(const Graph& g);

 private:
  // Keyed by address; the weak pointer tells whether the address still holds the same object.
  template <class T>
  using Cache = std::unordered_map<const T*, std::pair<std::weak_ptr<const T>, uint64_t>>;
  uint64_t WeightHash(const Value& v);
  uint64_t AttributeHash(const Node& n);

  GraphHashOptions options_;
  Cache<HostTensor> weights_;
  Cache<onnx::NodeProto> attributes_;
};

// One-off hash with a fresh hasher.
uint64_t StructuralHash(const Graph& g, GraphHashOptions options = {});

}  // namespace verisub::runtime
