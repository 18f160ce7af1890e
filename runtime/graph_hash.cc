// The structural graph hash.
#include "runtime/graph_hash.h"

#include <xxhash.h>

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "specs/registry.h"

namespace verisub::runtime {
namespace {

uint64_t HashBytes(uint64_t seed, const void* p, size_t n) {
  return XXH3_64bits_withSeed(p, n, seed);
}

uint64_t TypeHash(uint64_t seed, const Value& v) {
  seed = HashMix(seed, static_cast<uint64_t>(v.elem_type));
  seed = HashMix(seed, v.rank_known);
  for (int64_t d : v.dims) seed = HashMix(seed, static_cast<uint64_t>(d));
  seed = HashMix(seed, v.dims.size());
  return HashMix(seed, static_cast<uint64_t>(v.layout));
}

}  // namespace

uint64_t HashMix(uint64_t seed, uint64_t v) {
  uint64_t h = seed ^ (v + 0x9E3779B97F4A7C15ULL + (seed << 6));
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  return h ^ (h >> 31);
}

uint64_t OperatorHash(specs::OpKind op, const specs::Params& params, const uint64_t* inputs,
                      int num_inputs, bool commutative) {
  uint64_t h = HashMix(4, static_cast<uint64_t>(op));
  for (int64_t p : params.v) h = HashMix(h, static_cast<uint64_t>(p));
  const bool swap =
      commutative && num_inputs == 2 && specs::GetOp(op).commutative && inputs[1] < inputs[0];
  for (int k = 0; k < num_inputs; ++k) h = HashMix(h, inputs[swap ? 1 - k : k]);
  return h;
}

uint64_t GraphHasher::WeightHash(const Value& v) {
  const HostTensor* key = v.constant.get();
  if (options_.weights == GraphHashOptions::Weights::kByIdentity)
    return HashMix(1, reinterpret_cast<uintptr_t>(key));
  auto it = weights_.find(key);
  if (it != weights_.end() && !it->second.first.expired()) return it->second.second;
  const HostTensor& t = *v.constant;
  // A weight still in its model file is hashed where it lies (the same bytes), not decoded.
  uint64_t h =
      t.f32.WithBytes([](std::string_view f32) { return HashBytes(1, f32.data(), f32.size()); });
  h = HashBytes(h, t.f64.data(), t.f64.size() * sizeof(double));
  h = HashBytes(h, t.ints.data(), t.ints.size() * sizeof(int64_t));
  weights_[key] = {v.constant, h};
  return h;
}

uint64_t GraphHasher::AttributeHash(const Node& n) {
  const onnx::NodeProto* key = n.onnx.get();
  uint64_t h = 2;
  if (key) {
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
    h = HashBytes(h, bytes.data(), bytes.size());
  }
  h = HashBytes(h, n.op_type.data(), n.op_type.size());
  h = HashBytes(h, n.domain.data(), n.domain.size());
  if (key) attributes_[key] = {n.onnx, h};
  return h;
}

uint64_t GraphHasher::Hash(const Graph& g) {
  std::vector<uint64_t> vh(g.num_values(), 0);
  for (size_t k = 0; k < g.inputs().size(); ++k)
    vh[g.inputs()[k]] = TypeHash(HashMix(3, k), g.value(g.inputs()[k]));
  for (int v = 0; v < g.num_values(); ++v) {
    const Value& val = g.value(v);
    if (val.constant) vh[v] = TypeHash(WeightHash(val), val);
  }
  uint64_t inputs[specs::kMaxOpInputs];
  for (const auto& np : g.nodes()) {
    const Node& n = *np;
    auto input_hash = [&](size_t k) { return n.inputs[k] == kNoValue ? 0 : vh[n.inputs[k]]; };
    uint64_t h;
    if (n.op) {
      VERISUB_CHECK(n.inputs.size() <= specs::kMaxOpInputs);
      for (size_t k = 0; k < n.inputs.size(); ++k) inputs[k] = input_hash(k);
      h = OperatorHash(*n.op, n.params, inputs, static_cast<int>(n.inputs.size()),
                       options_.commutative);
    } else {
      h = AttributeHash(n);
      for (size_t k = 0; k < n.inputs.size(); ++k) h = HashMix(h, input_hash(k));
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] == kNoValue) continue;
      vh[n.outputs[k]] = TypeHash(HashMix(h, k), g.value(n.outputs[k]));
    }
  }
  uint64_t h = HashMix(5, g.inputs().size());
  for (int v : g.outputs()) h = HashMix(h, vh[v]);
  return h;
}

uint64_t StructuralHash(const Graph& g, GraphHashOptions options) {
  return GraphHasher(options).Hash(g);
}

}  // namespace verisub::runtime
