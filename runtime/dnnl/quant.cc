// Kernels of quantized models. A QuantizeLinear and the DequantizeLinear reading it (a QDQ
// model's activations, "pattern:fake_quant" where no convolution or matmul took them as post-ops)
// as one float pass in the value's layout.
// Dynamically quantized matmuls (ONNX Runtime's contrib DynamicQuantizeMatMul, which the import
// makes of quantize_dynamic's DynamicQuantizeLinear / MatMulInteger / Cast / Mul pattern) as one
// int8 oneDNN matmul: the float input quantized per run as DynamicQuantizeLinear does it (the
// same scale, zero point and rounding as the reference kernel), multiplied by the constant 8-bit
// weights with the input's zero point, the scales (known per run) and the bias as post-ops. Weights
// stored as uint8 run shifted by 128 as int8 (oneDNN's CPU int8 weights are signed), and weight
// zero points other than that shift are a per-column correction by the rows' sums. On the reference
// kernel a quantized BERT-base layer took 150 ms.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/dnnl/builder.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime::dnnl_backend {
namespace {

using dt = memory::data_type;
using tag = memory::format_tag;

// What a run needs besides its buffers; shared by the runs (read only).
struct QuantMatmul {
  dnnl::matmul prim;
  memory weights;
  std::optional<memory> bias;
  Desc src_md, dst_md, scale_md;
  int64_t rows = 0, depth = 0, cols = 0;
  std::vector<float> w_scale;       // one, or one per column
  std::vector<int32_t> correction;  // per column: shift - zero point; empty when all zero
};

constexpr float kRoundingMagic = 12582912.f;  // 1.5 * 2^23: adding, removing it rounds to even

// round_half_even(v) saturated to [low, high] (integers, so clamping first is clamping after);
// NaN gives 0.
[[gnu::always_inline]] inline float SaturatedStep(float v, float low, float high) {
  v = v < low ? low : v;
  v = v > high ? high : v;
  v = v == v ? v : 0.f;
  return (v + kRoundingMagic) - kRoundingMagic;
}

// The smallest and largest of x[0..n) and 0 (NaN skipped). Compiled for AVX-512 and AVX2
// beside the baseline, chosen at load (a 4-wide pass made the quantization 10% of a BERT
// matmul's time).
__attribute__((target_clones("avx512f", "avx2", "default"))) std::pair<float, float> RangeOf(
    const float* x, int64_t n) {
  float lo = 0.f, hi = 0.f;
#pragma omp simd reduction(min : lo) reduction(max : hi)
  for (int64_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  return {lo, hi};
}

// q[i] = saturate(round_half_even(x[i] / scale) + zero) to [0, 255] for i in [0, n).
__attribute__((target_clones("avx512f", "avx2", "default"))) void QuantizeSteps(
    const float* x, int64_t n, float scale, int32_t zero, uint8_t* q) {
  const float low = static_cast<float>(-zero), high = static_cast<float>(255 - zero);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    q[i] =
        static_cast<uint8_t>(static_cast<int32_t>(SaturatedStep(x[i] / scale, low, high)) + zero);
}

// The scale and zero point ONNX's DynamicQuantizeLinear takes for x[0..n): the range [min(x, 0),
// max(x, 0)] over 255 steps, the zero point rounded and saturated (scale 0 for all zeros). The
// range pass runs in chunks on the model's threads.
std::pair<float, int32_t> DynamicQuantization(const float* x, int64_t n) {
  constexpr int64_t kChunk = kHostChunk;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  float lo = 0.f, hi = 0.f;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const auto [l, h] = RangeOf(x + c * kChunk, std::min(kChunk, n - c * kChunk));
    lo = l < lo ? l : lo;
    hi = h > hi ? h : hi;
  }
  const float scale =
      static_cast<float>((static_cast<double>(hi) - static_cast<double>(lo)) / 255.0);
  if (scale == 0.f) return {0.f, 0};
  const int32_t zero = static_cast<int32_t>(
      std::clamp(std::nearbyint(0.0 - static_cast<double>(lo) / scale), 0.0, 255.0));
  return {scale, zero};
}

// The per-tensor quantization of `x` (n elements) into `q`, as ONNX's DynamicQuantizeLinear
// (DynamicQuantization), each element round-half-even(x / scale) + zero point, saturated to
// [0, 255]. Returns scale and zero point. Both passes run in chunks on the model's threads (the
// matmul after them does).
std::pair<float, int32_t> QuantizeRange(const float* x, int64_t n, uint8_t* q) {
  const auto [scale, zero] = DynamicQuantization(x, n);
  if (scale == 0.f) {
    std::memset(q, 0, static_cast<size_t>(n));
    return {0.f, 0};
  }
  InChunks(n, [&, scale = scale, zero = zero](int64_t at, int64_t len) {
    QuantizeSteps(x + at, len, scale, zero, q + at);
  });
  return {scale, zero};
}

// y = (saturate(round_half_even(x / scale) + zero) - zero) * scale over n elements, the
// saturation bounds given less the zero point; NaN gives 0 (the zero point).
__attribute__((target_clones("avx512f", "avx2", "default"))) void FakeQuantize(
    const float* x, int64_t n, float scale, float low, float high, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = SaturatedStep(x[i] / scale, low, high) * scale;
}

}  // namespace

