// Elementwise activations (relu, sigmoid, tanh, clip, hardswish, hardsigmoid, leaky relu, elu,
// exp, log, sqrt, abs, neg, softplus, mish, erf) on their own, in the layout of the input.
#include <algorithm>
#include <memory>
#include <optional>

#include "runtime/dnnl/builder.h"
#include "runtime/dnnl/vector_math.h"

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

// y = f(x) for float32 values x and y, f a function of vector_math.h: one pass over the stored
// elements (padding included: f(0) is 0 for erf, SiLU and GELU), in chunks on the model's
// threads, over x where nothing reads it later and `may_overwrite`. nullopt where the types are
// not float32.
std::optional<Status> HostFunctionPass(KernelBuilder& b, void (*f)(const float*, float*, int64_t),
                                       int x, int y, bool may_overwrite) {
  const Desc desc = b.StoredDesc(x);
  const int64_t count = static_cast<int64_t>(desc.get_size() / sizeof(float));
  return EmitFloatPass(b, x, y, desc, may_overwrite, [f, count](const float* in, float* out) {
    InChunks(count, [&](int64_t at, int64_t len) { f(in + at, out + at, len); });
  });
}

// The kernel variant a GELU in the backend's pass counts (GeluInHostPass).
constexpr char kGeluPass[] = "gelu in the backend's pass";

// The node's one input and output (an activation node), where nothing but f is asked of it.
std::optional<Status> HostFunctionPass(KernelBuilder& b, void (*f)(const float*, float*, int64_t)) {
  const Node& n = b.node();
  if (!b.AllDnnl() || n.inputs.size() != 1 || n.outputs.size() != 1) return std::nullopt;
  return HostFunctionPass(b, f, n.inputs[0], n.outputs[0], /*may_overwrite=*/true);
}

Status EltwiseKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!b.AllDnnl() || n.outputs.size() != 1) return Unimplemented("eltwise: inputs");
  auto ops = EltwiseOf(b.graph(), n);
  if (!ops || ops->empty()) return Unimplemented("eltwise: function");
  // SiLU on its own (after a matmul, a pooling, a convolution that kept its output for another
  // reader) in the backend's pass, as after a convolution (SiluAfterPrimitive).
  Group silu;
  silu.post_ops.push_back(PostOp{PostOp::kEltwise, -1, {}, 0.f, ops->front()});
  if (ops->size() == 1 && SiluAfterPrimitive(silu, b.OutputType(n.outputs[0]))) {
    if (auto done = HostFunctionPass(b, SiluOf)) return *done;
  }
  if (ops->size() == 1 && ops->front().alg == dnnl::algorithm::eltwise_gelu_erf &&
      GeluInHostPass()) {
    if (auto done = HostFunctionPass(b, GeluOf)) {
      b.CountVariant(kGeluPass);
      return *done;
    }
  }
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
  if (GeluInHostPass()) {  // not over x: the pattern's other nodes read it too
    if (auto done = HostFunctionPass(b, GeluOf, x, y, /*may_overwrite=*/false)) {
      b.CountVariant(kGeluPass);
      return *done;
    }
  }
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference,
                                   dnnl::algorithm::eltwise_gelu_erf,
                                   WithType(b.StoredDesc(x), b.OutputType(y)), 0.f, 0.f);
  dnnl::eltwise_forward::primitive_desc pd(desc, b.engine());
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());  // the pattern's other nodes read x too
  b.Emit(dnnl::eltwise_forward(pd));
  return Status::Ok();
}

// A lone erf (a GELU the pattern did not match: a QDQ pair inside it, or another formula): oneDNN
// has no erf eltwise, and the reference kernel's std::erf loop took 1.5 ms for a BERT
// feed-forward's 393,216 elements at one thread.
Status ErfKernel(KernelBuilder& b) {
  if (auto done = HostFunctionPass(b, ErfOf)) return *done;
  return Unimplemented("erf: a float32 input and output");
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
