// Per-channel scale and shift (channel_scale, bias_add) with the clamps that follow them (relu,
// leaky relu, clip, linear), as one pass over the tensor in whatever layout it is stored: plain,
// channels-last or channel-blocked. oneDNN 2.6's binary primitive runs a per-channel operand on a
// blocked tensor in a reference loop (DenseNet's BatchNormalization before its ReLU, a
// squeeze-excite gate: 10-60 ms a node on tensors a plain loop reads in 0.1 ms).
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "runtime/dnnl/builder.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/channel_scale.h"

namespace verisub::runtime::dnnl_backend {
namespace {

// A dense layout seen along one axis: memory is [outer][c_outer][inner][blk] and the element at
// (co, b) belongs to channel co * blk + b (channels from `channels` up to c_outer * blk are
// padding, kept zero).
struct ChannelWalk {
  int64_t outer = 1, c_outer = 1, inner = 1, blk = 1, channels = 0;
};

// Dims other than `axis` grouped by whether their stride is above or below the axis's, checked to
// tile the buffer densely; nullopt for layouts with gaps, an offset, or blocks of other dims.
std::optional<ChannelWalk> WalkOf(const Desc& desc, int axis) {
  const dnnl_memory_desc_t& d = desc.data;
  if (d.format_kind != dnnl_blocked || d.offset0 != 0 || axis < 0 || axis >= d.ndims)
    return std::nullopt;
  const dnnl_blocking_desc_t& bl = d.format_desc.blocking;
  ChannelWalk w;
  w.channels = d.dims[axis];
  if (bl.inner_nblks == 1 && bl.inner_idxs[0] == axis)
    w.blk = bl.inner_blks[0];
  else if (bl.inner_nblks != 0)
    return std::nullopt;
  w.c_outer = d.padded_dims[axis] / w.blk;
  const int64_t stride_c = bl.strides[axis];
  std::vector<std::pair<int64_t, int64_t>> inner, outer;  // (stride, size)
  for (int k = 0; k < d.ndims; ++k) {
    if (k == axis || d.padded_dims[k] == 1) continue;
    (bl.strides[k] < stride_c ? inner : outer).push_back({bl.strides[k], d.padded_dims[k]});
  }
  std::sort(inner.begin(), inner.end());
  std::sort(outer.begin(), outer.end());
  int64_t expected = w.blk;
  for (auto [stride, size] : inner) {
    if (stride != expected) return std::nullopt;
    expected *= size;
    w.inner *= size;
  }
  if (expected != stride_c && !(w.c_outer == 1 && inner.empty())) return std::nullopt;
  expected = w.c_outer * w.inner * w.blk;
  for (auto [stride, size] : outer) {
    if (stride != expected) return std::nullopt;
    expected *= size;
    w.outer *= size;
  }
  return w;
}

enum class Clamp { kRelu, kClip, kLinear };
struct ClampOp {
  Clamp kind;
  float a = 0.f, b = 0.f;  // relu: negative slope; clip: low, high; linear: a * x + b
};

std::optional<ClampOp> ClampOf(const Eltwise& e) {
  switch (e.alg) {
    case dnnl::algorithm::eltwise_relu:
      return ClampOp{Clamp::kRelu, e.alpha};
    case dnnl::algorithm::eltwise_clip:
    case dnnl::algorithm::eltwise_clip_v2:
      return ClampOp{Clamp::kClip, e.alpha, e.beta};
    case dnnl::algorithm::eltwise_linear:
      return ClampOp{Clamp::kLinear, e.alpha, e.beta};
    default:
      return std::nullopt;
  }
}

void ApplyClamps(const std::vector<ClampOp>& ops, float* y, int64_t n) {
  for (const ClampOp& op : ops) {
    const float a = op.a, b = op.b;
    switch (op.kind) {
      case Clamp::kRelu:
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.f ? y[i] : a * y[i];
        break;
      case Clamp::kClip:
        for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(y[i], a), b);
        break;
      case Clamp::kLinear:
        for (int64_t i = 0; i < n; ++i) y[i] = a * y[i] + b;
        break;
    }
  }
}

// The row kernels, compiled for AVX-512, AVX2 and the baseline ISA, picked at load by the CPU
// (GCC function multi-versioning): the loops are memory-bound only when they are vectorized.
#define VERISUB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

// y = clamp(x * s + t) with s, t per element (channels innermost).
VERISUB_CLONES void RowAffine(const float* __restrict x, float* __restrict y,
                              const float* __restrict s, const float* __restrict t, int64_t n,
                              float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(x[i] * s[i] + t[i], lo), hi);
}