void EmitFakeQuantPass(KernelBuilder& b, int x, int y, const FakeQuant& fq) {
  const Desc desc = b.slot(x).desc;
  b.Define(y, desc);
  const float scale = fq.scale, low = fq.low - fq.zero, high = fq.high - fq.zero;
  const int64_t n = static_cast<int64_t>(desc.get_size() / sizeof(float));
  b.EmitHost(
      [x, y, n, scale, low, high](RunState& st) -> Status {
        FakeQuantize(static_cast<const float*>(st.mem[x].get_data_handle()), n, scale, low, high,
                     static_cast<float*>(st.mem[y].get_data_handle()));
        return Status::Ok();
      },
      {x}, {y});
}

namespace {

// A fake-quant pair on its own: elementwise, so in whatever layout the input is stored (a blocked
// layout's padding holds zeros, which stay zeros).
Status FakeQuantKernel(KernelBuilder& b) {
  const int x = b.node().inputs[0], y = b.group().output;
  if (!b.Dnnl(x) || !b.Dnnl(y) || b.constant(x)) return Unimplemented("fake quant: inputs");
  const std::optional<FakeQuant> fq =
      FakeQuantOf(b.graph(), b.group().kernel_node, b.group().last_node);
  if (!fq) return Unimplemented("fake quant: no longer matches");
  const Desc desc = b.slot(x).desc;
  if (desc.data_type() != dt::f32 || b.OutputType(y) != dt::f32)
    return Unimplemented("fake quant: float32 only");
  if (b.draft().eight_bit.count(y)) {
    // Only int8 kernels read the result: its 8-bit steps, one quantizing reorder in the input's
    // layout.
    const Desc want = WithType(desc, fq->StepType());
    dnnl::reorder::primitive_desc pd(b.engine(), desc, b.engine(), want,
                                     QuantizeAttr(fq->scale, static_cast<int32_t>(fq->zero)));
    b.Read(DNNL_ARG_SRC, x, desc);
    b.Write(DNNL_ARG_DST, y, want);
    b.MarkEightBit(y, *fq);
    b.Emit(dnnl::reorder(pd));
    b.CountVariant("8-bit output");
    return Status::Ok();
  }
  EmitFakeQuantPass(b, x, y, *fq);
  return Status::Ok();
}

Status DynamicQuantizeMatMulKernel(KernelBuilder& b) {
  const Node& n = b.node();
  auto no = [](const std::string& why) { return Unimplemented("DynamicQuantizeMatMul: " + why); };
  if (n.inputs.size() < 3 || n.outputs.size() != 1) return no("inputs");
  const int x = n.inputs[0], y = n.outputs[0];
  if (!b.Dnnl(x) || !b.Dnnl(y) || b.constant(x)) return no("a float input computed at run time");
  auto optional_constant = [&](size_t k, const HostTensor** t) {
    *t = nullptr;
    if (n.inputs.size() <= k || n.inputs[k] == kNoValue) return true;
    *t = b.constant(n.inputs[k]);
    return *t != nullptr;
  };
  const HostTensor *w = b.constant(n.inputs[1]), *ws = b.constant(n.inputs[2]), *wz, *bias;
  if (!optional_constant(3, &wz) || !optional_constant(4, &bias) || !w || !ws)
    return no("constant weights, scales, zero points and bias");
  if (w->dims.size() != 2 || (w->elem_type != kInt8 && w->elem_type != kUint8))
    return no("2-D 8-bit weights");
  auto q = std::make_shared<QuantMatmul>();
  q->depth = w->dims[0];
  q->cols = w->dims[1];
  const std::vector<int64_t>& xd = b.dims(x);
  if (xd.empty() || xd.back() != q->depth || q->depth <= 0 || q->cols <= 0)
    return no("the input's last dimension is not the weights' first");
  q->rows = CountElements(xd) / q->depth;
  if (CountElements(b.dims(y)) != q->rows * q->cols) return no("output shape");
  auto per_column_or_one = [&](const HostTensor* t) {
    return !t || t->NumElements() == 1 || t->NumElements() == q->cols;
  };
  if (!per_column_or_one(ws) || !per_column_or_one(wz) || !per_column_or_one(bias) ||
      (wz && wz->elem_type != w->elem_type))
    return no("scales, zero points or bias of another shape");

  const int32_t shift = w->elem_type == kUint8 ? 128 : 0;
  const std::vector<int64_t> wv = w->ToInts();
  std::vector<int8_t> w8(wv.size());
  for (size_t i = 0; i < wv.size(); ++i) w8[i] = static_cast<int8_t>(wv[i] - shift);
  const std::vector<int64_t> zeros = wz ? wz->ToInts() : std::vector<int64_t>{0};
  std::vector<int32_t> correction(q->cols);
  bool corrected = false;
  for (int64_t c = 0; c < q->cols; ++c) {
    correction[c] = shift - static_cast<int32_t>(zeros[zeros.size() > 1 ? c : 0]);
    corrected |= correction[c] != 0;
  }
  if (corrected) q->correction = std::move(correction);
  for (int64_t i = 0; i < ws->NumElements(); ++i)
    q->w_scale.push_back(static_cast<float>(ws->DoubleAt(i)));

  // The scales (a_scale * b_scale, known per run) as a binary post-op rather than runtime output
  // scales: with those, oneDNN 2.6 takes its gemm-based int8 matmul, 10-15% slower than the
  // brgemm one at BERT's shapes. float(product) * scale, then + bias, as the reference computes.
  dnnl::primitive_attr attr;
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  q->scale_md = Desc({1, static_cast<int64_t>(q->w_scale.size())}, dt::f32, tag::ab);
  const Desc bias_md({1, q->cols}, dt::f32, tag::ab);
  dnnl::post_ops po;
  po.append_binary(dnnl::algorithm::binary_mul, q->scale_md);
  if (bias) po.append_binary(dnnl::algorithm::binary_add, bias_md);
  attr.set_post_ops(po);
  q->src_md = Desc({q->rows, q->depth}, dt::u8, tag::ab);
  q->dst_md = Desc({q->rows, q->cols}, dt::f32, tag::ab);
  const Desc w_plain({q->depth, q->cols}, dt::s8, tag::ab);
  dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(q->src_md, Desc({q->depth, q->cols}, dt::s8, tag::any), q->dst_md), attr,
      b.engine());
  q->prim = dnnl::matmul(pd);
  q->weights = b.ConstantMemory(w8, w_plain, pd.weights_desc());
  if (bias) {
    std::vector<float> values(q->cols);
    for (int64_t c = 0; c < q->cols; ++c)
      values[c] = static_cast<float>(bias->DoubleAt(bias->NumElements() > 1 ? c : 0));
    q->bias = b.ConstantMemory(values, bias_md, bias_md);
  }

