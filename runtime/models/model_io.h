// Validation and file output for built models: the ONNX checker plus strict shape inference, and
// deterministic serialization written atomically.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {

// Runs onnx::checker::check_model and strict shape inference (on a copy, with ONNX's data
// propagation so Shape-derived Reshape targets resolve) and requires a fully static shape on
// every node output. Errors name the model and the failing node or value.
Status ValidateModel(const onnx::ModelProto& model);

// Like ValidateModel, but returns the model with the inferred value_info filled in.
StatusOr<onnx::ModelProto> InferModelShapes(const onnx::ModelProto& model);

// Deterministic protobuf bytes of `model`.
StatusOr<std::string> SerializeModel(const onnx::ModelProto& model);

// Writes `model` to `path` via a temporary file in the same folder and a rename, so a reader
// never sees a partial file and a failed write leaves no file behind.
Status WriteModelFile(const onnx::ModelProto& model, const std::string& path);

// What verisub-models does: builds, validates and writes each named model (all of ListModels()
// when `names` is empty) as DIR/NAME.onnx (`dir` must exist); one line per model
// (nodes, file size, build time, path) is appended to `report` as each is written.
Status WriteModels(const std::vector<std::string>& names, const std::string& dir,
                   const BuildOptions& options, std::string* report);

}  // namespace verisub::runtime::models
