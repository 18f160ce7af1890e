// Mapping of opaque ONNX nodes onto spec operators (exact semantics only). Each operator's
// mapping lives in its own file, runtime/onnx_ops/<operator>.cc; this file walks the graph.
#include "runtime/op_mapping.h"

#include <algorithm>

#include "onnx/onnx_pb.h"
#include "runtime/canonicalize.h"
#include "runtime/shape_folding.h"
#include "runtime/onnx_kernels.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

class Mapper {
 public:
  explicit Mapper(Graph* g) : g_(g) {}

  Status Run() {
    std::vector<std::shared_ptr<const Node>> nodes = g_->nodes();
    std::vector<int> producer = g_->Producers();
    for (int v = 0; v < g_->num_values(); ++v)
      if (producer[v] < 0) g_->mutable_value(v).spec_type = LeafTypeOf(g_->value(v));
    std::vector<std::shared_ptr<const Node>> out;
    for (const auto& np : nodes) {
      const Node& n = *np;
      if (n.opaque() && n.domain.empty() && n.op_type == "Identity" && RemoveIdentity(n)) continue;
      std::optional<std::vector<std::shared_ptr<const Node>>> mapped;
      if (n.opaque() && n.domain.empty() && OutputsStatic(n)) mapped = Map(n);
      if (mapped) {
        for (auto& m : *mapped) out.push_back(std::move(m));
        continue;
      }
      for (int o : n.outputs)
        if (o != kNoValue) g_->mutable_value(o).spec_type = LeafTypeOf(g_->value(o));
      out.push_back(np);
    }
    g_->SetNodes(std::move(out));
    for (const auto& [from, to] : renames_) g_->ReplaceUses(from, to);
    g_->RemoveDeadCode();
    return Status::Ok();
  }

 private:
  bool OutputsStatic(const Node& n) const {
    for (int o : n.outputs)
      if (o != kNoValue && !LeafTypeOf(g_->value(o))) return false;
    return !n.outputs.empty();
  }

  // Identity is dropped by rewiring its readers to its input. When its output is a graph
  // output, the input takes over the output's name unless the input is itself a graph input,
  // a graph output or a weight (then the Identity stays).
  bool RemoveIdentity(const Node& n) {
    if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] == kNoValue) return false;
    int in = Resolve(n.inputs[0]), out = n.outputs[0];
    const auto& outs = g_->outputs();
    bool out_is_graph_output = std::find(outs.begin(), outs.end(), out) != outs.end();
    if (out_is_graph_output) {
      const auto& ins = g_->inputs();
      if (std::find(ins.begin(), ins.end(), in) != ins.end() ||
          std::find(outs.begin(), outs.end(), in) != outs.end() || g_->value(in).constant)
        return false;
      std::string name = g_->value(out).name;
      g_->mutable_value(out).name = g_->UniqueName(name);
      g_->mutable_value(in).name = name;
    }
    renames_.push_back({out, in});
    return true;
  }

  int Resolve(int v) const {
    for (const auto& [from, to] : renames_)
      if (from == v) return to;
    return v;
  }

  std::optional<std::vector<std::shared_ptr<const Node>>> Map(const Node& n) {
    const OnnxImportFn* import = OnnxOps().FindImport(n.op_type);
    if (import == nullptr) return std::nullopt;
    // The readers of n still name the original input ids; rewrite them through renames first.
    Node node = n;
    for (int& v : node.inputs)
      if (v != kNoValue) v = Resolve(v);
    KernelContext attrs(*n.onnx, g_->DefaultOpset(), {});
    ImportContext ctx(g_, node, attrs);
    (*import)(ctx);
    return ctx.Commit();
  }

  Graph* g_;
  std::vector<std::pair<int, int>> renames_;
};

}  // namespace

Status MapToSpecOps(Graph* g) {
  // A rewritten node (an Einsum as MatMul) may reveal shapes ONNX's inference could not see.
  if (CanonicalizeOnnxForms(g) > 0) VERISUB_RETURN_IF_ERROR(RefineOpaqueTypes(g).status());
  VERISUB_RETURN_IF_ERROR(Mapper(g).Run());
  FusePatterns(g);
  return Status::Ok();
}

}  // namespace verisub::runtime
