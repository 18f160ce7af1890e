// libverisub_codegen.so: the Halide code generator (codegen.h), a plugin KernelCache opens only
// to compile what its cache lacks. Links Halide (and through it LLVM); nothing of the runtime.
#include <Halide.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <limits>
#include <optional>

#include "base/file_io.h"
#include "fusion/codegen.h"
#include "runtime/erf_rational.h"

namespace verisub::fusion {
namespace {

namespace fs = std::filesystem;
namespace H = Halide;

constexpr int kVector = 16;         // lanes of the innermost loop (AVX-512 float; two AVX2 ones)
constexpr int64_t kInnerMin = 256;  // elements of the fused inner loop before it stops growing
constexpr int64_t kTaskElements = 32768;  // elements per parallel task, at least

// Row-major index -> Halide's argument order (dimension 0 innermost).
std::vector<H::Expr> Args(const std::vector<H::Expr>& row_major) {
  return {row_major.rbegin(), row_major.rend()};
}

H::Expr Erf(H::Expr x) {
  // The rational approximation the backend's erf and GELU passes use (runtime/erf_rational.h):
  // nine multiply-adds and one division, where Abramowitz and Stegun 7.1.26 needed an exp and a
  // division besides (a GELU on its own ran 1.6x the backend's pass). Halide makes the clamp a
  // min and a max, which turn NaN into a bound, and compiles floats without NaNs in mind (is_nan
  // folds to false): NaN is told by its bits and selected back.
  const H::Expr v = H::clamp(x, -runtime::kErfClamp, runtime::kErfClamp);
  const H::Expr v2 = v * v;
  H::Expr p = runtime::kErfP[0];
  for (int k = 1; k < 7; ++k) p = p * v2 + runtime::kErfP[k];
  H::Expr q = runtime::kErfQ[0];
  for (int k = 1; k < 5; ++k) q = q * v2 + runtime::kErfQ[k];
  const H::Expr magnitude = H::reinterpret<uint32_t>(x) & H::cast(H::UInt(32), 0x7fffffff);
  const H::Expr nan = magnitude > H::cast(H::UInt(32), 0x7f800000);
  return H::select(nan, x, v * p / q);
}

H::Expr Tanh(H::Expr x) {
  // Halide's tanh calls the C library's, one element at a time (50x slower than its vectorized
  // exp on AVX-512): (1 - e) / (1 + e) with e = exp(-2|x|), absolute error ~1e-7.
  const H::Expr e = H::exp(-2.0f * H::abs(x));
  const H::Expr t = (1.0f - e) / (1.0f + e);
  return H::select(x < 0, -t, t);
}

// The pipeline of one sub-operator graph: one Func per node (pure ones inlined by Halide),
// inputs as ImageParams with fixed dense row-major shapes.
struct Pipeline {
  std::vector<H::ImageParam> inputs;
  std::vector<H::Func> funcs;
  std::vector<std::optional<H::RDom>> rdoms;  // per node: a reduction's domain
  std::vector<H::Var> vars;                   // of the output, row-major
  H::Func out;
};

void FixShape(H::OutputImageParam p, const std::vector<int64_t>& dims) {
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    const int hd = static_cast<int>(dims.size() - 1 - k);
    p.dim(hd).set_bounds(0, static_cast<int>(dims[k])).set_stride(static_cast<int>(stride));
    stride *= dims[k];
  }
}

// Whether an axis map's index stays in [0, extent) over the whole output (else the read needs
// the bounds test): a modulo no larger than the extent, or the affine range divided.
bool AlwaysInside(const AxisMap& m, const std::vector<int64_t>& out, int64_t extent) {
  if (m.modulus > 0) return m.modulus <= extent;
  int64_t lo = m.offset, hi = m.offset;
  for (size_t j = 0; j < out.size(); ++j) {
    const int64_t a = m.coef[j] * (out[j] - 1);
    lo += std::min<int64_t>(0, a);
    hi += std::max<int64_t>(0, a);
  }
  return FloorDiv(lo, m.divisor) >= 0 && FloorDiv(hi, m.divisor) < extent;
}

Pipeline Build(const SubGraph& g) {
  Pipeline p;
  for (size_t k = 0; k < g.input_dims.size(); ++k) {
    p.inputs.emplace_back(H::Float(32), static_cast<int>(g.input_dims[k].size()),
                          "in" + std::to_string(k));
    FixShape(p.inputs.back(), g.input_dims[k]);
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const SubNode& n = g.nodes[i];
    std::vector<H::Var> v;
    for (size_t k = 0; k < n.dims.size(); ++k) v.emplace_back("a" + std::to_string(k));
    const std::vector<H::Expr> idx(v.begin(), v.end());
    H::Func f("n" + std::to_string(i));
    std::optional<H::RDom> rdom;
    auto arg = [&](int k, const std::vector<H::Expr>& at) { return p.funcs[n.args[k]](Args(at)); };
    switch (n.kind) {
      case SubOpKind::kInput:
        f(Args(idx)) = p.inputs[n.input](Args(idx));
        break;
      case SubOpKind::kConst:
        f(Args(idx)) = H::Expr(static_cast<float>(n.value));
        break;
      case SubOpKind::kUnary: {
        const H::Expr x = arg(0, idx);
        H::Expr y;
        switch (n.unary) {
          case UnaryFn::kNeg:
            y = -x;
            break;
          case UnaryFn::kRecip:
            y = 1.0f / x;
            break;
          case UnaryFn::kExp:
            y = H::exp(x);
            break;
          case UnaryFn::kLog:
            y = H::log(x);
            break;
          case UnaryFn::kSqrt:
            y = H::sqrt(x);
            break;
          case UnaryFn::kErf:
            y = Erf(x);
            break;
          case UnaryFn::kTanh:
            y = Tanh(x);
            break;
          case UnaryFn::kAbs:
            y = H::abs(x);
            break;
        }
        f(Args(idx)) = y;
        break;
      }
      case SubOpKind::kBinary: {
        const H::Expr a = arg(0, idx), b = arg(1, idx);
        H::Expr y;
        switch (n.binary) {
          case BinaryFn::kAdd:
            y = a + b;
            break;
          case BinaryFn::kMul:
            y = a * b;
            break;
          case BinaryFn::kMax:
            y = H::max(a, b);
            break;
          case BinaryFn::kMin:
            y = H::min(a, b);
            break;
          case BinaryFn::kLess:
            y = H::select(a < b, 1.0f, 0.0f);
            break;
          case BinaryFn::kPow:
            y = H::pow(a, b);
            break;
        }
        f(Args(idx)) = y;
        break;
      }
      case SubOpKind::kSelect:
        f(Args(idx)) = H::select(arg(0, idx) != 0.0f, arg(1, idx), arg(2, idx));
        break;
      case SubOpKind::kReindex: {
        const std::vector<int64_t>& in = g.dims(n.args[0]);
        std::vector<H::Expr> at;
        H::Expr inside = H::Internal::const_true();
        bool checked = false;
        for (size_t k = 0; k < n.map.size(); ++k) {
          const AxisMap& m = n.map[k];
          H::Expr s = static_cast<int>(m.offset);
          for (size_t j = 0; j < idx.size(); ++j)
            if (m.coef[j] != 0) s = s + static_cast<int>(m.coef[j]) * idx[j];
          if (m.divisor != 1) s = s / static_cast<int>(m.divisor);  // Halide divides by floor
          if (m.modulus > 0) s = s % static_cast<int>(m.modulus);   // and keeps remainders >= 0
          if (!AlwaysInside(m, n.dims, in[k])) {
            checked = true;
            inside = inside && s >= 0 && s < static_cast<int>(in[k]);
            s = H::clamp(s, 0, static_cast<int>(in[k]) - 1);
          }
          at.push_back(s);
        }
        const H::Expr read = arg(0, at);
        f(Args(idx)) = checked ? H::select(inside, read, static_cast<float>(n.value)) : read;
        break;
      }
      case SubOpKind::kReduce: {
        const std::vector<int64_t>& in = g.dims(n.args[0]);
        H::Region extents;  // innermost first
        for (auto it = n.reduce_axes.rbegin(); it != n.reduce_axes.rend(); ++it)
          extents.emplace_back(0, static_cast<int>(in[*it]));
        H::RDom r(extents);
        rdom = r;
        std::vector<H::Expr> at = idx;
        const int count = static_cast<int>(n.reduce_axes.size());
        for (int j = 0; j < count; ++j) at[n.reduce_axes[j]] = r[count - 1 - j];
        const bool sum = n.reduce == ReduceFn::kSum;
        f(Args(idx)) = sum ? H::Expr(0.0f) : H::Expr(-std::numeric_limits<float>::infinity());
        f(Args(idx)) = sum ? f(Args(idx)) + arg(0, at) : H::max(f(Args(idx)), arg(0, at));
        break;
      }
    }
    p.funcs.push_back(f);
    p.rdoms.push_back(rdom);
    if (static_cast<int>(i) == g.output) p.vars = v;
  }
  // The output: a copy of the output node, so that the schedule below owns it.
  H::Func out("out");
  std::vector<H::Expr> idx(p.vars.begin(), p.vars.end());
  out(Args(idx)) = p.funcs[g.output](Args(idx));
  p.out = out;
  FixShape(out.output_buffer(), g.dims(g.output));
  return p;
}

// Our schedule: the output's axes split at the outermost reduced axis (or, without reductions,
// where the inner axes hold kInnerMin elements); the inner ones fused and vectorized, the outer
// ones fused and parallel; each reduction computed at the outer loop, where it is needed. Where
// the reduced axes are not the output's (a reshape or transpose between a reduction and the
// output: ReductionsKeepOutputAxes), the reductions are computed first, whole (compute_root,
// on one thread), and the output loops split by size alone.
void Schedule(const SubGraph& g, Pipeline& p) {
  const std::vector<int64_t>& dims = g.dims(g.output);
  const int rank = static_cast<int>(dims.size());
  const bool axes_kept = ReductionsKeepOutputAxes(g);
  int split = rank;  // axes [split, rank) are inner
  if (axes_kept)
    for (const SubNode& n : g.nodes)
      if (n.kind == SubOpKind::kReduce) split = std::min(split, n.reduce_axes.front());
  const bool at_outer = split < rank;
  if (!at_outer) {
    // Where an operand is reindexed (a per-channel vector broadcast), fused axes make its index
    // a division of the fused one per lane (a gather): only whole vectors of the inner axes are
    // fused (nChw16c's 16 lanes with the width), never a row of 120 channels-last channels.
    // Axes that every reindex reads as they are fuse freely (a shuffle's 7x7 planes: one loop
    // of 49, not seven of 7).
    bool reindexed = false;
    for (const SubNode& n : g.nodes) reindexed |= n.kind == SubOpKind::kReindex;
    const int dense = reindexed ? DenseTrailingAxes(g) : rank;
    int64_t inner = 1;
    while (split > 0 && inner < kInnerMin &&
           (inner == 1 || !reindexed || inner % kVector == 0 || rank - split < dense))
      inner *= dims[--split];
  }
  // Halide's var of row-major axis k is p.vars[k].
  H::VarOrRVar inner_var = p.vars[rank - 1];
  int64_t inner_extent = dims[rank - 1];
  for (int k = rank - 2; k >= split; --k) {
    H::Var fused("i" + std::to_string(k));
    p.out.fuse(inner_var.var, p.vars[k], fused);
    inner_var = fused;
    inner_extent *= dims[k];
  }
  if (inner_extent >= kVector)
    p.out.vectorize(inner_var.var, kVector, H::TailStrategy::GuardWithIf);
  std::optional<H::Var> outer;
  if (split > 0) {
    outer = p.vars[split - 1];
    int64_t outer_extent = dims[split - 1];
    for (int k = split - 2; k >= 0; --k) {
      H::Var fused("o" + std::to_string(k));
      p.out.fuse(*outer, p.vars[k], fused);
      outer = fused;
      outer_extent *= dims[k];
    }
    // Tasks of at least kTaskElements each: a task of Halide's pool costs about a microsecond
    // (on one thread too), as much as a few thousand elements of work.
    // Rounded up to a multiple of 8, so that 1, 2, 4 or 8 threads share them evenly (three
    // tasks on two threads took as long as four).
    int64_t tasks = NumElements(dims) / kTaskElements;
    if (tasks > 1) tasks = (tasks + 7) / 8 * 8;
    tasks = std::min(outer_extent, tasks);
    if (tasks > 1) {
      H::Var task("task"), row("row");
      p.out.split(*outer, task, row, static_cast<int>((outer_extent + tasks - 1) / tasks),
                  H::TailStrategy::GuardWithIf);
      p.out.parallel(task);
      outer = row;
    }
  }
  // Consumers per node, to find the operands of reductions that others read too.
  std::vector<int> uses(g.nodes.size(), 0);
  for (const SubNode& n : g.nodes)
    for (int a : n.args) ++uses[a];
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const SubNode& n = g.nodes[i];
    if (n.kind != SubOpKind::kReduce) continue;
    H::Func& f = p.funcs[i];
    if (at_outer && outer) {
      f.compute_at(p.out, *outer);
    } else {
      f.compute_root();
    }
    // A sum or max along the input's innermost axis: lanes of partial results, combined at the
    // end (Halide's atomic vectorization of an associative update).
    const std::vector<int64_t>& in = g.dims(n.args[0]);
    const int64_t extent = in.back();
    if (n.reduce_axes.back() == static_cast<int>(in.size()) - 1 && extent % kVector == 0)
      f.update().atomic().vectorize((*p.rdoms[i])[0], kVector);
    // The operand, when the output reads it too (softmax's exp): computed once per row, beside
    // the reduction, instead of once for the reduction and again for the output.
    const int a = n.args[0];
    const SubOpKind ak = g.nodes[a].kind;
    if (at_outer && outer && uses[a] > 1 && ak != SubOpKind::kInput && ak != SubOpKind::kReduce) {
      p.funcs[a].compute_at(p.out, *outer);
      if (g.dims(a).back() >= kVector)
        p.funcs[a].vectorize(p.funcs[a].args()[0], kVector, H::TailStrategy::GuardWithIf);
    }
  }
  // A value smaller than the output that only broadcasts read (a row's 1 / sqrt(var + eps), a
  // softmax row's reciprocal sum, a channel's scale): computed once per row beside the reductions
  // (or once, whole, before the loops), not again for every element it is inlined into.
  const int64_t out_elements = NumElements(dims);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const SubNode& n = g.nodes[i];
    if ((n.kind != SubOpKind::kUnary && n.kind != SubOpKind::kBinary &&
         n.kind != SubOpKind::kSelect) ||
        uses[i] == 0 || NumElements(n.dims) >= out_elements)
      continue;
    bool only_broadcasts = true;
    for (const SubNode& c : g.nodes)
      for (int a : c.args)
        if (a == static_cast<int>(i))
          only_broadcasts &= c.kind == SubOpKind::kReindex && IsBroadcast(g, c);
    if (!only_broadcasts) continue;
    if (at_outer && outer)
      p.funcs[i].compute_at(p.out, *outer);
    else
      p.funcs[i].compute_root();
  }
}

