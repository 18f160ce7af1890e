// ONNX import and export shared by pool_max and pool_avg.
#pragma once

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"

namespace verisub::runtime {

// MaxPool / AveragePool with a 2-D window, same or valid padding, no dilation or ceil mode.
void ImportWindowPool(ImportContext& c, bool max);
// GlobalMaxPool / GlobalAveragePool: one window over the whole image.
void ImportGlobalPool(ImportContext& c, bool max);
// MaxPool / AveragePool (count_include_pad=1, as the spec averages) [+ activation].
Status ExportPool(ExportContext& c, const Node& n, bool max);

}  // namespace verisub::runtime
