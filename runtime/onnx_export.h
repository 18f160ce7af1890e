// ONNX export: a valid model (the ONNX checker passes) with standard operators only and the
// weights included; fused spec forms are written as standard operator sequences.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "runtime/graph.h"

namespace onnx {
class ModelProto;
}

namespace verisub::runtime {

// Opset used when the graph records none (e.g. built in memory).
inline constexpr int64_t kDefaultExportOpset = 13;

// Builds the model and runs the ONNX checker on it.
Status ExportOnnxModel(const Graph& g, onnx::ModelProto* model);
struct ExportFileOptions {
  // A model whose file would be larger is written with its weights as ONNX external data, in
  // one file beside it (`PATH.data`, named relative to the model as the format asks; read by
  // our importer, ONNX Runtime and onnx.load): protobuf refuses messages over 2 GiB.
  uint64_t max_inline_bytes = (uint64_t{1} << 31) - (uint64_t{1} << 20);
};

// Writes through a temporary file in the same folder and renames it, so on any error no output
// file exists (and an existing one is left untouched). With external data, the data file is
// written (the same way) before the model.
Status ExportOnnxFile(const Graph& g, const std::string& path,
                      const ExportFileOptions& options = {});

// The serialized model, as ExportOnnxFile writes a model under 2 GiB, into a buffer of exactly
// its size that `allocate` returns (the Python module's bytes object): the weights are copied
// once, straight from the graph's tensors, with no ModelProto or string holding them between.
Status ExportOnnxToBuffer(const Graph& g,
                          const std::function<StatusOr<char*>(uint64_t bytes)>& allocate);

}  // namespace verisub::runtime