H::Target KernelTarget(const std::string& target) {
  return H::Target(target)
      .with_feature(H::Target::NoRuntime)
      .with_feature(H::Target::NoAsserts)
      .with_feature(H::Target::NoBoundsQuery);
}

// A fresh temporary file name for Halide's outputs that we read back.
std::string TempPath(const std::string& what) {
  static std::atomic<int> counter{0};
  return (fs::temp_directory_path() /
          ("verisub_" + what + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++)))
      .string();
}

// The file Halide wrote at `path`, removed once read.
StatusOr<std::string> ReadAndRemove(const std::string& path) {
  StatusOr<std::string> text = base::ReadFile(path);
  std::error_code ec;
  fs::remove(path, ec);
  return text;
}

class HalideCodegen : public Codegen {
 public:
  std::string HostTarget() override { return H::get_host_target().to_string(); }

  Status CompileKernel(const SubGraph& g, const std::string& name, const std::string& object,
                       const std::string& target) override {
    VERISUB_RETURN_IF_ERROR(CheckSubGraph(g));
    try {
      Pipeline p = Build(g);
      Schedule(g, p);
      std::vector<H::Argument> args(p.inputs.begin(), p.inputs.end());
      H::Pipeline(p.out).compile_to_object(object, args, name, KernelTarget(target));
    } catch (const H::Error& e) {
      return InternalError(std::string("Halide: ") + e.what());
    }
    return Status::Ok();
  }

