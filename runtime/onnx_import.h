// ONNX import: checker and shape inference first, then a graph of opaque nodes, constant
// folding, and mapping of ONNX operators onto the spec operator set where exact.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"
#include "runtime/input_shapes.h"
#include "runtime/memory_budget.h"

namespace onnx {
class ModelProto;
}

namespace verisub::runtime {

struct ImportOptions {
  // Shapes for graph inputs, fixing symbolic dimensions (--input-shape NAME=1,3,224,224; see
  // ParseInputShapeFlag). They must agree with the model's rank and fixed dimensions.
  InputShapes input_shapes;
  // Every graph input must have a static shape (the error names the input and the
  // --input-shape that fixes it). Values computed from static inputs get static shapes by
  // shape folding, except where data decides them (NonZero): those stay dynamic, and the nodes
  // reading them opaque. Turned off only to run models whose input shapes vary.
  bool require_static_shapes = true;
  bool fold_constants = true;
  bool map_to_spec_ops = true;
  // Float16 values computed in float32 (runtime/float16.h): on for running a model (Session),
  // off where the model is written again (verisub-opt keeps its float16 weights).
  bool float16_as_float32 = false;
  // Folded results larger than this stay computed at run time.
  int64_t fold_max_elements = int64_t{1} << 24;
  // Rounds of shape folding (constant folding and ONNX shape inference alternated) at most.
  int max_shape_fold_rounds = 10000;
  // Every tensor of the model (inputs, weights, intermediates, outputs) must fit it: a shape
  // whose size overflows or exceeds it is refused, naming the tensor, before anything is built.
  MemoryBudget memory;
};

// Oldest default-domain opset the importer accepts. Models older than kMinMappedOpset import
// with every node opaque (kernels check the legacy attributes they know, and refuse the rest).
inline constexpr int64_t kMinOpset = 1;
inline constexpr int64_t kMinMappedOpset = 7;

// A graph input as the model declares it, read without decoding the weights: its name, element
// type and dims (-1 where a dimension is symbolic or unknown; empty with `ranked` false when the
// rank is).
struct DeclaredInput {
  std::string name;
  int32_t elem_type = 0;
  std::vector<int64_t> dims;
  bool ranked = true;
};
StatusOr<std::vector<DeclaredInput>> ReadDeclaredInputs(const std::string& path);
// The graph's inputs (initializers excepted) and outputs as declared, from the model file at
// `path` (`is_path`) or the serialized model `data`.
struct DeclaredInterface {
  std::vector<DeclaredInput> inputs, outputs;
};
StatusOr<DeclaredInterface> ReadDeclaredInterface(const std::string& data, bool is_path);

// Every error message starts with `source` (the file name).
StatusOr<Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options = {});
StatusOr<Graph> ImportOnnxBytes(const std::string& bytes, const std::string& source,
                                const ImportOptions& options = {});
StatusOr<Graph> ImportOnnxModel(onnx::ModelProto model, const std::string& source,
                                const ImportOptions& options = {});

}  // namespace verisub::runtime
