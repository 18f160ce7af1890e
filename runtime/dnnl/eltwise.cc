// Elementwise activations (relu, sigmoid, tanh, clip, hardswish, hardsigmoid, leaky relu, elu,
// exp, log, sqrt, abs, neg, softplus, mish, erf) on their own, in the layout of the input.
#include <algorithm>
#include <memory>

#include "runtime/dnnl/builder.h"

namespace verisub::runtime::dnnl_backend {
namespace {

// An elementwise kernel writes over its input where nothing reads the input after it (oneDNN's
// eltwise runs in place): a standalone sigmoid or swish reads and writes one buffer instead of
// also filling a fresh one, which costs the caches a line per line written. Not where a concat
// reads the result: the concat builds its output in place from fresh pieces
// (ConcatInPlace, MarkConcatsInPlace), which a value sharing its input's buffer is not.
void WriteInPlaceWherePossible(KernelBuilder& b, int x, int y, const Desc& dst) {
  const Graph& g = b.graph();
  bool read_by_concat = false;
  for (int i = 0; i < g.num_nodes() && !read_by_concat; ++i)
    if (IsConcat(g.node(i)))
      for (int v : g.node(i).inputs) read_by_concat = read_by_concat || v == y;
  if (read_by_concat || b.slot(x).desc != dst) return b.Write(DNNL_ARG_DST, y, dst);
  b.WriteOver(DNNL_ARG_DST, y, dst, x);
}

Status EltwiseKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!b.AllDnnl() || n.outputs.size() != 1) return Unimplemented("eltwise: inputs");
  auto ops = EltwiseOf(b.graph(), n);
  if (!ops || ops->empty()) return Unimplemented("eltwise: function");
  int x = n.inputs[0], y = n.outputs[0];
  Desc src = WithType(b.StoredDesc(x), b.OutputType(y));  // in the output's type
  dnnl::eltwise_forward::primitive_desc pd = EltwiseChain(*ops, src, b.engine());
  // oneDNN 2.6's reference eltwise (shapes its jit kernels do not take, such as 1-D) applies
  // eltwise post-ops wrongly: ONNX's HardSigmoid example (alpha 0.5, beta 0.6 on [3]) came out
  // off by up to 1. There each function runs as a primitive of its own.
  if (ops->size() > 1 && IsReferenceImpl(pd)) {
    int cur = x;
    for (size_t k = 0; k < ops->size(); ++k) {
      const Eltwise& op = (*ops)[k];
      dnnl::eltwise_forward::primitive_desc one(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, op.alg, src, op.alpha,
                                      op.beta),
          b.engine());
      const int out =
          k + 1 == ops->size() ? y : b.Temporary(b.slot(y).name + "_step" + std::to_string(k), src);
      b.Read(DNNL_ARG_SRC, cur, one.src_desc());
      b.Write(DNNL_ARG_DST, out, one.dst_desc());
      b.Emit(dnnl::eltwise_forward(one));
      cur = out;
    }
    return Status::Ok();
  }
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  WriteInPlaceWherePossible(b, x, y, pd.dst_desc());
  b.Emit(dnnl::eltwise_forward(pd));
  return Status::Ok();
}

// A matched GELU subgraph (fusion.h): gelu_erf of the pattern's input.
Status GeluKernel(KernelBuilder& b) {
  int x = b.node().inputs[0], y = b.group().output;
  if (!b.Dnnl(x) || !b.Dnnl(y) || b.constant(x)) return Unimplemented("gelu: inputs");
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference,
                                   dnnl::algorithm::eltwise_gelu_erf,
                                   WithType(b.StoredDesc(x), b.OutputType(y)), 0.f, 0.f);
  dnnl::eltwise_forward::primitive_desc pd(desc, b.engine());
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());  // the pattern's other nodes read x too
  b.Emit(dnnl::eltwise_forward(pd));
  return Status::Ok();
}