  Status CompileRuntime(const std::string& object, const std::string& target) override {
    try {
      H::compile_standalone_runtime(object, H::Target(target));
    } catch (const H::Error& e) {
      return InternalError(std::string("Halide (runtime): ") + e.what());
    }
    return Status::Ok();
  }

  StatusOr<std::string> Statement(const SubGraph& g, const std::string& target) override {
    VERISUB_RETURN_IF_ERROR(CheckSubGraph(g));
    try {
      Pipeline p = Build(g);
      Schedule(g, p);
      const std::string path = TempPath("stmt");
      std::vector<H::Argument> args(p.inputs.begin(), p.inputs.end());
      H::Pipeline(p.out).compile_to_lowered_stmt(path, args, H::Text, KernelTarget(target));
      return ReadAndRemove(path);
    } catch (const H::Error& e) {
      return InternalError(std::string("Halide: ") + e.what());
    }
  }

  StatusOr<std::string> CudaPtx(const SubGraph& g, const std::string& cuda_target) override {
    VERISUB_RETURN_IF_ERROR(CheckSubGraph(g));
    try {
      const H::Target target(cuda_target);
      if (!target.has_feature(H::Target::CUDA))
        return InvalidArgument("'" + cuda_target + "' is not a CUDA target");
      Pipeline p = Build(g);
      // One thread per output element, blocks of 256; each reduction a kernel of its own, one
      // thread per result.
      auto flat = [](H::Func& f, int rank) {
        H::Var all = f.args()[0];
        for (int k = 1; k < rank; ++k) {
          H::Var fused("f" + std::to_string(k));
          f.fuse(all, f.args()[k], fused);
          all = fused;
        }
        H::Var block("block"), thread("thread");
        f.gpu_tile(all, block, thread, 256, H::TailStrategy::GuardWithIf);
      };
      flat(p.out, static_cast<int>(g.dims(g.output).size()));
      for (size_t i = 0; i < g.nodes.size(); ++i)
        if (g.nodes[i].kind == SubOpKind::kReduce) {
          p.funcs[i].compute_root();
          flat(p.funcs[i], static_cast<int>(g.nodes[i].dims.size()));
          p.funcs[i].update().gpu_single_thread();
        }
      const std::string path = TempPath("ptx") + ".o";
      std::vector<H::Argument> args(p.inputs.begin(), p.inputs.end());
      H::Pipeline(p.out).compile_to_object(path, args, "verisub_ptx", target);
      VERISUB_ASSIGN_OR_RETURN(const std::string obj, ReadAndRemove(path));
      // The device code is embedded in the host object as a string: PTX text starts with its
      // version directive and ends at the string's terminating zero.
      const size_t at = obj.find(".version ");
      if (at == std::string::npos) return InternalError("Halide (CUDA): no PTX in the object");
      size_t begin = obj.rfind('\0', at);
      begin = begin == std::string::npos ? 0 : begin + 1;
      const size_t end = obj.find('\0', at);
      return obj.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    } catch (const H::Error& e) {
      return InternalError(std::string("Halide (CUDA): ") + e.what());
    }
  }
};

}  // namespace
}  // namespace verisub::fusion

extern "C" __attribute__((visibility("default"))) verisub::fusion::Codegen* verisub_make_codegen() {
  return new verisub::fusion::HalideCodegen();
}
