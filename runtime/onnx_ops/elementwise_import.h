// Import helpers shared by the elementwise operators' files (ewadd, ewmul, ewsub, relu, ...).
#pragma once

#include "runtime/onnx_ops/import_context.h"

namespace verisub::runtime {

// A unary ONNX activation onto spec operator `kind` with default parameters.
void ImportUnary(ImportContext& c, specs::OpKind kind);

// Add or Mul with ONNX broadcasting: equal shapes (or equal once the smaller is given leading
// ones) -> ewadd/ewmul; Mul by a one-element tensor -> smul; Add of a one-element constant ->
// bias_add of that many copies along the last axis; Add (Mul) of a tensor that varies
// along one axis only -> bias_add (channel_scale) along that axis; of a tensor repeated along
// leading axes only (Swin's relative position bias [1,h,49,49] added to every window's
// [64,h,49,49] scores) -> bias_add (channel_scale) along the last axis of a [leading, trailing]
// view, reshaped back.
void ImportBroadcastBinary(ImportContext& c, bool add);
// The same for value `x` (of the output's dims) and `o`, written to `out`; false, adding nothing,
// when no form above fits.
bool AddBroadcastBinary(ImportContext& c, int x, int o, bool add, int out);

}  // namespace verisub::runtime
