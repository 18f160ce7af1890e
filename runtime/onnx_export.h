// ONNX export: a valid model (the ONNX checker passes) with standard operators only and the
// weights included; fused spec forms are written as standard operator sequences.
#pragma once

#include <string>

#include "runtime/graph.h"
#include "base/status.h"

namespace onnx {
class ModelProto;
}

namespace verisub::runtime {

// Opset used when the graph records none (e.g. built in memory).
inline constexpr int64_t kDefaultExportOpset = 13;

// Builds the model and runs the ONNX checker on it.
Status ExportOnnxModel(const Graph& g, onnx::ModelProto* model);
// Writes through a temporary file in the same folder and renames it, so on any error no output
// file exists (and an existing one is left untouched).
Status ExportOnnxFile(const Graph& g, const std::string& path);

}  // namespace verisub::runtime
