// One node's ONNX type and shape inference, run on types and constant data the caller supplies:
// the importer replays it over the model before ONNX's own pass, and again over the graph after
// folding, when constants computed by shape subgraphs reveal shapes ONNX could not see.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace onnx {
class NodeProto;
class OpSchema;
class TensorProto;
class TypeProto;
}  // namespace onnx

namespace verisub::runtime {

// The schema of `op_type` in `domain` ("" or "ai.onnx" for the default one) at `opset`, or null
// when ONNX does not know the operator.
const onnx::OpSchema* FindOnnxSchema(const std::string& op_type, const std::string& domain,
                                     int64_t opset);

// Whether `node` is an STFT, whose ONNX 1.12 inference counts the frames wrong for onesided
// (InferNodeTypes computes its type here; the importer skips ONNX's whole-model pass for it).
bool IsStft(const onnx::NodeProto& node);

// Runs `schema`'s inference function for `node` (its input and output names are not used: input
// i is described by input_types[i] and, when known, its data by input_data[i]; null for omitted
// inputs or unknown data). Returns one type per node output (empty where ONNX infers nothing).
// An inference failure is an error quoting ONNX's message.
StatusOr<std::vector<onnx::TypeProto>> InferNodeTypes(
    const onnx::NodeProto& node, const onnx::OpSchema& schema,
    const std::vector<const onnx::TypeProto*>& input_types,
    const std::vector<const onnx::TensorProto*>& input_data);

}  // namespace verisub::runtime
