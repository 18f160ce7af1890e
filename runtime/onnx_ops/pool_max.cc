// pool_max in ONNX: MaxPool and GlobalMaxPool both ways (pooling_onnx.h).
#include "runtime/onnx_ops/op_table.h"
#include "runtime/onnx_ops/pooling_onnx.h"

namespace verisub::runtime {
namespace {

void ImportMaxPool(ImportContext& c) { ImportWindowPool(c, true); }
void ImportGlobalMaxPool(ImportContext& c) { ImportGlobalPool(c, true); }
Status ExportPoolMax(ExportContext& c, const Node& n) { return ExportPool(c, n, true); }

}  // namespace

void RegisterPoolMax(OnnxOpTable* table) {
  table->AddImport("MaxPool", ImportMaxPool);
  table->AddImport("GlobalMaxPool", ImportGlobalMaxPool);
  table->SetExport(specs::OpKind::kPoolMax, ExportPoolMax);
}

}  // namespace verisub::runtime
