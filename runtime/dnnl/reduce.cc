// Reductions (ONNX ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd) over any axes, with
// or without kept dimensions.
#include <algorithm>
#include <optional>
#include <string>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/onnx_kernels.h"
#include "specs/ops/reduce_mean.h"

namespace verisub::runtime::dnnl_backend {
namespace {

// A mean or max over every spatial axis (2 .. rank-1) of an image is a global pooling. oneDNN
// 2.6's reduction primitive is slow at it where the spatial extent is small, and slower still in
// any layout but plain; its pooling runs in the layout the input is stored in. Measured at one
// thread on [1,1280,7,7] (MNASNet's and EfficientNet's last mean): reduction 516 us plain,
// 1919 us channels-last, 1571 us nChw16c; pooling 35, 3.1 and 22 us. On large plain inputs the
// reduction wins ([1,64,56,56]: 30 against 68 us), so in plain layout both are timed once per
// shape. The output, [N,C,1,...] or [N,C], is written as plain: in channels-last, and in channel
// blocks that divide C, a tensor with spatial extent 1 has the bytes of its plain form.
// Emits the step and returns true, or returns false for another kernel to run it.
bool GlobalPool(KernelBuilder& b, dnnl::algorithm alg, const std::vector<int64_t>& axes) {
  using A = dnnl::algorithm;
  const Node& n = b.node();
  const int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  const int64_t rank = static_cast<int64_t>(xd.size());
  if ((alg != A::reduction_mean && alg != A::reduction_max) || rank < 3 || rank > 5 ||
      static_cast<int64_t>(axes.size()) != rank - 2)
    return false;
  for (int64_t d = 2; d < rank; ++d)
    if (axes[d - 2] != d) return false;
  std::vector<int64_t> kept(xd.begin(), xd.begin() + 2);
  kept.resize(rank, 1);
  // The input's layout: the one the layout DP assigned to it (its producer writes it so), else
  // the one it is stored in, when it is one of ours; plain otherwise.
  const Desc stored = WithType(b.StoredDesc(x), memory::data_type::f32);
  specs::Layout layout = specs::Layout::kPlain;
  if (auto l = b.AssignedLayout(x)) {
    layout = *l;
  } else {
    for (specs::Layout l : {specs::Layout::kNHWC, specs::Layout::kNCHW8c, specs::Layout::kNCHW16c})
      if (auto d = LayoutDesc(xd, l); d && *d == stored) layout = l;
  }
  auto src = LayoutDesc(xd, layout), dst = LayoutDesc(kept, layout);
  if (!src || !dst || dst->get_size() != PlainDesc(kept).get_size()) {
    layout = specs::Layout::kPlain;  // padded channel blocks: not the plain bytes
    src = PlainDesc(xd);
    dst = PlainDesc(kept);
  }
  // A 1-D or 3-D image stored channels-last or in whole channel blocks by the kernel before it
  // (the layout DP names 2-D images' layouts only): pooled as stored, not converted to plain
  // first. PointNet's max over 1024 points of 1024 channels: the conversion took 0.44 ms of a
  // 1.6 ms model. Its output, spatial extent 1, has the plain bytes in those formats too.
  bool as_stored = false;
  if (layout == specs::Layout::kPlain && rank != 4 && !(stored == PlainDesc(xd))) {
    using T = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    const std::vector<std::pair<T, int64_t>> formats =
        rank == 3
            ? std::vector<std::pair<T, int64_t>>{{T::acb, 1}, {T::aBc8b, 8}, {T::aBc16b, 16}}
            : std::vector<std::pair<T, int64_t>>{{T::acdeb, 1}, {T::aBcde8b, 8}, {T::aBcde16b, 16}};
    for (const auto& [tag, block] : formats)
      if (xd[1] % block == 0 && Desc(xd, f32, tag) == stored) {
        src = stored;
        dst = Desc(kept, f32, tag);
        as_stored = true;
      }
  }
  memory::dims kernel(xd.begin() + 2, xd.end()), ones(rank - 2, 1), zeros(rank - 2, 0);
  std::optional<dnnl::pooling_forward::primitive_desc> pool;
  try {
    pool.emplace(dnnl::pooling_forward::desc(
                     dnnl::prop_kind::forward_inference,
                     alg == A::reduction_max ? A::pooling_max : A::pooling_avg_exclude_padding,
                     *src, *dst, ones, kernel, zeros, zeros),
                 b.engine());
  } catch (const dnnl::error&) {
    return false;  // no pooling for this shape: the reduction runs it
  }
  if (layout == specs::Layout::kPlain && !as_stored) {
    dnnl::reduction::primitive_desc reduction(dnnl::reduction::desc(alg, *src, *dst, 0.f, 0.f),
                                              b.engine());
    std::string key = "global pool " + std::to_string(static_cast<int>(alg));
    for (int64_t d : xd) key += " " + std::to_string(d);
    auto time = [&](const dnnl::primitive& p) {
      return [&b, p, src, dst] {
        return PrimitiveUs(p, {{DNNL_ARG_SRC, *src}, {DNNL_ARG_DST, *dst}}, b.engine());
      };
    };
    if (!FirstFasterOnce(key, time(dnnl::pooling_forward(*pool)), time(dnnl::reduction(reduction))))
      return false;
  }
  b.Read(DNNL_ARG_SRC, x, *src);
  b.Write(DNNL_ARG_DST, y, PlainDesc(b.dims(y)));
  b.View(DNNL_ARG_DST, *dst);
  b.Emit(dnnl::pooling_forward(*pool));
  b.CountVariant("global pool");
  return true;
}

// A mean, max or sum over a block of middle axes of a row-major tensor (a token mean over [1, 196,
// 256]: MLP-Mixer's and ViT-style heads; YOLOv8's expectation over [1, 4, 16, 1600]) is a 1-D
// pooling (times the count for a sum) of the tensor read as [outer, inner, reduced]
// stored channels-last: oneDNN 2.6's reduction runs it in its reference loop (0.43 ms for that
// shape, against 0.05 for ONNX Runtime), its pooling in a jit kernel. Emits the step and returns
// true, or returns false for the reduction to run it.
bool MiddleAxesPool(KernelBuilder& b, dnnl::algorithm alg, const std::vector<int64_t>& axes) {
  using A = dnnl::algorithm;
  const Node& n = b.node();
  const int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  const int64_t rank = static_cast<int64_t>(xd.size());
  if ((alg != A::reduction_mean && alg != A::reduction_max && alg != A::reduction_sum) ||
      axes.empty() || axes.back() >= rank - 1 ||
      axes.back() - axes.front() + 1 != static_cast<int64_t>(axes.size()))
    return false;  // not one block of axes with others after it
  if (!(WithType(b.StoredDesc(x), memory::data_type::f32) == PlainDesc(xd))) return false;
  int64_t outer = 1, reduced = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axes.front() ? outer : d <= axes.back() ? reduced : inner) *= xd[d];
  if (reduced <= 1 || inner < 16) return false;  // nothing to pool, or too few lanes
  const auto f32 = memory::data_type::f32;
  const Desc src({outer, inner, reduced}, f32, memory::dims{reduced * inner, 1, inner});
  const Desc dst({outer, inner, 1}, f32, memory::dims{inner, 1, inner});
  // A sum is the average times the count (an output scale as a post-op).
  dnnl::primitive_attr attr;
  if (alg == A::reduction_sum) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, A::eltwise_linear, static_cast<float>(reduced), 0.f);
    attr.set_post_ops(po);
  }
  std::optional<dnnl::pooling_forward::primitive_desc> pool;
  try {
    pool.emplace(dnnl::pooling_forward::desc(
                     dnnl::prop_kind::forward_inference,
                     alg == A::reduction_max ? A::pooling_max : A::pooling_avg_exclude_padding, src,
                     dst, {1}, {reduced}, {0}, {0}),
                 attr, b.engine());
  } catch (const dnnl::error&) {
    return false;
  }
  if (IsReferenceImpl(*pool)) return false;
  b.Read(DNNL_ARG_SRC, x, PlainDesc(xd));
  b.View(DNNL_ARG_SRC, src);
  b.Write(DNNL_ARG_DST, y, PlainDesc(b.dims(y)));
  b.View(DNNL_ARG_DST, dst);
  b.Emit(dnnl::pooling_forward(*pool));
  b.CountVariant("pooled middle axes");
  return true;
}

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
  for (int64_t& a : axes) {
    auto axis = NormalizeAxis(a, rank, "axes");
    if (!axis.ok()) return Unimplemented("reduce: axis");
    a = *axis;
    kept[a] = 1;
  }
  if (CountElements(kept) != CountElements(b.dims(y))) return Unimplemented("reduce: shape");
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (GlobalPool(b, alg, axes)) return Status::Ok();
  if (MiddleAxesPool(b, alg, axes)) return Status::Ok();
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
