// ONNX kernels that rearrange or mask tensors by position: Trilu, EyeLike, CumSum,
// DepthToSpace, SpaceToDepth and ReverseSequence.
#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

Status Trilu(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  if (x.dims.size() < 2) return InvalidArgument("Trilu: rank below 2");
  int64_t k = 0;
  if (ctx.input(1)) {
    if (ctx.input(1)->NumElements() != 1) return InvalidArgument("Trilu: k must be a scalar");
    k = ctx.input(1)->IntAt(0);
  }
  bool upper = ctx.AttrInt("upper", 1) != 0;
  int64_t rows = x.dims[x.dims.size() - 2], cols = x.dims.back();
  int64_t n = x.NumElements();
  // Index n selects the appended zero.
  std::vector<int64_t> index(n);
  for (int64_t f = 0; f < n; ++f) {
    int64_t j = f % cols, i = (f / cols) % rows;
    bool keep = upper ? j - i >= k : j - i <= k;
    index[f] = keep ? f : n;
  }
  HostTensor ext = x;
  HostTensor zero = HostTensor::FromDoubles(x.elem_type, {1}, {0.0});
  ext.f32.insert(ext.f32.end(), zero.f32.begin(), zero.f32.end());
  ext.f64.insert(ext.f64.end(), zero.f64.begin(), zero.f64.end());
  ext.ints.insert(ext.ints.end(), zero.ints.begin(), zero.ints.end());
  (*out)[0] = ext.Gather(x.dims, index);
  return Status::Ok();
}

Status EyeLike(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  if (x.dims.size() != 2) return InvalidArgument("EyeLike: input must be 2-D");
  int32_t type = static_cast<int32_t>(ctx.AttrInt("dtype", x.elem_type));
  if (!IsSupportedType(type)) return Unimplemented("EyeLike to " + ElemTypeName(type));
  int64_t k = ctx.AttrInt("k", 0), rows = x.dims[0], cols = x.dims[1];
  std::vector<int64_t> v(rows * cols, 0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) v[i * cols + i + k] = 1;
  (*out)[0] = HostTensor::FromInts(type, x.dims, v);
  return Status::Ok();
}

Status CumSum(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  if (ctx.input(1)->NumElements() != 1) return InvalidArgument("CumSum: axis must be a scalar");
  int64_t r = static_cast<int64_t>(x.dims.size());
  VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.input(1)->IntAt(0), r, "CumSum"));
  bool exclusive = ctx.AttrInt("exclusive", 0) != 0, reverse = ctx.AttrInt("reverse", 0) != 0;
  int64_t outer = 1, len = x.dims[axis], inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.dims[d];
  bool ints = IsIntegerType(x.elem_type);
  std::vector<double> v = x.ToDoubles(), y(v.size());
  std::vector<int64_t> iv = x.ToInts(), iy(iv.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = 0;
      int64_t iacc = 0;
      for (int64_t s = 0; s < len; ++s) {
        int64_t j = reverse ? len - 1 - s : s;
        int64_t at = (o * len + j) * inner + i;
        if (exclusive) {
          y[at] = acc;
          iy[at] = iacc;
        }
        acc += v[at];
        iacc = static_cast<int64_t>(static_cast<uint64_t>(iacc) + static_cast<uint64_t>(iv[at]));
        if (!exclusive) {
          y[at] = acc;
          iy[at] = iacc;
        }
      }
    }
  (*out)[0] = ints ? HostTensor::FromInts(x.elem_type, x.dims, iy)
                   : HostTensor::FromDoubles(x.elem_type, x.dims, y);
  return Status::Ok();
}

// DepthToSpace (DCR or CRD) and SpaceToDepth as index maps over NCHW.
template <bool kToSpace>
Status BlockRearrange(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t b = ctx.AttrInt("blocksize", 0);
  if (x.dims.size() != 4 || b < 1 || b > 4096)
    return InvalidArgument(ctx.op_type() + ": needs a 4-D input and a positive blocksize");
  int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], w = x.dims[3];
  bool crd = ctx.AttrString("mode", "DCR") == "CRD";
  std::vector<int64_t> dims;
  if (kToSpace) {
    if (c % (b * b)) return InvalidArgument("DepthToSpace: channels not divisible");
    dims = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b || w % b) return InvalidArgument("SpaceToDepth: spatial size not divisible");
    dims = {n, c * b * b, h / b, w / b};
  }
  int64_t oc = dims[1], oh = dims[2], ow = dims[3];
  std::vector<int64_t> index(CountElements(dims));
  int64_t f = 0;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ch = 0; ch < oc; ++ch)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t src_c, src_i, src_j;
          if (kToSpace) {
            int64_t bi = i % b, bj = j % b;
            src_c = crd ? ch * b * b + bi * b + bj : (bi * b + bj) * oc + ch;
            src_i = i / b;
            src_j = j / b;
          } else {
            int64_t block = ch / c, cc = ch % c;
            src_c = cc;
            src_i = i * b + block / b;
            src_j = j * b + block % b;
          }
          index[f++] = ((in * c + src_c) * h + src_i) * w + src_j;
        }
  (*out)[0] = x.Gather(dims, index);
  return Status::Ok();
}

// ReverseSequence: along time_axis, the first sequence_lens[b] elements of every batch entry b
// (along batch_axis; the two axes are 0 and 1) in reverse order, the rest as they are (a
// bidirectional recurrent layer's backward pass over padded sequences).
Status ReverseSequence(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  const HostTensor& lens = *ctx.input(1);
  const int64_t batch_axis = ctx.AttrInt("batch_axis", 1), time_axis = ctx.AttrInt("time_axis", 0);
  if (x.dims.size() < 2) return InvalidArgument("ReverseSequence: input of rank below 2");
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) ||
      batch_axis == time_axis)
    return InvalidArgument("ReverseSequence: batch_axis " + std::to_string(batch_axis) +
                           " and time_axis " + std::to_string(time_axis) +
                           " must be 0 and 1, one each");
  const int64_t batch = x.dims[batch_axis], steps = x.dims[time_axis];
  if (lens.dims != std::vector<int64_t>{batch})
    return InvalidArgument("ReverseSequence: sequence_lens of shape " + DimsToString(lens.dims) +
                           " for a batch of " + std::to_string(batch));
  int64_t inner = 1;
  for (size_t d = 2; d < x.dims.size(); ++d) inner *= x.dims[d];
  std::vector<int64_t> index(static_cast<size_t>(x.NumElements()));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens.IntAt(b);
    if (len < 0 || len > steps)
      return InvalidArgument("ReverseSequence: sequence_lens[" + std::to_string(b) + "] = " +
                             std::to_string(len) + " outside [0, " + std::to_string(steps) + "]");
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      auto at = [&](int64_t step) {
        return (time_axis == 0 ? step * batch + b : b * steps + step) * inner;
      };
      for (int64_t i = 0; i < inner; ++i) index[at(t) + i] = at(from) + i;
    }
  }
  (*out)[0] = x.Gather(x.dims, index);
  return Status::Ok();
}

}  // namespace

void AddLayoutKernels(KernelTable* t) {
  auto& k = *t;
  k["Trilu"] = Trilu;
  k["EyeLike"] = EyeLike;
  k["CumSum"] = CumSum;
  k["DepthToSpace"] = BlockRearrange<true>;
  k["SpaceToDepth"] = BlockRearrange<false>;
  k["ReverseSequence"] = ReverseSequence;
}

}  // namespace verisub::runtime