// erf(x) for x[0..n): x P(x^2) / Q(x^2) over x clamped to [-4, 4], the rational approximation
// float32 erf has in Eigen, XLA and TVM (its coefficients); NaN stays NaN. Compiled for AVX-512
// and AVX2 beside the baseline, chosen at load.
__attribute__((target_clones("avx512f", "avx2", "default"))) void ErfOf(const float* x, float* y,
                                                                        int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] < -4.f ? -4.f : x[i];
    v = v > 4.f ? 4.f : v;
    const float v2 = v * v;
    float p = -2.72614225801306e-10f;
    p = p * v2 + 2.77068142495902e-08f;
    p = p * v2 - 2.10102402082508e-06f;
    p = p * v2 - 5.69250639462346e-05f;
    p = p * v2 - 7.34990630326855e-04f;
    p = p * v2 - 2.95459980854025e-03f;
    p = p * v2 - 1.60960333262415e-02f;
    float q = -1.45660718464996e-05f;
    q = q * v2 - 2.13374055278905e-04f;
    q = q * v2 - 1.68282697438203e-03f;
    q = q * v2 - 7.37332916720468e-03f;
    q = q * v2 - 1.42647390514189e-02f;
    y[i] = v * p / q;
  }
}

// A lone erf (a GELU the pattern did not match: a QDQ pair inside it, or another formula): oneDNN
// has no erf eltwise, and the reference kernel's std::erf loop took 1.5 ms for a BERT
// feed-forward's 393,216 elements at one thread. One pass over the stored elements (padding
// included: erf(0) is 0), in chunks on the model's threads, over the input where nothing reads
// it later.
Status ErfKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!b.AllDnnl() || n.inputs.size() != 1 || n.outputs.size() != 1 ||
      b.OutputType(n.outputs[0]) != memory::data_type::f32 ||
      b.slot(n.inputs[0]).desc.data_type() != memory::data_type::f32)
    return Unimplemented("erf: a float32 input and output");
  const int x = n.inputs[0], y = n.outputs[0];
  const Desc desc = b.StoredDesc(x);
  const int src = b.slot(x).desc == desc ? x : b.Converted(x, desc);
  const bool in_place = src == x && b.Overwritable(x, desc);
  if (in_place)
    b.WriteOver(DNNL_ARG_DST, y, desc, x);  // lists the write
  else
    b.Define(y, desc);
  const int64_t count = static_cast<int64_t>(desc.get_size() / sizeof(float));
  b.EmitHost(
      [src, y, count](RunState& st) -> Status {
        const float* in = static_cast<const float*>(st.mem[src].get_data_handle());
        float* out = static_cast<float*>(st.mem[y].get_data_handle());
        InChunks(count, [&](int64_t at, int64_t len) { ErfOf(in + at, out + at, len); });
        return Status::Ok();
      },
      {src}, in_place ? std::vector<int>{} : std::vector<int>{y});
  return Status::Ok();
}

}  // namespace

void AddEltwiseKernels(KernelRegistry* r) {
  for (const char* k : {"relu",
                        "sigmoid",
                        "tanh",
                        "relu6",
                        "hard_sigmoid",
                        "hard_swish",
                        "silu",
                        "gelu",
                        "gelu_tanh",
                        "exp",
                        "sqrt",
                        "recip",
                        "log",
                        "neg",
                        "onnx:Relu",
                        "onnx:Sigmoid",
                        "onnx:Tanh",
                        "onnx:Exp",
                        "onnx:Log",
                        "onnx:Sqrt",
                        "onnx:Abs",
                        "onnx:Neg",
                        "onnx:Softplus",
                        "onnx:Mish",
                        "onnx:HardSwish",
                        "onnx:LeakyRelu",
                        "onnx:Elu",
                        "onnx:HardSigmoid",
                        "onnx:Clip"})
    r->Add(k, EltwiseKernel);
  r->Add("pattern:gelu", GeluKernel);
  r->Add("erf", ErfKernel);
  r->Add("onnx:Erf", ErfKernel);
}

}  // namespace verisub::runtime::dnnl_backend