  const int xs = b.PlainFloat(x);
  const int quantized = b.Temporary(n.name + "/quantized", q->src_md);
  b.Define(y, PlainDesc(b.dims(y)));
  b.EmitHost(
      [q, xs, quantized, y](RunState& st) -> Status {
        uint8_t* qp = static_cast<uint8_t*>(st.mem[quantized].get_data_handle());
        float* yp = static_cast<float*>(st.mem[y].get_data_handle());
        const auto [scale, zero] = QuantizeRange(
            static_cast<const float*>(st.mem[xs].get_data_handle()), q->rows * q->depth, qp);
        std::vector<float> scales(q->w_scale.size());
        for (size_t c = 0; c < scales.size(); ++c) scales[c] = scale * q->w_scale[c];
        int32_t zero_point = zero;
        memory src(q->src_md, *st.engine, qp), dst(q->dst_md, *st.engine, yp);
        memory scale_mem(q->scale_md, *st.engine, scales.data());
        memory zero_mem(Desc({1}, dt::s32, tag::a), *st.engine, &zero_point);
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_SRC, src},
            {DNNL_ARG_WEIGHTS, q->weights},
            {DNNL_ARG_DST, dst},
            {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_mem},
            {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, scale_mem}};
        if (q->bias) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1] = *q->bias;
        q->prim.execute(*st.stream, args);
        st.stream->wait();
        if (!q->correction.empty()) {
          // The weights ran shifted: add (shift - zero point) times each row's sum of the
          // input's steps, scaled.
          for (int64_t r = 0; r < q->rows; ++r) {
            const uint8_t* row = qp + r * q->depth;
            int64_t sum = 0;
            for (int64_t k = 0; k < q->depth; ++k) sum += row[k];
            sum -= static_cast<int64_t>(zero) * q->depth;
            float* out = yp + r * q->cols;
            for (int64_t c = 0; c < q->cols; ++c)
              out[c] += scales[scales.size() > 1 ? c : 0] *
                        static_cast<float>(static_cast<int64_t>(q->correction[c]) * sum);
          }
        }
        return Status::Ok();
      },
      {xs}, {quantized, y});
  return Status::Ok();
}