// y = clamp(x * s + t) with one s, t for the row.
VERISUB_CLONES void ScalarAffine(const float* __restrict x, float* __restrict y, float s, float t,
                                 int64_t n, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(x[i] * s + t, lo), hi);
}

// Channel blocks of 16 (AVX-512's nChw16c) and 8 (AVX2's nChw8c): s and t stay in registers.
VERISUB_CLONES void Block16Affine(const float* __restrict x, float* __restrict y,
                                  const float* __restrict s, const float* __restrict t,
                                  int64_t inner, float lo, float hi) {
  for (int64_t i = 0; i < inner; ++i)
    for (int b = 0; b < 16; ++b)
      y[i * 16 + b] = std::min(std::max(x[i * 16 + b] * s[b] + t[b], lo), hi);
}
VERISUB_CLONES void Block8Affine(const float* __restrict x, float* __restrict y,
                                 const float* __restrict s, const float* __restrict t,
                                 int64_t inner, float lo, float hi) {
  for (int64_t i = 0; i < inner; ++i)
    for (int b = 0; b < 8; ++b)
      y[i * 8 + b] = std::min(std::max(x[i * 8 + b] * s[b] + t[b], lo), hi);
}

// A single relu or clip becomes the kernels' [lo, hi]; anything else runs as passes after.
void SplitClamps(const std::vector<ClampOp>& clamps, float* lo, float* hi,
                 std::vector<ClampOp>* rest) {
  *lo = -std::numeric_limits<float>::infinity();
  *hi = std::numeric_limits<float>::infinity();
  rest->clear();
  if (clamps.size() == 1 && clamps[0].kind == Clamp::kRelu && clamps[0].a == 0.f) {
    *lo = 0.f;
  } else if (clamps.size() == 1 && clamps[0].kind == Clamp::kClip) {
    *lo = clamps[0].a;
    *hi = clamps[0].b;
  } else {
    *rest = clamps;
  }
}

// y = clamps(x * scale[c] + shift[c]); scale and shift are padded to c_outer * blk with zeros.
void Run(const ChannelWalk& w, const float* x, float* y, const float* scale, const float* shift,
         const std::vector<ClampOp>& clamps) {
  float lo, hi;
  std::vector<ClampOp> rest;
  SplitClamps(clamps, &lo, &hi, &rest);
  const int64_t row = w.c_outer * w.inner * w.blk;
  if (w.inner == 1 && w.blk == 1) {  // channels innermost (channels-last, or the last axis)
#pragma omp parallel for schedule(static)
    for (int64_t o = 0; o < w.outer; ++o) {
      RowAffine(x + o * row, y + o * row, scale, shift, row, lo, hi);
      ApplyClamps(rest, y + o * row, row);
    }
    return;
  }
  const int64_t plane = w.inner * w.blk;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < w.outer; ++o) {
    for (int64_t co = 0; co < w.c_outer; ++co) {
      const int64_t at = o * row + co * plane;
      const float* xs = x + at;
      float* ys = y + at;
      const float* s = scale + co * w.blk;
      const float* t = shift + co * w.blk;
      if (w.blk == 1) {
        ScalarAffine(xs, ys, s[0], t[0], w.inner, lo, hi);
      } else if (w.blk == 16) {
        Block16Affine(xs, ys, s, t, w.inner, lo, hi);
      } else if (w.blk == 8) {
        Block8Affine(xs, ys, s, t, w.inner, lo, hi);
      } else {
        for (int64_t i = 0; i < w.inner; ++i)
          for (int64_t b = 0; b < w.blk; ++b)
            ys[i * w.blk + b] = std::min(std::max(xs[i * w.blk + b] * s[b] + t[b], lo), hi);
      }
      ApplyClamps(rest, ys, plane);
      const int64_t live = w.channels - co * w.blk;  // padded lanes of the last block stay zero
      if (live < w.blk)
        for (int64_t i = 0; i < w.inner; ++i)
          std::memset(ys + i * w.blk + live, 0, (w.blk - live) * sizeof(float));
    }
  }
}

// A per-channel vector operand: constant (copied once, padded) or a slot read each run.
struct Operand {
  int slot = kNoValue;
  std::vector<float> fixed;
};

