// The ONNX side of each spec operator, registered per operator (one file each in this folder):
// which ONNX op types it imports from and how it is written back. The table is built once from
// specs/ops/op_list.h, so adding an operator adds its file here and nothing else in runtime/.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "runtime/graph.h"
#include "specs/op_spec.h"

namespace verisub::runtime {

class ImportContext;
class ExportContext;

// Maps the node in `ctx` onto spec nodes added through `ctx`; adding nothing or calling
// ctx.Fail() keeps the node opaque.
using OnnxImportFn = std::function<void(ImportContext& ctx)>;
// Writes the spec node `n` as ONNX nodes.
using OnnxExportFn = std::function<Status(ExportContext& ctx, const Node& n)>;
// Writes an activation as ONNX nodes from the value named `x` (of ONNX element type `elem_type`)
// to the value named `y`, the nodes named after `name`: a unary operator's export, and the node
// a fused activation parameter (conv2d's, matmul's) is written as.
using OnnxActivationFn =
    std::function<void(ExportContext& ctx, const std::string& name, const std::string& x,
                       const std::string& y, int32_t elem_type)>;

class OnnxOpTable {
 public:
  // Registration (each operator's Register<Name> function); a second registration of the same
  // ONNX op type or operator is an internal error.
  void AddImport(std::string op_type, OnnxImportFn fn);
  void SetExport(specs::OpKind op, OnnxExportFn fn);
  // The unary operator `op` computing activation `act`: its export, and the activation's.
  void SetActivationExport(specs::OpKind op, specs::Activation act, OnnxActivationFn fn);

  // The importer of an ONNX op type of the default domain, or null.
  const OnnxImportFn* FindImport(std::string_view op_type) const;
  // The exporter of a spec operator (every operator has one).
  const OnnxExportFn& Export(specs::OpKind op) const;
  // The writer of a fused activation, or null (none, and activations no unary operator has).
  const OnnxActivationFn* ActivationExport(specs::Activation act) const;

 private:
  std::map<std::string, OnnxImportFn, std::less<>> imports_;
  OnnxExportFn exports_[specs::kNumOpKinds];
  std::map<specs::Activation, OnnxActivationFn> activations_;
};

// An operator that is one ONNX operator both ways, with default parameters and one output:
// `onnx_type` imports as `op` (inputs float and static; elementwise_import.h's rules for
// binaries) and `op` exports as `onnx_type` with the same inputs.
void RegisterOneToOne(OnnxOpTable* table, specs::OpKind op, const std::string& onnx_type);
// A sub-operator (docs/subops.md) written as one ONNX operator with the same inputs and never
// imported: the ONNX operators it matches stay opaque at import, where fusion/ lowers them.
void RegisterExportOnly(OnnxOpTable* table, specs::OpKind op, const std::string& onnx_type);
// A unary operator computing activation `act` that is one ONNX operator both ways.
void RegisterOneToOneActivation(OnnxOpTable* table, specs::OpKind op, specs::Activation act,
                                const std::string& onnx_type);

// Built once from every operator's registration; immutable.
const OnnxOpTable& OnnxOps();

// One registration function per operator, defined in runtime/onnx_ops/<file>.cc.
#define VERISUB_DECLARE_ONNX_REGISTRATION(name, file) void Register##name(OnnxOpTable* table);
VERISUB_FOR_EACH_OP(VERISUB_DECLARE_ONNX_REGISTRATION)
#undef VERISUB_DECLARE_ONNX_REGISTRATION

}  // namespace verisub::runtime