// A DynamicQuantizeLinear read only by a DequantizeLinear (a dynamically quantized convolution's
// input): the scale and zero point of the value's range, then each element's step times the
// scale, one pass in the input's layout (a blocked layout's padding holds zeros, which the range
// includes anyway and which stay zeros).
Status DynamicFakeQuantKernel(KernelBuilder& b) {
  const int x = b.node().inputs[0], y = b.group().output;
  if (!b.Dnnl(x) || !b.Dnnl(y) || b.constant(x)) return Unimplemented("dynamic fake quant: inputs");
  const Desc desc = b.slot(x).desc;
  if (desc.data_type() != dt::f32 || b.OutputType(y) != dt::f32)
    return Unimplemented("dynamic fake quant: float32 only");
  b.Define(y, desc);
  const int64_t n = static_cast<int64_t>(desc.get_size() / sizeof(float));
  b.EmitHost(
      [x, y, n](RunState& st) -> Status {
        const float* in = static_cast<const float*>(st.mem[x].get_data_handle());
        float* out = static_cast<float*>(st.mem[y].get_data_handle());
        const auto [scale, zero] = DynamicQuantization(in, n);
        if (scale == 0.f) {
          std::fill(out, out + n, 0.f);
          return Status::Ok();
        }
        const float low = static_cast<float>(-zero), high = static_cast<float>(255 - zero);
        InChunks(n, [&, scale = scale](int64_t at, int64_t len) {
          FakeQuantize(in + at, len, scale, low, high, out + at);
        });
        return Status::Ok();
      },
      {x}, {y});
  return Status::Ok();
}

}  // namespace

void AddQuantKernels(KernelRegistry* r) {
  r->Add("pattern:dynamic_fake_quant", DynamicFakeQuantKernel);
  r->Add(std::string("onnx:") + std::string(kMicrosoftDomain) + ".DynamicQuantizeMatMul",
         DynamicQuantizeMatMulKernel);
  r->Add("pattern:fake_quant", FakeQuantKernel);
}

}  // namespace verisub::runtime::dnnl_backend