Status ChannelAffineKernel(KernelBuilder& b) {
  const Group& grp = b.group();
  const Node& first = b.node();
  const int x = first.inputs[0];
  if (!b.Dnnl(x) || b.OutputType(grp.output) != memory::data_type::f32)
    return Unimplemented("channel affine: float32 tensors only");
  const int axis = static_cast<int>(first.op == specs::OpKind::kBiasAdd
                                        ? first.params[specs::ops::kBiasAxis]
                                        : first.params[specs::ops::kChannelScaleAxis]);
  const Desc src = b.StoredDesc(x);
  if (src.data_type() != memory::data_type::f32 || DimsOf(src) != b.dims(grp.output))
    return Unimplemented("channel affine: input");
  std::optional<ChannelWalk> walk = WalkOf(src, axis);
  if (!walk) return Unimplemented("channel affine: layout");
  const int64_t padded = walk->c_outer * walk->blk;
  Operand scale, shift;
  std::vector<ClampOp> clamps;
  std::vector<int> reads;
  auto operand = [&](int v, Operand* op) -> Status {
    if (CountElements(b.dims(v)) != walk->channels) return Unimplemented("channel affine: vector");
    if (b.constant(v)) {
      auto data = b.ConstantFloats(v);
      if (!data) return Unimplemented("channel affine: constant");
      op->fixed = std::move(*data);
      op->fixed.resize(padded, 0.f);
      return Status::Ok();
    }
    if (!b.Dnnl(v)) return Unimplemented("channel affine: vector on the host");
    op->slot = b.PlainFloat(v);
    reads.push_back(op->slot);
    return Status::Ok();
  };
  for (const PostOp& p : grp.post_ops) {
    if (p.kind == PostOp::kScale) {
      VERISUB_RETURN_IF_ERROR(operand(p.operands[0], &scale));
    } else if (p.kind == PostOp::kBias) {
      VERISUB_RETURN_IF_ERROR(operand(p.operands[0], &shift));
    } else if (p.kind == PostOp::kEltwise) {
      auto c = ClampOf(p.eltwise);
      if (!c) return Unimplemented("channel affine: activation");
      clamps.push_back(*c);
    } else {
      return Unimplemented("channel affine: post-op");
    }
  }
  if (scale.slot == kNoValue && scale.fixed.empty()) scale.fixed.assign(padded, 1.f);
  if (shift.slot == kNoValue && shift.fixed.empty()) shift.fixed.assign(padded, 0.f);
  // A constant scaled by a computed vector (a kernel scaled at run time, as the rewrite that
  // moves a squeeze-excite gate into the next convolution makes) has no run-time buffer: its
  // row-major data is kept here. A retry on plain inputs reads a plain copy of a blocked tensor.
  std::shared_ptr<const std::vector<float>> constant;
  int xs = kNoValue;
  if (b.constant(x)) {
    auto data = b.ConstantFloats(x);
    if (!data || src != PlainDesc(DimsOf(src)))
      return Unimplemented("channel affine: constant input");
    constant = std::make_shared<const std::vector<float>>(std::move(*data));
  } else {
    xs = b.slot(x).desc == src ? x : b.Converted(x, src);
    reads.insert(reads.begin(), xs);
  }
  const int y = grp.output;
  b.Define(y, src);
  const ChannelWalk w = *walk;
  b.EmitHost(
      [w, padded, xs, constant, y, scale, shift, clamps](RunState& st) -> Status {
        auto vector_of = [&](const Operand& op, std::vector<float>* scratch) -> const float* {
          if (op.slot == kNoValue) return op.fixed.data();
          scratch->assign(padded, 0.f);
          std::memcpy(scratch->data(), st.mem[op.slot].get_data_handle(),
                      w.channels * sizeof(float));
          return scratch->data();
        };
        std::vector<float> s_scratch, t_scratch;
        const float* s = vector_of(scale, &s_scratch);
        const float* t = vector_of(shift, &t_scratch);
        Run(w,
            constant ? constant->data() : static_cast<const float*>(st.mem[xs].get_data_handle()),
            static_cast<float*>(st.mem[y].get_data_handle()), s, t, clamps);
        return Status::Ok();
      },
      reads, {y});
  return Status::Ok();
}

}  // namespace

void AddChannelAffineKernels(KernelRegistry* r) {
  r->Add("pattern:channel_affine", ChannelAffineKernel);
}

}  // namespace verisub::runtime::dnnl_backend
