// Cached structural hashing.
#include "rewriter/graph_hash.h"

#include <xxhash.h>

#include <vector>

#include "onnx/onnx_pb.h"
#include "specs/registry.h"

namespace verisub::rewriter {

using runtime::Graph;
using runtime::kNoValue;
using runtime::Node;
using runtime::Value;

namespace {

uint64_t Mix(uint64_t seed, const void* p, size_t n) { return XXH3_64bits_withSeed(p, n, seed); }
// Folds one integer into a hash (two rounds of the splitmix64 finalizer): cheaper than a
// hash-function call per integer, and the search hashes every node of every candidate.
uint64_t MixInt(uint64_t seed, int64_t v) {
  uint64_t h = seed ^ (static_cast<uint64_t>(v) + 0x9E3779B97F4A7C15ULL + (seed << 6));
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  return h ^ (h >> 31);
}

uint64_t TypeHash(uint64_t seed, const Value& v) {
  seed = MixInt(seed, v.elem_type);
  seed = MixInt(seed, v.rank_known);
  for (int64_t d : v.dims) seed = MixInt(seed, d);
  return MixInt(seed, static_cast<int64_t>(v.dims.size()));
}

}  // namespace

uint64_t GraphHasher::WeightHash(const Value& v) {
  const runtime::HostTensor* key = v.constant.get();
  auto it = weights_.find(key);
  if (it != weights_.end() && !it->second.first.expired()) return it->second.second;
  const runtime::HostTensor& t = *v.constant;
  uint64_t h = Mix(1, t.f32.data(), t.f32.size() * sizeof(float));
  h = Mix(h, t.f64.data(), t.f64.size() * sizeof(double));
  h = Mix(h, t.ints.data(), t.ints.size() * sizeof(int64_t));
  weights_[key] = {v.constant, h};
  return h;
}

uint64_t GraphHasher::AttributeHash(const Node& n) {
  const onnx::NodeProto* key = n.onnx.get();
  if (!key) return 0;
  auto it = attributes_.find(key);
  if (it != attributes_.end() && !it->second.first.expired()) return it->second.second;
  onnx::NodeProto attrs;
  *attrs.mutable_attribute() = n.onnx->attribute();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    attrs.SerializeToCodedStream(&coded);
  }
  uint64_t h = Mix(2, bytes.data(), bytes.size());
  h = Mix(h, n.op_type.data(), n.op_type.size());
  h = Mix(h, n.domain.data(), n.domain.size());
  attributes_[key] = {n.onnx, h};
  return h;
}

uint64_t GraphHasher::Hash(const Graph& g) {
  std::vector<uint64_t> vh(g.num_values(), 0);
  for (size_t k = 0; k < g.inputs().size(); ++k)
    vh[g.inputs()[k]] = TypeHash(MixInt(3, static_cast<int64_t>(k)), g.value(g.inputs()[k]));
  for (int v = 0; v < g.num_values(); ++v) {
    const Value& val = g.value(v);
    if (val.constant) vh[v] = TypeHash(WeightHash(val), val);
  }
  for (const auto& np : g.nodes()) {
    const Node& n = *np;
    uint64_t h = n.op ? MixInt(4, static_cast<int64_t>(*n.op)) : AttributeHash(n);
    if (n.op)
      for (int64_t p : n.params.v) h = MixInt(h, p);
    auto input_hash = [&](size_t k) { return n.inputs[k] == kNoValue ? 0 : vh[n.inputs[k]]; };
    // Operand order of commutative operators does not matter: the matcher binds both orders.
    bool swap = n.op && n.inputs.size() == 2 && specs::GetOp(*n.op).commutative &&
                input_hash(1) < input_hash(0);
    for (size_t k = 0; k < n.inputs.size(); ++k)
      h = MixInt(h, static_cast<int64_t>(input_hash(swap ? 1 - k : k)));
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] == kNoValue) continue;
      vh[n.outputs[k]] = TypeHash(MixInt(h, static_cast<int64_t>(k)), g.value(n.outputs[k]));
    }
  }
  uint64_t h = MixInt(5, static_cast<int64_t>(g.inputs().size()));
  for (int v : g.outputs()) h = MixInt(h, static_cast<int64_t>(vh[v]));
  return h;
}

}  // namespace verisub::rewriter
