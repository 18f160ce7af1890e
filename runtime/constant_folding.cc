// Constant folding through the reference executor.
#include "runtime/constant_folding.h"

#include <algorithm>

#include "runtime/executor.h"

namespace verisub::runtime {
namespace {

bool ShapeOnly(const Node& n) {
  return n.opaque() && n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size");
}

}  // namespace

StatusOr<FoldReport> FoldConstants(Graph* g, const FoldOptions& options) {
  FoldReport report;
  std::vector<char> is_output(g->num_values(), 0);
  for (int v : g->outputs()) is_output[v] = 1;
  // Readers left per value: a weight whose last reader is folded is released at once, so a
  // chain of folds holds one generation of weights, not two (RemoveDeadCode drops the slot).
  std::vector<int> uses = g->UseCounts();
  std::vector<std::shared_ptr<const Node>> kept;
  bool changed = false;
  for (const auto& np : g->nodes()) {
    const Node& n = *np;
    bool foldable = !n.outputs.empty();
    for (int o : n.outputs) foldable &= o == kNoValue || !is_output[o];
    std::vector<HostTensor> shape_only(n.inputs.size());
    std::vector<const HostTensor*> in;
    for (size_t k = 0; foldable && k < n.inputs.size(); ++k) {
      int v = n.inputs[k];
      if (v == kNoValue) {
        in.push_back(nullptr);
        continue;
      }
      const Value& val = g->value(v);
      if (val.constant) {
        in.push_back(val.constant.get());
      } else if (ShapeOnly(n) && val.StaticShape()) {
        shape_only[k].elem_type = val.elem_type;
        shape_only[k].dims = val.dims;  // Shape and Size read only the dims
        in.push_back(&shape_only[k]);
      } else {
        foldable = false;
      }
    }
    if (foldable && n.opaque()) {
      // Random operators are never folded (no kernel), nor loops: a Loop without a trip count
      // runs while its body says so, which need not end. An If of a constant condition folds
      // to its branch's values (a scripted export's `if x.dim() == 4`).
      if (!HasKernel(n) || n.op_type == "Loop" || n.op_type == "Scan") {
        ++report.skipped_no_kernel;
        foldable = false;
      }
      // 8-bit weights kept with their DequantizeLinear (FoldOptions::keep_dequantized_weights).
      if (options.keep_dequantized_weights && n.op_type == "DequantizeLinear" && n.domain.empty() &&
          !in.empty() && in[0] && (in[0]->elem_type == kInt8 || in[0]->elem_type == kUint8))
        foldable = false;
    }
    if (!foldable) {
      kept.push_back(np);
      continue;
    }
    auto out = RunNode(*g, n, in);
    if (!out.ok()) {
      if (out.status().code() == StatusCode::kUnimplemented) {
        ++report.skipped_no_kernel;
        kept.push_back(np);
        continue;
      }
      return out.status().WithContext("constant folding node '" + n.name + "' (" + n.KindName() +
                                      ")");
    }
    // A result no larger than an input it comes from (a transposed, reshaped or scaled weight)
    // cannot blow the model up, whatever its size: only growth is capped.
    int64_t largest_input = 0;
    for (const HostTensor* t : in)
      if (t) largest_input = std::max(largest_input, t->NumElements());
    bool too_big = false;
    for (const auto& t : *out)
      too_big |= t.NumElements() > options.max_elements && t.NumElements() > largest_input;
    if (too_big) {
      kept.push_back(np);
      continue;
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      int o = n.outputs[k];
      if (o == kNoValue) continue;
      Value& val = g->mutable_value(o);
      HostTensor& t = (*out)[k];
      if (!val.Accepts(t.dims))
        return InvalidArgument("constant folding node '" + n.name + "' (" + n.KindName() +
                               "): output '" + val.name + "' is declared " +
                               DimsToString(val.dims) + " but computes " + DimsToString(t.dims));
      if (val.elem_type != kUndefined && val.elem_type != t.elem_type)
        return InvalidArgument("constant folding node '" + n.name + "' (" + n.KindName() +
                               "): output '" + val.name + "' is declared " +
                               ElemTypeName(val.elem_type) + " but computes " +
                               ElemTypeName(t.elem_type));
      val.elem_type = t.elem_type;
      val.dims = t.dims;
      val.rank_known = true;
      val.constant = std::make_shared<const HostTensor>(std::move(t));
    }
    for (int v : n.inputs)
      if (v != kNoValue && --uses[v] == 0 && !is_output[v] && g->value(v).constant)
        g->mutable_value(v).constant.reset();
    ++report.folded_nodes;
    changed = true;
  }
  if (changed) {
    g->SetNodes(std::move(kept));
    g->RemoveDeadCode();
  }
  return report;
}

}  // namespace verisub::runtime
