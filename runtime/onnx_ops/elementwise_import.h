// Import helpers shared by the elementwise operators' files (ewadd, ewmul, ewsub, relu, ...).
#pragma once

#include "runtime/onnx_ops/import_context.h"

namespace verisub::runtime {

// A unary ONNX activation onto spec operator `kind` with default parameters.
void ImportUnary(ImportContext& c, specs::OpKind kind);

// Add or Mul with ONNX broadcasting: equal shapes -> ewadd/ewmul; Mul by a one-element tensor ->
// smul; Add (Mul) of a tensor that varies along one axis only -> bias_add (channel_scale) along
// that axis.
void ImportBroadcastBinary(ImportContext& c, bool add);

}  // namespace verisub::runtime
