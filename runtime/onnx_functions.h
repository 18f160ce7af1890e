// Model-local functions (ModelProto.functions, IR version 8 and up) inlined at import: PyTorch's
// dynamo exporter (torch 2.1 to 2.4) and onnxscript write a model's modules as functions, and a
// node calling one had no kernel ("no kernel for onnx:pkg.torch...").
#pragma once

#include "base/status.h"
#include "onnx/onnx_pb.h"

namespace verisub::runtime {

// Replaces every node of `model`'s graph and subgraphs that calls one of its local functions
// (matched by domain and name) with the function's body: formal inputs and outputs bound to the
// node's, the body's own values renamed fresh, attributes referenced by `ref_attr_name` taken
// from the calling node (else the function's default, else left to the operator's default);
// functions calling functions are inlined too. The functions are then dropped. Returns the
// number of calls inlined, or an error naming the node (a recursive function, or a call with
// more inputs or outputs than the function declares).
StatusOr<int> InlineLocalFunctions(onnx::ModelProto* model);

}  // namespace verisub::runtime
