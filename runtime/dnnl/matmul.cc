// Matrix multiplication (spec matmul, ONNX MatMul): batched with broadcast batch dimensions, the
// group's bias and activations and residual add as post-ops; constant right-hand sides are
// reordered once into the layout oneDNN prefers.
#include "specs/ops/matmul.h"

#include "runtime/dnnl/builder.h"

namespace verisub::runtime::dnnl_backend {
namespace {

// oneDNN's effective ISA is AVX-512 or later: its matmul is brgemm-based.
bool BrgemmCpu() {
  static const bool brgemm = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
           isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return brgemm;
}

// A matmul of a QDQ model (ONNX Runtime's static quantization) as an int8 oneDNN matmul, as
// Int8Convolution (conv.cc) runs a convolution: the input a QuantizeLinear / DequantizeLinear
// pair's output, requantized into its steps; the constant right-hand side a DequantizeLinear of
// int8 weights with zero points 0, one scale or one per column; the input's scale times the
// weights' as output scales, the bias in units of the int32 sums. `ad`, `wd` and `yview` are the
// operands as the float matmul sees them (rows x K by K x N). nullopt where this does not apply.
std::optional<Status> Int8Matmul(KernelBuilder& b, int a, const std::vector<int64_t>& ad,
                                 const std::vector<int64_t>& wd, const std::vector<int64_t>& yd,
                                 const std::vector<int64_t>& yview,
                                 const std::vector<float>& bias) {
  const Group& grp = b.group();
  const std::optional<Int8Operands> ops = b.Int8OperandsOfGroup();
  if (!ops || ad.size() != 2 || wd.size() != 2) return std::nullopt;
  const FakeQuant& fq = ops->input;
  const int64_t cols = wd[1];
  const std::vector<float> scales = ops->OutputScales(), int_bias = ops->BiasInSums(bias);
  const auto src_type = fq.StepType();
  const int32_t zero = static_cast<int32_t>(fq.zero);
  dnnl::primitive_attr attr;
  attr.set_output_scales(scales.size() > 1 ? 1 << 1 : 0, scales);
  if (zero != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {zero});
  attr.set_post_ops(MakePostOps(grp));
  const Desc a_md = PlainDesc(ad, src_type), y_md = PlainDesc(yview), b_md = PlainDesc({1, cols});
  const Desc w_md(memory::dims(wd.begin(), wd.end()), memory::data_type::s8,
                  memory::format_tag::any);
  std::optional<dnnl::matmul::primitive_desc> pd;
  try {
    pd.emplace(bias.empty() ? dnnl::matmul::desc(a_md, w_md, y_md)
                            : dnnl::matmul::desc(a_md, w_md, b_md, y_md),
               attr, b.engine());
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  if (IsReferenceImpl(*pd)) return std::nullopt;
  b.Read(DNNL_ARG_SRC, b.Quantized(a, PlainDesc(b.dims(a), src_type), fq), a_md);
  b.Fixed(DNNL_ARG_WEIGHTS,
          b.ConstantMemory(ops->weights->Values(), PlainDesc(wd, memory::data_type::s8),
                           pd->weights_desc()));
  if (!bias.empty()) b.Fixed(DNNL_ARG_BIAS, b.ConstantMemory(int_bias, b_md, b_md));
  const int addend = SumAddend(grp);
  if (addend != kNoValue)
    b.WriteAccumulating(DNNL_ARG_DST, grp.output, PlainDesc(yd), addend);
  else
    b.Write(DNNL_ARG_DST, grp.output, PlainDesc(yd));
  if (yview != yd) b.View(DNNL_ARG_DST, y_md);
  b.Emit(dnnl::matmul(*pd));
  b.CountVariant("int8");
  return Status::Ok();
}

// Non-constant operand `id` of `dims` as the product may read it where it is: its stored
// descriptor when that is `dims` row-major but for the last two axes, swapped (each matrix
// transposed in place: a transpose read in place, TransposeKernel, or a column-major matrix);
// else nullopt (read row-major).
std::optional<Desc> StridedOperand(KernelBuilder& b, int id, const std::vector<int64_t>& dims,
                                   memory::data_type type) {
  const size_t r = dims.size();
  if (b.constant(id) || b.dims(id) != dims || r < 2) return std::nullopt;
  memory::dims strides(r);
  strides[r - 2] = 1;
  strides[r - 1] = dims[r - 2];
  int64_t stride = dims[r - 2] * dims[r - 1];
  for (size_t d = r - 2; d-- > 0;) {
    strides[d] = stride;
    stride *= dims[d];
  }
  const Desc transposed(memory::dims(dims.begin(), dims.end()), type, strides);
  if (b.slot(id).desc != transposed) return std::nullopt;
  return transposed;
}

Status MatmulKernel(KernelBuilder& b) {
  const Node& n = b.node();
  const Group& grp = b.group();
  if (!b.AllDnnl() || n.inputs.size() != 2) return Unimplemented("matmul: inputs");
  if (n.op &&
      !SpecActivation(static_cast<specs::Activation>(n.params[specs::ops::kMatmulActivation])))
    return Unimplemented("matmul: an activation oneDNN has no eltwise for");
  int a = n.inputs[0], w = n.inputs[1];
  const auto& yd = b.dims(grp.output);
  if (b.dims(a).size() < 2 || b.dims(w).size() < 2 || yd.size() < 2)
    return Unimplemented("matmul: rank below 2");
  size_t rank = yd.size();
  std::vector<int64_t> ad = PadRank(b.dims(a), rank), wd = PadRank(b.dims(w), rank);
  const int64_t cols = yd.back();
  // A matrix right-hand side shared by a batch ([..., M, K] x [K, N]: a transformer's
  // projections, PyTorch's [seq, 1, embed] layout) is one GEMM of every row: [rows, K] x [K, N]
  // over the same buffers. As a batch it was 128 products of one row each (BERT's QKV
  // projection, 128x1x768 by 768x2304).
  std::vector<int64_t> yview = yd;
  if (b.dims(w).size() == 2 && rank >= 3) {
    const int64_t rows = CountElements(yd) / cols;
    ad = {rows, ad.back()};
    wd = b.dims(w);
    yview = {rows, cols};
    rank = 2;
  }
  std::vector<float> bias;
  bool folds_weights = false;
  for (const PostOp& op : grp.post_ops) folds_weights |= op.kind == PostOp::kScale;
  std::optional<std::vector<float>> folded;  // the weights' copy where a scale is folded in
  const std::vector<float>* weights = b.ConstantFloatsInPlaceOrCopy(w, folds_weights, &folded);
  for (const PostOp& op : grp.post_ops) {
    if (op.kind == PostOp::kBias) {
      auto add = b.ConstantFloats(op.operands[0]);
      if (!add || static_cast<int64_t>(add->size()) != cols) return Unimplemented("matmul: bias");
      if (bias.empty()) bias.assign(cols, 0.f);
      for (int64_t c = 0; c < cols; ++c) bias[c] += (*add)[c];
    } else if (op.kind == PostOp::kScale) {
      // A column scale: (x w + b) * s = x (w * s) + b * s, on constant weights.
      auto s = b.ConstantFloats(op.operands[0]);
      if (!s || static_cast<int64_t>(s->size()) != cols || !folded)
        return Unimplemented("matmul: channel_scale");
      for (size_t e = 0; e < folded->size(); ++e) (*folded)[e] *= (*s)[e % cols];
      for (int64_t c = 0; c < static_cast<int64_t>(bias.size()); ++c) bias[c] *= (*s)[c];
    }
  }
  if (auto done = Int8Matmul(b, a, ad, wd, yd, yview, bias)) return *done;
  // Operands and result in the output's type (bfloat16 where assigned), the bias float32.
  const memory::data_type type = b.OutputType(grp.output);
  Desc a_md = PlainDesc(ad, type);
  // Constant weights: oneDNN 2.6's avx2 matmul is gemm-based and picks row-major for `any`;
  // column-major measured 15-25% faster there on BERT's projections. From AVX-512 on its matmul
  // is brgemm-based and `any` packs the weights into its blocked format once, at prepare time:
  // column-major there made every call repack them (BERT's 768x768 projections 3.0 ms, 50
  // GFLOP/s, on one AVX-512 core).
  Desc w_md = !weights ? PlainDesc(wd, type)
              : BrgemmCpu()
                  ? Desc(memory::dims(wd.begin(), wd.end()), type, memory::format_tag::any)
                  : *LayoutDesc(wd, specs::Layout::kColMajor, type);
  Desc y_md = PlainDesc(yview, type);
  std::vector<int64_t> bd(rank, 1);
  bd.back() = cols;
  Desc b_md = PlainDesc(bd);
  dnnl::primitive_attr attr;
  attr.set_post_ops(MakePostOps(grp));
  auto make_pd = [&] {
    auto desc = bias.empty() ? dnnl::matmul::desc(a_md, w_md, y_md)
                             : dnnl::matmul::desc(a_md, w_md, b_md, y_md);
    return dnnl::matmul::primitive_desc(desc, attr, b.engine());
  };
  // Operands that are transposes read in place, where oneDNN runs the product on them with
  // an implementation of its own (not the reference loop); else read row-major as usual.
  const std::optional<Desc> a_strided = StridedOperand(b, a, ad, type);
  const std::optional<Desc> w_strided = weights ? std::nullopt : StridedOperand(b, w, wd, type);
  const Desc a_plain = a_md, w_plain = w_md;
  if (a_strided) a_md = *a_strided;
  if (w_strided) w_md = *w_strided;
  dnnl::matmul::primitive_desc pd = make_pd();
  if ((a_strided || w_strided) && IsReferenceImpl(pd)) {
    a_md = a_plain;
    w_md = w_plain;
    pd = make_pd();
  }
  b.Read(DNNL_ARG_SRC, a, a_md);
  if (weights)
    b.Fixed(DNNL_ARG_WEIGHTS, b.ConstantMemory(*weights, PlainDesc(wd), pd.weights_desc()));
  else
    b.Read(DNNL_ARG_WEIGHTS, w, w_md);
  if (!bias.empty()) b.Fixed(DNNL_ARG_BIAS, b.ConstantMemory(bias, b_md, b_md));
  int addend = SumAddend(grp);
  if (addend != kNoValue)
    b.WriteAccumulating(DNNL_ARG_DST, grp.output, PlainDesc(yd, type), addend);
  else
    b.Write(DNNL_ARG_DST, grp.output, PlainDesc(yd, type));
  if (yview != yd) b.View(DNNL_ARG_DST, y_md);
  b.Emit(dnnl::matmul(pd));
  return Status::Ok();
}

}  // namespace

void AddMatmulKernels(KernelRegistry* r) {
  r->Add("matmul", MatmulKernel);
  r->Add("onnx:MatMul", MatmulKernel);
}

}  // namespace verisub::runtime::dnnl_backend
