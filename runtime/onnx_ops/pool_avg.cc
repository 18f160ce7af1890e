// pool_avg in ONNX: AveragePool and GlobalAveragePool both ways (pooling_onnx.h).
#include "runtime/onnx_ops/op_table.h"
#include "runtime/onnx_ops/pooling_onnx.h"

namespace verisub::runtime {
namespace {

void ImportAveragePool(ImportContext& c) { ImportWindowPool(c, false); }
void ImportGlobalAveragePool(ImportContext& c) { ImportGlobalPool(c, false); }
Status ExportPoolAvg(ExportContext& c, const Node& n) { return ExportPool(c, n, false); }

}  // namespace

void RegisterPoolAvg(OnnxOpTable* table) {
  table->AddImport("AveragePool", ImportAveragePool);
  table->AddImport("GlobalAveragePool", ImportGlobalAveragePool);
  table->SetExport(specs::OpKind::kPoolAvg, ExportPoolAvg);
}

}  // namespace verisub::runtime
