// A structure-aware mutator for ONNX models: parses the model and changes what a model's author
// (or a broken exporter) gets wrong: dimensions, attributes, initializers (dims, types, data,
// names), wiring (inputs, node order, operator types) and opset versions. Byte flips rarely get
// past the protobuf parser; these mutations reach the importer's checks behind it.
#pragma once

#include <cstdint>
#include <string>

namespace verisub::fuzz {

// Returns a mutation of `bytes` (a serialized ModelProto), or an empty string when `bytes` does
// not parse (the caller then mutates bytes instead). Deterministic in `seed`.
std::string MutateOnnxModel(const std::string& bytes, uint64_t seed);

}  // namespace verisub::fuzz
