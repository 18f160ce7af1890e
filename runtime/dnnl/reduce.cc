// Reductions (ONNX ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd) over any axes, with
// or without kept dimensions.
#include <algorithm>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/onnx_kernels.h"
#include "specs/ops/reduce_mean.h"

namespace verisub::runtime::dnnl_backend {
namespace {

Status ReduceKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (n.inputs.empty() || n.outputs.size() != 1 || !b.Dnnl(n.inputs[0]) || !b.Dnnl(n.outputs[0]))
    return Unimplemented("reduce: inputs");
  using A = dnnl::algorithm;
  const std::string& t = n.op_type;
  A alg = t == "ReduceMean" || n.op ? A::reduction_mean
          : t == "ReduceSum"        ? A::reduction_sum
          : t == "ReduceMax"        ? A::reduction_max
          : t == "ReduceMin"        ? A::reduction_min
                                    : A::reduction_mul;
  int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  const int64_t rank = static_cast<int64_t>(xd.size());
  std::vector<int64_t> axes;
  if (n.op) {  // reduce_mean: the axes are a bit mask
    for (int64_t d = 0; d < rank; ++d)
      if (specs::ops::ReducesAxis(n.params, static_cast<int>(d))) axes.push_back(d);
  } else {
    KernelContext ctx(*n.onnx, b.Opset(), {});
    // Axes: an int64 input from opset 13 (ReduceSum) or 18 (the others), else an attribute.
    axes = ctx.AttrInts("axes");
    if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
      const HostTensor* a = b.constant(n.inputs[1]);
      if (!a) return Unimplemented("reduce: computed axes");
      axes = a->ToInts();
    }
    if (axes.empty()) {
      if (ctx.AttrInt("noop_with_empty_axes", 0)) return Unimplemented("reduce: no-op");
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
  }
  std::vector<int64_t> kept = xd;
  for (int64_t a : axes) {
    auto axis = NormalizeAxis(a, rank, "axes");
    if (!axis.ok()) return Unimplemented("reduce: axis");
    kept[*axis] = 1;
  }
  if (CountElements(kept) != CountElements(b.dims(y))) return Unimplemented("reduce: shape");
  Desc src = PlainDesc(xd), dst = PlainDesc(kept);
  dnnl::reduction::desc desc(alg, src, dst, 0.f, 0.f);
  dnnl::reduction::primitive_desc pd(desc, b.engine());
  b.Read(DNNL_ARG_SRC, x, src);
  b.Write(DNNL_ARG_DST, y, PlainDesc(b.dims(y)));
  b.View(DNNL_ARG_DST, dst);
  b.Emit(dnnl::reduction(pd));
  return Status::Ok();
}

}  // namespace

void AddReduceKernels(KernelRegistry* r) {
  for (const char* k :
       {"onnx:ReduceMean", "onnx:ReduceSum", "onnx:ReduceMax", "onnx:ReduceMin", "onnx:ReduceProd"})
    r->Add(k, ReduceKernel);
  r->Add("reduce_mean", ReduceKernel);
}

}  // namespace verisub::runtime::dnnl_backend
