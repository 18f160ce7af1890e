// oneDNN kernels for host values of run-time shapes (dynamic_ops.h).
#include "runtime/dnnl/dynamic_ops.h"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>

#include "onnx/onnx_pb.h"
#include "runtime/canonicalize.h"
#include "runtime/dnnl/vector_math.h"
#include "runtime/large_buffer.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime::dnnl_backend {
namespace {

// The channel block this CPU's convolutions compute in: 16 floats with AVX-512, else 8.
int32_t CpuChannelBlock() {
  static const int32_t block = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx512_core:
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx:
        return 16;
      default:
        return 8;
    }
  }();
  return block;
}

// oneDNN's tag for [N, C, H, W] in channel blocks of `block` (8 or 16), or row-major for 0.
memory::format_tag BlockedTag(int32_t block) {
  using T = memory::format_tag;
  return block == 16 ? T::aBcd16b : block == 8 ? T::aBcd8b : T::abcd;
}

// What a kernel made for each input shape and channel block, nullopt where it has none: the
// entries of the last 64 kept (a detector's batch differs from image to image: not those of every
// image a long-running service has seen). The caller serializes the calls.
template <class Entry>
class ShapeCache {
 public:
  // The entry for `x`, made by `make(x)` at the first sight of its shape (a oneDNN error: none).
  template <class Make>
  std::optional<Entry>& Get(const HostTensor& x, Make make) {
    const std::pair<std::vector<int64_t>, int32_t> key(x.dims, x.channel_block);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      constexpr size_t kMaxShapes = 64;
      if (entries_.size() >= kMaxShapes) entries_.clear();
      std::optional<Entry> e;
      try {
        e = make(x);
      } catch (const dnnl::error&) {
        e.reset();
      }
      it = entries_.emplace(key, std::move(e)).first;
    }
    return it->second;
  }

 private:
  std::map<std::pair<std::vector<int64_t>, int32_t>, std::optional<Entry>> entries_;
};

// The layout of a 4-D float host tensor's elements.
Desc HostDesc(const std::vector<int64_t>& dims, int32_t block) {
  return Desc(dims, memory::data_type::f32, BlockedTag(block));
}

// A MatMul or Gemm whose left operand's rows are known only at run time (a detector's box head
// over the proposals NMS kept, a transformer's tokens) and whose right operand is a constant
// matrix: a oneDNN matmul primitive per row count on weights reordered once into its kernel's
// layout, or one for any row count (a runtime dimension) where oneDNN has no such kernel. On the
// reference kernel, Faster R-CNN's [proposals, 12544] x [12544, 1024] took a second.
class RowsMatmul : public DynamicKernel {
 public:
  // The matmul for node `n`, or nullptr where it does not apply (the reference kernel runs).
  static std::shared_ptr<RowsMatmul> For(KernelBuilder& b,
                                         const std::vector<const HostTensor*>& c) {
    const Node& n = b.node();
    if (n.inputs.size() < 2 || !c[1] || c[1]->elem_type != kFloat || c[1]->dims.size() != 2 || c[0])
      return nullptr;
    const bool gemm = n.op_type == "Gemm";
    KernelContext ctx(*n.onnx, 0, {});
    bool trans_b = false;
    const HostTensor* bias = nullptr;
    if (gemm) {
      if (ctx.AttrInt("transA", 0) != 0 || ctx.AttrFloat("alpha", 1.f) != 1.f) return nullptr;
      trans_b = ctx.AttrInt("transB", 0) != 0;
      if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
        bias = c[2];
        if (!bias || bias->elem_type != kFloat || ctx.AttrFloat("beta", 1.f) != 1.f) return nullptr;
      }
    } else if (n.inputs.size() != 2) {
      return nullptr;
    }
    const HostTensor& w = *c[1];
    const int64_t k = trans_b ? w.dims[1] : w.dims[0], cols = trans_b ? w.dims[0] : w.dims[1];
    if (bias && bias->NumElements() != cols && bias->NumElements() != 1) return nullptr;
    auto m = std::make_shared<RowsMatmul>();
    m->gemm_ = gemm;
    m->k_ = k;
    m->cols_ = cols;
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    const memory::dim rt = DNNL_RUNTIME_DIM_VAL;
    memory::desc a_md({rt, k}, f32, {k, 1}), y_md({rt, cols}, f32, {cols, 1});
    memory::desc w_plain({k, cols}, f32, trans_b ? memory::dims{1, k} : memory::dims{cols, 1});
    memory::desc b_md({1, cols}, f32, tag::ab);
    if (bias) {
      const std::vector<float> values =
          bias->NumElements() == 1 ? std::vector<float>(cols, bias->f32[0]) : bias->f32.Floats();
      m->bias_ = b.ConstantMemory(values, b_md, b_md);
    }
    // The layout of oneDNN's kernel for a row count fixed in the primitive (brgemm's column
    // blocks, BA16a64b with AVX-512), where it has one: see Run.
    try {
      const memory::desc w_any({k, cols}, f32, tag::any);
      dnnl::matmul::primitive_desc one(m->ProductDesc(1, w_any), b.engine());
      if (!IsReferenceImpl(one)) m->fixed_layout_ = one.weights_desc();
    } catch (const dnnl::error&) {
    }
    std::optional<dnnl::matmul::primitive_desc> pd;
    for (bool any : {true, false}) {
      memory::desc w_md = any ? memory::desc({k, cols}, f32, tag::any) : w_plain;
      try {
        auto desc = bias ? dnnl::matmul::desc(a_md, w_md, b_md, y_md)
                         : dnnl::matmul::desc(a_md, w_md, y_md);
        pd.emplace(desc, b.engine());
        break;
      } catch (const dnnl::error&) {
      }
    }
    if (!pd) return nullptr;
    m->prim_ = dnnl::matmul(*pd);
    m->weights_ = b.ConstantMemory(w.f32, w_plain, pd->weights_desc());
    if (m->fixed_layout_) m->weights_buffer_ = b.ReleaseLastConstant();  // see Run
    return m;
  }

  // The product for left operand `a`; nullopt where its shape does not fit (then the reference).
  std::optional<HostTensor> Run(RunState& st, const HostTensor& a) override {
    if (a.elem_type != kFloat || a.dims.size() < 2 || a.dims.back() != k_ ||
        (gemm_ && a.dims.size() != 2))
      return std::nullopt;
    const int64_t rows = a.NumElements() / k_;
    HostTensor y;
    y.dims = a.dims;
    y.dims.back() = cols_;
    y.f32.resize(static_cast<size_t>(rows * cols_));
    if (rows == 0) return y;
    // A decoder's steps are products of a few rows (its batch) by weights streamed from memory,
    // where oneDNN's gemm for a run-time row count, on row-major weights, is slow (GPT-2's
    // 3072x768 projection at one row: 0.29 ms against 0.22 in brgemm's layout, one thread);
    // an encoder's products of tens of rows run faster on it (BERT's 768x3072 at 77 rows: 1.55
    // against 1.73 ms in chunks of 16 rows, each streaming the weights again). So the weights
    // move into the fixed kernel's layout once a product has run on a few rows three times;
    // from then on up to 16 rows run a primitive made for the count (at its first run, kept),
    // more in chunks of 16 (the last one padded): no new length makes new kernels.
    memory weights;
    bool fixed = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!fixed_weights_ && fixed_layout_ && rows <= kChunk && ++few_rows_runs_ >= 3) {
        try {
          dnnl::matmul::primitive_desc chunk(ProductDesc(kChunk, *fixed_layout_), *st.engine);
          if (!IsReferenceImpl(chunk)) {
            // On huge pages, as the model's other weights (large_buffer.h): on 4 KiB pages
            // GPT-2's decoding steps ran 7% slower.
            moved_buffer_ = NewLargeBuffer(fixed_layout_->get_size());
            memory moved(*fixed_layout_, *st.engine, moved_buffer_.get());
            dnnl::reorder(weights_, moved).execute(*st.stream, weights_, moved);
            st.stream->wait();
            chunk_ = dnnl::matmul(chunk);
            by_rows_.emplace(kChunk, chunk_);
            fixed_weights_ = moved;
            weights_ = memory();  // the row-major copy, freed unless another model shares it
            weights_buffer_.reset();
          }
        } catch (const dnnl::error&) {
        }
        if (!fixed_weights_) fixed_layout_.reset();  // not again
      }
      fixed = fixed_weights_.has_value();
      weights = fixed ? *fixed_weights_ : weights_;
    }
    // `n` rows from `in` into `out`.
    auto product = [&](const dnnl::matmul& prim, int64_t n, const float* in, float* out) {
      const auto f32 = memory::data_type::f32;
      memory src(memory::desc({n, k_}, f32, {k_, 1}), *st.engine, const_cast<float*>(in));
      memory dst(memory::desc({n, cols_}, f32, {cols_, 1}), *st.engine, out);
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
      if (bias_) args[DNNL_ARG_BIAS] = bias_;
      prim.execute(*st.stream, args);
    };
    const float* in = a.f32.data();
    float* out = y.f32.data();
    std::optional<dnnl::matmul> exact;
    if (!fixed) {
      product(prim_, rows, in, out);
    } else if (rows <= kChunk && (exact = ForRows(rows, *st.engine))) {
      product(*exact, rows, in, out);
    } else {
      const int64_t full = rows / kChunk * kChunk;
      for (int64_t r = 0; r < full; r += kChunk)
        product(chunk_, kChunk, in + r * k_, out + r * cols_);
      if (const int64_t tail = rows - full; tail > 0) {
        // Through a chunk of its own, padded with the rows of earlier tails or zeros (their
        // products dropped).
        std::lock_guard<std::mutex> lock(mu_);
        pad_in_.resize(static_cast<size_t>(kChunk * k_));
        pad_out_.resize(static_cast<size_t>(kChunk * cols_));
        std::copy(in + full * k_, in + rows * k_, pad_in_.begin());
        product(chunk_, kChunk, pad_in_.data(), pad_out_.data());
        st.stream->wait();
        std::copy(pad_out_.begin(), pad_out_.begin() + tail * cols_, out + full * cols_);
      }
    }
    st.stream->wait();
    return y;
  }

 private:
  // The product of `rows` rows (DNNL_RUNTIME_DIM_VAL: any) by weights of layout `w`.
  dnnl::matmul::desc ProductDesc(memory::dim rows, const memory::desc& w) const {
    const auto f32 = memory::data_type::f32;
    const memory::dim ld_a = k_, ld_y = cols_;
    memory::desc a_md({rows, k_}, f32, {ld_a, 1}), y_md({rows, cols_}, f32, {ld_y, 1});
    return bias_ ? dnnl::matmul::desc(a_md, w, bias_.get_desc(), y_md)
                 : dnnl::matmul::desc(a_md, w, y_md);
  }

  // The primitive for `rows` rows (at most kChunk) on the fixed weights' layout, made at the
  // first run of that count and kept; nullopt where oneDNN has none (then chunks run).
  std::optional<dnnl::matmul> ForRows(int64_t rows, const dnnl::engine& eng) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_rows_.find(rows);
    if (it == by_rows_.end()) {
      std::optional<dnnl::matmul> prim;
      try {
        dnnl::matmul::primitive_desc pd(ProductDesc(rows, fixed_weights_->get_desc()), eng);
        if (!IsReferenceImpl(pd)) prim.emplace(pd);
      } catch (const dnnl::error&) {
      }
      it = by_rows_.emplace(rows, std::move(prim)).first;
    }
    return it->second;
  }

  static constexpr int64_t kChunk = 16;
  bool gemm_ = false;
  int64_t k_ = 0, cols_ = 0;
  dnnl::matmul prim_;  // for any row count, on weights_
  memory weights_, bias_;
  std::shared_ptr<void> weights_buffer_;      // weights_' elements, where they may move
  std::optional<memory::desc> fixed_layout_;  // brgemm's layout for the weights
  int few_rows_runs_ = 0;                     // runs of at most kChunk rows before the move
  std::optional<memory> fixed_weights_;       // the weights moved into fixed_layout_
  std::shared_ptr<void> moved_buffer_;        // fixed_weights_' elements
  dnnl::matmul chunk_;                        // kChunk rows, on fixed_weights_
  std::mutex mu_;
  std::map<int64_t, std::optional<dnnl::matmul>> by_rows_;  // up to kChunk rows
  std::vector<float> pad_in_, pad_out_;  // the last chunk's rows, padded (see Run)
};

// How sgemm reads a matrix whose R rows and C columns lie at strides sr and sc: as stored ('N')
// with leading dimension sr where the columns are contiguous, transposed ('T') with leading
// dimension sc where the rows are; nullopt where neither is.
std::optional<std::pair<char, int64_t>> SgemmLayout(int64_t rows, int64_t cols, int64_t sr,
                                                    int64_t sc) {
  const int64_t r = std::max<int64_t>(rows, 1), c = std::max<int64_t>(cols, 1);
  if (cols == 1 || sc == 1) {
    const int64_t ld = rows == 1 ? c : sr;
    if (ld >= c) return std::make_pair('N', ld);
  }
  if (rows == 1 || sr == 1) {
    const int64_t ld = cols == 1 ? r : sc;
    if (ld >= r) return std::make_pair('T', ld);
  }
  return std::nullopt;
}

// A MatMul of two computed float values of run-time shapes (attention's scores q k^T and their
// weighted sum of v, over a decoder's growing past or a sequence of any length): the batch
// dimensions, equal on both sides, one oneDNN sgemm each (jit, no primitive to make per shape;
// a matmul primitive of run-time strides is oneDNN's reference loop, 30x slower), or a matrix on
// the right shared by every batch, one sgemm over all the rows. On the reference kernel, a
// double-precision loop, GPT-2's 12 heads over 128 past tokens took 0.1 ms per product.
// The Einsums FoldRunTimeTransposesIntoMatMuls makes of products around transposes (attention's
// heads): one sgemm per batch index, each operand and the result read and written by strides in
// the layout its term gives (q k^T reads the keys transposed; the context is written straight
// into [batch, tokens, heads, features]).
class ValuesMatmul : public DynamicKernel {
 public:
  static std::shared_ptr<DynamicKernel> For(const Node& n,
                                            const std::vector<const HostTensor*>& constants) {
    if (n.inputs.size() != 2 || constants.size() != 2 || constants[0] || constants[1])
      return nullptr;
    auto k = std::make_shared<ValuesMatmul>();
    if (n.op_type == "Einsum") {
      k->product_ = ParseEinsumProduct(KernelContext(*n.onnx, 0, {}).AttrString("equation", ""));
      if (!k->product_) return nullptr;
    } else if (n.op_type != "MatMul") {
      return nullptr;
    }
    return k;
  }

  std::optional<HostTensor> Run(RunState&, const HostTensor&) override { return std::nullopt; }

  std::optional<HostTensor> RunAll(RunState&, const std::vector<const HostTensor*>& in) override {
    if (in.size() != 2 || !in[0] || !in[1]) return std::nullopt;
    const HostTensor &a = *in[0], &b = *in[1];
    if (a.elem_type != kFloat || b.elem_type != kFloat) return std::nullopt;
    if (product_) return Product(a, b);
    if (a.dims.size() < 2 || b.dims.size() < 2) return std::nullopt;
    const size_t ra = a.dims.size(), rb = b.dims.size();
    const int64_t m = a.dims[ra - 2], k = a.dims[ra - 1], n = b.dims[rb - 1];
    if (b.dims[rb - 2] != k) return std::nullopt;
    const std::vector<int64_t> batch_a(a.dims.begin(), a.dims.end() - 2);
    const std::vector<int64_t> batch_b(b.dims.begin(), b.dims.end() - 2);
    const bool shared_b = CountElements(batch_b) == 1 && rb <= ra;
    if (!shared_b && batch_a != batch_b) return std::nullopt;
    const int64_t batch = CountElements(batch_a);
    HostTensor y;
    y.dims = batch_a;
    y.dims.push_back(m);
    y.dims.push_back(n);
    y.f32.resize(static_cast<size_t>(batch * m * n));
    if (y.f32.empty()) return y;
    const float* pa = a.f32.data();
    const float* pb = b.f32.data();
    float* py = y.f32.data();
    if (k == 0) {  // an empty sum
      std::fill(py, py + y.f32.size(), 0.f);
    } else if (shared_b) {  // one product of all a's rows
      if (dnnl::sgemm('N', 'N', batch * m, n, k, 1.f, pa, k, pb, n, 0.f, py, n) !=
          dnnl::status::success)
        return std::nullopt;
    } else {
      for (int64_t i = 0; i < batch; ++i)
        if (dnnl::sgemm('N', 'N', m, n, k, 1.f, pa + i * m * k, k, pb + i * k * n, n, 0.f,
                        py + i * m * n, n) != dnnl::status::success)
          return std::nullopt;
    }
    return y;
  }

 private:
  // The Einsum's product; nullopt where its operands' extents disagree (a broadcast) or a layout
  // is none sgemm reads: the reference kernel runs.
  std::optional<HostTensor> Product(const HostTensor& a, const HostTensor& b) const {
    const EinsumProduct& p = *product_;
    if (a.dims.size() != p.a.size() || b.dims.size() != p.b.size()) return std::nullopt;
    std::array<int64_t, 26> extent;
    extent.fill(-1);
    auto bind = [&](const std::string& term, const std::vector<int64_t>& dims) {
      for (size_t d = 0; d < term.size(); ++d) {
        int64_t& e = extent[term[d] - 'a'];
        if (e >= 0 && e != dims[d]) return false;
        e = dims[d];
      }
      return true;
    };
    if (!bind(p.a, a.dims) || !bind(p.b, b.dims)) return std::nullopt;
    HostTensor y;
    for (char c : p.y) y.dims.push_back(extent[c - 'a']);
    auto strides = [](const std::string& term, const std::vector<int64_t>& dims) {
      std::array<int64_t, 26> s{};
      int64_t step = 1;
      for (size_t d = term.size(); d-- > 0;) {
        s[term[d] - 'a'] = step;
        step *= dims[d];
      }
      return s;
    };
    const auto sa = strides(p.a, a.dims), sb = strides(p.b, b.dims), sy = strides(p.y, y.dims);
    const int m = p.m - 'a', k = p.k - 'a', n = p.n - 'a';
    const int64_t rows = extent[m], inner = extent[k], cols = extent[n];
    const auto la = SgemmLayout(rows, inner, sa[m], sa[k]);
    const auto lb = SgemmLayout(inner, cols, sb[k], sb[n]);
    const auto ly = SgemmLayout(rows, cols, sy[m], sy[n]);
    if (!la || !lb || !ly || ly->first != 'N') return std::nullopt;
    y.f32.resize(static_cast<size_t>(CountElements(y.dims)));
    if (y.f32.empty()) return y;
    float* py = y.f32.data();
    if (inner == 0) {
      std::fill(py, py + y.f32.size(), 0.f);
      return y;
    }
    // Every index of the batch letters: the three offsets.
    std::vector<int64_t> idx(p.batch.size(), 0);
    int64_t oa = 0, ob = 0, oy = 0;
    for (;;) {
      if (dnnl::sgemm(la->first, lb->first, rows, cols, inner, 1.f, a.f32.data() + oa, la->second,
                      b.f32.data() + ob, lb->second, 0.f, py + oy,
                      ly->second) != dnnl::status::success)
        return std::nullopt;
      size_t d = p.batch.size();
      for (; d-- > 0;) {
        const int c = p.batch[d] - 'a';
        oa += sa[c], ob += sb[c], oy += sy[c];
        if (++idx[d] < extent[c]) break;
        oa -= sa[c] * extent[c], ob -= sb[c] * extent[c], oy -= sy[c] * extent[c];
        idx[d] = 0;
      }
      if (d == static_cast<size_t>(-1)) return y;
    }
  }

  std::optional<EinsumProduct> product_;
};

// Add, Sub, Mul and Div of float values of run-time shape whose first operand (of Add and Mul
// either) is read only here: computed over it in place (a bias or a residual added to a matmul's
// output, a scale), by strides in float; no fresh tensor per run (BERT over a run-time length:
// 110 adds of up to 1.5 MB each). RunInPlaceAll gets that operand first. Elsewhere the
// reference kernel runs.
class DynamicArithmetic : public DynamicKernel {
 public:
  static std::shared_ptr<DynamicKernel> For(const Node& n,
                                            const std::vector<const HostTensor*>& constants) {
    const bool commutes = n.op_type == "Add" || n.op_type == "Mul";
    if ((!commutes && n.op_type != "Sub" && n.op_type != "Div") || n.inputs.size() != 2 ||
        constants.size() != 2 || (constants[0] && (!commutes || constants[1])))
      return nullptr;
    auto k = std::make_shared<DynamicArithmetic>();
    k->op_ = n.op_type;
    return k;
  }

  std::optional<HostTensor> Run(RunState&, const HostTensor&) override { return std::nullopt; }

  // Over operands in channel blocks where both lie in the same blocks (a residual added to a
  // convolution's output): element by element as they lie.
  bool TakesChannelBlocks() const override { return true; }

  bool RunInPlaceAll(RunState&, HostTensor* x, const std::vector<const HostTensor*>& in) override {
    if (in.size() != 2 || !in[1]) return false;
    if ((x->channel_block || in[1]->channel_block) &&
        (x->channel_block != in[1]->channel_block || x->dims != in[1]->dims || !blocked_output_))
      return false;
    auto dims = BroadcastDims(x->dims, in[1]->dims);
    if (!dims.ok() || *dims != x->dims) return false;
    return FloatArithmeticInto(op_, x->dims, *x, *in[1], x->f32.data());
  }

 private:
  std::string op_;
};

// Softmax and LayerNormalization of a float value of run-time shape: oneDNN's jit primitive over
// the value viewed as [rows, what is normalized] (made per run; oneDNN's primitive cache keeps
// those of the shapes seen). Softmax along the last axis (opset 13 on; before, the flattened
// trailing axes); a layer normalization over its trailing axes with constant scale and bias. On
// the reference kernels, in double, BERT's 12 softmaxes over 128x128 scores of 12 heads took 34
// ms a run and its 25 layer normalizations 10; here 2 and 1.
class DynamicNorm : public DynamicKernel {
 public:
  static std::shared_ptr<DynamicKernel> For(KernelBuilder& b,
                                            const std::vector<const HostTensor*>& c) {
    const Node& n = b.node();
    const bool softmax = n.op_type == "Softmax";
    if ((!softmax && n.op_type != "LayerNormalization") || c.empty() || c[0]) return nullptr;
    for (size_t k = 1; k < n.outputs.size(); ++k)
      if (n.outputs[k] != kNoValue) return nullptr;  // a layer norm's mean and deviation
    KernelContext ctx(*n.onnx, b.Opset(), {});
    auto k = std::make_shared<DynamicNorm>();
    k->softmax_ = softmax;
    if (softmax) {
      k->flatten_ = b.Opset() < 13;
      k->axis_ = ctx.AttrInt("axis", k->flatten_ ? 1 : -1);
      return k;
    }
    if (ctx.AttrInt("stash_type", 1) != 1) return nullptr;
    k->axis_ = ctx.AttrInt("axis", -1);
    k->epsilon_ = ctx.AttrFloat("epsilon", 1e-5f);
    auto floats = [](const HostTensor* t) -> std::optional<std::vector<float>> {
      if (!t || t->elem_type != kFloat) return std::nullopt;
      return t->f32.Floats();
    };
    auto scale = floats(c.size() > 1 ? c[1] : nullptr);
    if (!scale) return nullptr;
    k->scale_ = std::move(*scale);
    if (c.size() > 2 && n.inputs[2] != kNoValue) {
      auto shift = floats(c[2]);
      if (!shift || shift->size() != k->scale_.size()) return nullptr;
      k->shift_ = std::move(*shift);
    } else {
      k->shift_.assign(k->scale_.size(), 0.f);
    }
    return k;
  }

  std::optional<HostTensor> Run(RunState& st, const HostTensor& x) override {
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    if (x.elem_type != kFloat || rank == 0) return std::nullopt;
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank || (softmax_ && !flatten_ && axis != rank - 1))
      return std::nullopt;
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : cols) *= x.dims[d];
    if (!softmax_ && cols != static_cast<int64_t>(scale_.size())) return std::nullopt;
    HostTensor y;
    y.dims = x.dims;
    y.f32.resize(static_cast<size_t>(rows * cols));
    if (rows * cols == 0) return y;
    if (softmax_ && SoftmaxInHostPass()) {
      SoftmaxRowsInChunks(x.f32.data(), y.f32.data(), rows, cols);
      return y;
    }
    const Desc md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
    memory src(md, *st.engine, const_cast<float*>(x.f32.data()));
    memory dst(md, *st.engine, y.f32.data());
    if (softmax_) {
      dnnl::softmax_forward::primitive_desc pd(
          dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), *st.engine);
      dnnl::softmax_forward(pd).execute(*st.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    } else {
      dnnl::layer_normalization_forward::primitive_desc pd(
          dnnl::layer_normalization_forward::desc(
              dnnl::prop_kind::forward_inference, md, epsilon_,
              dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift),
          *st.engine);
      const Desc c({cols}, memory::data_type::f32, memory::format_tag::a);
      memory scale(c, *st.engine, const_cast<float*>(scale_.data()));
      memory shift(c, *st.engine, const_cast<float*>(shift_.data()));
      dnnl::layer_normalization_forward(pd).execute(*st.stream, {{DNNL_ARG_SRC, src},
                                                                 {DNNL_ARG_SCALE, scale},
                                                                 {DNNL_ARG_SHIFT, shift},
                                                                 {DNNL_ARG_DST, dst}});
    }
    st.stream->wait();
    return y;
  }

 private:
  bool softmax_ = false, flatten_ = false;
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
  std::vector<float> scale_, shift_;
};

// A window operator (Conv, ConvTranspose) over 4-D float tensors whose batch (or any input
// dimension) is known only at run time: per input shape one primitive (oneDNN's preferred
// layouts), the constant weights reordered once per weights layout, the input and output
// reordered from and to plain row-major.
class DynamicWindow : public DynamicKernel {
 public:
  bool TakesChannelBlocks() const override { return true; }

  std::optional<HostTensor> Run(RunState& st, const HostTensor& x) override {
    if (x.elem_type != kFloat || x.dims.size() != 4) return std::nullopt;
    // One run at a time: the entry's buffers in the primitive's layouts are reused.
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<Entry>& made = by_shape_.Get(x, [&](const HostTensor& in) {
      return Make(in.dims, in.channel_block, blocked_output_ ? CpuChannelBlock() : 0, *st.engine);
    });
    if (!made) return std::nullopt;
    Entry& e = *made;
    HostTensor y;
    y.dims = e.out;
    y.channel_block = e.out_block;
    y.f32.resize(static_cast<size_t>(CountElements(e.out)));
    if (y.f32.empty()) return y;
    dnnl::stream& s = *st.stream;
    memory src(HostDesc(x.dims, x.channel_block), *st.engine, const_cast<float*>(x.f32.data()));
    memory dst(HostDesc(e.out, e.out_block), *st.engine, y.f32.data());
    memory src_in = src, dst_out = dst;
    if (e.pd_src != src.get_desc()) {
      if (!e.src_buffer) e.src_buffer = memory(e.pd_src, *st.engine);
      src_in = *e.src_buffer;
      dnnl::reorder(src, src_in).execute(s, src, src_in);
    }
    if (e.pd_dst != dst.get_desc()) {
      if (!e.dst_buffer) e.dst_buffer = memory(e.pd_dst, *st.engine);
      dst_out = *e.dst_buffer;
    }
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src_in}, {DNNL_ARG_WEIGHTS, e.weights}, {DNNL_ARG_DST, dst_out}};
    if (bias_) args[DNNL_ARG_BIAS] = *bias_;
    e.prim.execute(s, args);
    if (dst_out != dst) dnnl::reorder(dst_out, dst).execute(s, dst_out, dst);
    s.wait();
    return y;
  }

 protected:
  struct Entry {
    dnnl::primitive prim;
    Desc pd_src, pd_dst;
    memory weights;
    std::vector<int64_t> out;
    // The input and output in the primitive's layouts where those are not the host tensors':
    // made at the first run of the shape and kept (made per run, ResNet-50 over a run-time batch
    // spent half its run in the page faults of fresh buffers: 99 ms against 52).
    std::optional<memory> src_buffer, dst_buffer;
    int32_t out_block = 0;  // the output's channel blocks (HostTensor::channel_block)
  };
  // The primitive for input dims `xd` in channel blocks of `in_block` (0: row-major), its output
  // in blocks of `out_block` where that divides its channels (0: row-major); nullopt where the
  // operator's attributes do not fit them.
  virtual std::optional<Entry> Make(const std::vector<int64_t>& xd, int32_t in_block,
                                    int32_t out_block, const dnnl::engine& eng) = 0;

  // The constant weights in `layout`, reordered from `plain` once per layout.
  memory WeightsIn(const Desc& layout, const Desc& plain, const dnnl::engine& eng) {
    for (const auto& [desc, mem] : weights_)
      if (desc == layout) return mem;
    dnnl::stream s(eng);
    memory src(plain, eng, const_cast<float*>(w_->f32.data()));
    memory dst(layout, eng);
    dnnl::reorder(src, dst).execute(s, src, dst);
    s.wait();
    weights_.emplace_back(layout, dst);
    return dst;
  }

  // A K for node `n` with constant float 4-D weights (input 1) and bias (input 2, optional) over a
  // run-time input 0, or nullptr.
  template <class K>
  static std::shared_ptr<K> Init(KernelBuilder& b, const std::vector<const HostTensor*>& c) {
    const Node& n = b.node();
    const HostTensor* w = c.size() > 1 ? c[1] : nullptr;
    if (!w || w->elem_type != kFloat || w->dims.size() != 4 || c[0]) return nullptr;
    const HostTensor* bias = c.size() > 2 ? c[2] : nullptr;
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue && (!bias || bias->elem_type != kFloat))
      return nullptr;
    auto k = std::make_shared<K>();
    k->node_ = n.onnx;
    k->opset_ = b.Opset();
    k->w_ = w;
    if (bias) {
      const Desc md({bias->NumElements()}, memory::data_type::f32, memory::format_tag::a);
      k->bias_ = b.ConstantMemory(bias->f32, md, md);
    }
    return k;
  }

  std::shared_ptr<const onnx::NodeProto> node_;
  int64_t opset_ = 0;
  const HostTensor* w_ = nullptr;  // the graph's constant, alive as long as the model
  std::optional<memory> bias_;

 private:
  std::mutex mu_;
  ShapeCache<Entry> by_shape_;
  std::vector<std::pair<Desc, memory>> weights_;
};

// Conv (2-D, explicit pads or VALID).
class DynamicConv : public DynamicWindow {
 public:
  static std::shared_ptr<DynamicKernel> For(KernelBuilder& b,
                                            const std::vector<const HostTensor*>& c) {
    const std::string pad =
        KernelContext(*b.node().onnx, b.Opset(), {}).AttrString("auto_pad", "NOTSET");
    if (pad != "NOTSET" && pad != "VALID") return nullptr;
    return Init<DynamicConv>(b, c);
  }

 protected:
  std::optional<Entry> Make(const std::vector<int64_t>& xd, int32_t in_block, int32_t out_block,
                            const dnnl::engine& eng) override {
    KernelContext ctx(*node_, opset_, {});
    const int64_t groups = ctx.AttrInt("group", 1);
    const std::vector<int64_t>& wd = w_->dims;
    if (groups < 1 || xd[1] != wd[1] * groups || wd[0] % groups != 0) return std::nullopt;
    std::vector<int64_t> strides = ctx.AttrInts("strides"), dil = ctx.AttrInts("dilations"),
                         pads = ctx.AttrInts("pads");
    if (strides.empty()) strides = {1, 1};
    if (dil.empty()) dil = {1, 1};
    if (pads.empty() || ctx.AttrString("auto_pad", "NOTSET") == "VALID") pads = {0, 0, 0, 0};
    if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) return std::nullopt;
    std::vector<int64_t> out = {xd[0], wd[0], 0, 0};
    memory::dims dnnl_dil(2);
    for (int d = 0; d < 2; ++d) {
      if (strides[d] < 1 || dil[d] < 1 || pads[d] < 0 || pads[d + 2] < 0) return std::nullopt;
      const int64_t span = (wd[2 + d] - 1) * dil[d] + 1;
      const int64_t padded = xd[2 + d] + pads[d] + pads[d + 2];
      if (padded < span) return std::nullopt;
      out[2 + d] = (padded - span) / strides[d] + 1;
      dnnl_dil[d] = dil[d] - 1;
    }
    const auto f32 = memory::data_type::f32;
    using T = memory::format_tag;
    std::vector<int64_t> wdims = wd;
    Desc w_plain(wd, f32, T::abcd);
    if (groups > 1) {
      wdims = {groups, wd[0] / groups, wd[1], wd[2], wd[3]};
      w_plain = Desc(wdims, f32, T::abcde);
    }
    if (out_block > 0 && out[1] % out_block != 0) out_block = 0;
    // A pointwise convolution between row-major tensors is a matrix product per image, without
    // the reorders into and out of channel blocks (Mask R-CNN's 256 -> 91 logits over 100 masks
    // of 28x28: 17 ms plain, 66 ms blocked); wider windows run faster blocked (its 3x3 head
    // convolutions: 93 against 123 ms), and so do convolutions between blocked neighbours.
    const bool pointwise = wd[2] == 1 && wd[3] == 1 && strides == std::vector<int64_t>{1, 1} &&
                           pads == std::vector<int64_t>{0, 0, 0, 0};
    const T free = pointwise ? T::abcd : T::any;
    const int32_t block = CpuChannelBlock();
    // The layouts tried, in order: the neighbours' own; channel blocks both sides (a row-major
    // input reordered, where its channels fill blocks); whatever oneDNN prefers.
    std::vector<std::pair<T, T>> layouts = {
        {in_block ? BlockedTag(in_block) : free, out_block ? BlockedTag(out_block) : free}};
    if (xd[1] % block == 0 && out[1] % block == 0)
      layouts.emplace_back(BlockedTag(block), BlockedTag(block));
    layouts.emplace_back(T::any, T::any);
    const Desc w_any(wdims, f32, T::any);
    const memory::dims pb = {pads[0], pads[1]}, pe = {pads[2], pads[3]};
    auto desc = [&](dnnl::algorithm alg, T src_tag, T dst_tag) {
      const auto fwd = dnnl::prop_kind::forward_inference;
      const Desc src(xd, f32, src_tag), dst(out, f32, dst_tag);
      return bias_ ? dnnl::convolution_forward::desc(fwd, alg, src, w_any, bias_->get_desc(), dst,
                                                     strides, dnnl_dil, pb, pe)
                   : dnnl::convolution_forward::desc(fwd, alg, src, w_any, dst, strides, dnnl_dil,
                                                     pb, pe);
    };
    // A 3x3 window of stride 1 over 64 channels or more runs Winograd's F(2x2, 3x3) where this CPU
    // has it, as the static path measures it faster on such layers (ResNet-50 over a run-time
    // batch: 40.2 -> 36.8 ms at batch 1, 153.7 -> 142.8 at 4, one thread); no timing per shape,
    // so the choice, and the outputs, do not depend on the moment.
    const bool winograd = groups == 1 && wd[0] >= 64 && wd[1] >= 64 && wd[2] == 3 && wd[3] == 3 &&
                          strides == std::vector<int64_t>{1, 1} &&
                          dil == std::vector<int64_t>{1, 1};
    std::vector<dnnl::algorithm> algorithms = {dnnl::algorithm::convolution_direct};
    if (winograd) algorithms.insert(algorithms.begin(), dnnl::algorithm::convolution_winograd);
    // The first of those with a kernel other than oneDNN's reference loop; else the last made.
    std::optional<dnnl::convolution_forward::primitive_desc> pd;
    for (const auto& [src_tag, dst_tag] : layouts) {
      for (dnnl::algorithm alg : algorithms) {
        try {
          pd.emplace(desc(alg, src_tag, dst_tag), eng);
        } catch (const dnnl::error&) {
          continue;  // no kernel for these layouts or this algorithm
        }
        if (!IsReferenceImpl(*pd)) break;
      }
      if (pd && !IsReferenceImpl(*pd)) break;
    }
    if (!pd) return std::nullopt;
    Entry e{dnnl::convolution_forward(*pd),
            pd->src_desc(),
            pd->dst_desc(),
            WeightsIn(pd->weights_desc(), w_plain, eng),
            out,
            std::nullopt,
            std::nullopt};
    e.out_block = out_block;
    return e;
  }
};

// ConvTranspose (2-D): the geometry as the reference kernel plans it.
class DynamicConvTranspose : public DynamicWindow {
 public:
  static std::shared_ptr<DynamicKernel> For(KernelBuilder& b,
                                            const std::vector<const HostTensor*>& c) {
    return Init<DynamicConvTranspose>(b, c);
  }

 protected:
  // Always a row-major output; an input in channel blocks is reordered.
  std::optional<Entry> Make(const std::vector<int64_t>& xd, int32_t, int32_t,
                            const dnnl::engine& eng) override {
    KernelContext ctx(*node_, opset_, {});
    auto geometry = PlanConvTranspose(ctx, xd, w_->dims);
    if (!geometry.ok()) return std::nullopt;
    const ConvTransposeGeometry& g = *geometry;
    for (size_t d = 0; d < g.out.size(); ++d)
      if (g.pad_begin[d] < 0 || g.pad_end[d] < 0) return std::nullopt;
    const int64_t m = g.out_channels, groups = g.group;
    if (bias_ && bias_->get_desc().dims()[0] != m) return std::nullopt;
    std::vector<int64_t> out = {xd[0], m, g.out[0], g.out[1]};
    // ONNX's weights [G x I/G, O/G, kh, kw] are oneDNN's [G,] O/G, I/G, kh, kw with the two
    // channel strides swapped.
    const int64_t og = m / groups, ig = xd[1] / groups, kk = g.kernel[0] * g.kernel[1];
    std::vector<int64_t> wdims = {og, ig, g.kernel[0], g.kernel[1]};
    std::vector<int64_t> wstrides = {kk, og * kk, g.kernel[1], 1};
    if (groups > 1) {
      wdims.insert(wdims.begin(), groups);
      wstrides.insert(wstrides.begin(), ig * og * kk);
    }
    const auto f32 = memory::data_type::f32;
    using T = memory::format_tag;
    Desc w_plain(wdims, f32, wstrides);
    // Plain activations: Mask R-CNN's 2x2 stride-2 upsampling of 100 masks ran in 122 ms plain
    // against 173 ms in channel blocks with the reorders.
    Desc src_any(xd, f32, T::abcd), dst_any(out, f32, T::abcd), w_any(wdims, f32, T::any);
    memory::dims dil;
    for (int64_t d : g.dilations) dil.push_back(d - 1);
    auto desc = bias_
                    ? dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::deconvolution_direct,
                                                        src_any, w_any, bias_->get_desc(), dst_any,
                                                        g.strides, dil, g.pad_begin, g.pad_end)
                    : dnnl::deconvolution_forward::desc(
                          dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                          src_any, w_any, dst_any, g.strides, dil, g.pad_begin, g.pad_end);
    dnnl::deconvolution_forward::primitive_desc pd(desc, eng);
    return Entry{dnnl::deconvolution_forward(pd),
                 pd.src_desc(),
                 pd.dst_desc(),
                 WeightsIn(pd.weights_desc(), w_plain, eng),
                 out,
                 std::nullopt,
                 std::nullopt};
  }
};

// A ConvTranspose whose windows tile its output (kernel = stride, no padding, dilation or
// groups: the 2x2 stride-2 upsampling of mask heads and UNets) over a run-time batch: one
// matrix product per image, Z = W^T [Cout*kh*kw, Cin] x X [Cin, H*W] (a batched oneDNN matmul
// with the weights as a broadcast left operand), each of Z's rows then written to its phase of
// the output with the bias. Mask R-CNN's over 100 masks of 256x14x14: 122 ms as oneDNN's
// deconvolution. Where oneDNN refuses the product, the deconvolution runs.
class DynamicPatchDeconv : public DynamicKernel {
 public:
  static std::shared_ptr<DynamicKernel> For(KernelBuilder& b,
                                            const std::vector<const HostTensor*>& c) {
    std::shared_ptr<DynamicKernel> general = DynamicConvTranspose::For(b, c);
    if (!general) return nullptr;
    const HostTensor& w = *c[1];
    KernelContext ctx(*b.node().onnx, b.Opset(), {});
    auto ones = [](const std::vector<int64_t>& v) {
      return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 1; });
    };
    auto zeros = [](const std::vector<int64_t>& v) {
      return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 0; });
    };
    const std::vector<int64_t> strides = ctx.AttrInts("strides");
    if (ctx.AttrInt("group", 1) != 1 || !ones(ctx.AttrInts("dilations")) ||
        !zeros(ctx.AttrInts("pads")) || !zeros(ctx.AttrInts("output_padding")) ||
        ctx.FindAttr("output_shape") || ctx.AttrString("auto_pad", "NOTSET") != "NOTSET" ||
        strides != std::vector<int64_t>{w.dims[2], w.dims[3]})
      return general;
    auto k = std::make_shared<DynamicPatchDeconv>();
    k->general_ = std::move(general);
    k->cin_ = w.dims[0];
    k->cout_ = w.dims[1];
    k->kh_ = w.dims[2];
    k->kw_ = w.dims[3];
    const int64_t rows = k->cout_ * k->kh_ * k->kw_;
    // W^T: row (co, a, b), column ci.
    k->wt_.resize(static_cast<size_t>(rows * k->cin_));
    for (int64_t ci = 0; ci < k->cin_; ++ci)
      for (int64_t r = 0; r < rows; ++r) k->wt_[r * k->cin_ + ci] = w.f32[ci * rows + r];
    if (c.size() > 2 && c[2]) k->bias_ = c[2]->f32;
    return k;
  }

  std::optional<HostTensor> Run(RunState& st, const HostTensor& x) override {
    if (x.elem_type != kFloat || x.dims.size() != 4 || x.dims[1] != cin_) return std::nullopt;
    const int64_t n = x.dims[0], h = x.dims[2], w = x.dims[3], hw = h * w;
    const int64_t rows = cout_ * kh_ * kw_;
    HostTensor y;
    y.dims = {n, cout_, h * kh_, w * kw_};
    y.f32.resize(static_cast<size_t>(CountElements(y.dims)));
    if (y.f32.empty()) return y;
    // The products' buffer is kept from run to run (80 MB for 100 masks: allocated afresh, its
    // page faults cost as much as the product).
    std::lock_guard<std::mutex> lock(mu_);
    if (z_.size() < static_cast<size_t>(n * rows * hw))
      z_.resize(static_cast<size_t>(n * rows * hw));
    float* z = z_.data();
    try {
      const auto f32 = memory::data_type::f32;
      const Desc a_md({1, rows, cin_}, f32, {rows * cin_, cin_, 1});
      const Desc b_md({n, cin_, hw}, f32, {cin_ * hw, hw, 1});
      const Desc z_md({n, rows, hw}, f32, {rows * hw, hw, 1});
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, z_md), *st.engine);
      memory a(a_md, *st.engine, wt_.data());
      memory b(b_md, *st.engine, const_cast<float*>(x.f32.data()));
      memory zm(z_md, *st.engine, z);
      dnnl::matmul(pd).execute(*st.stream,
                               {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, zm}});
      st.stream->wait();
    } catch (const dnnl::error&) {
      return general_->Run(st, x);
    }
    const int64_t oh = h * kh_, ow = w * kw_;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t co = 0; co < cout_; ++co) {
        const float bias = bias_.empty() ? 0.f : bias_[co];
        float* plane = y.f32.data() + (i * cout_ + co) * oh * ow;
        for (int64_t a = 0; a < kh_; ++a)
          for (int64_t b = 0; b < kw_; ++b) {
            const float* src = z + (i * rows + (co * kh_ + a) * kw_ + b) * hw;
            for (int64_t r = 0; r < h; ++r) {
              float* dst = plane + (r * kh_ + a) * ow + b;
              const float* row = src + r * w;
              for (int64_t col = 0; col < w; ++col) dst[col * kw_] = row[col] + bias;
            }
          }
      }
    return y;
  }

 private:
  std::shared_ptr<DynamicKernel> general_;
  int64_t cin_ = 0, cout_ = 0, kh_ = 0, kw_ = 0;
  std::vector<float> wt_, bias_;
  std::mutex mu_;
  std::vector<float> z_;
};

// MaxPool and AveragePool (2-D) over a float host value of run-time shape: one oneDNN pooling
// primitive per input shape, on the plain tensors (ResNet-50's max pool over a run-time batch of
// 1: 3.5 ms a run on the reference kernel, in double; 0.2 ms here). A window that ceil_mode ends
// past the padding runs on the reference kernel, as does an average pool whose padding is counted.
class DynamicPool : public DynamicKernel {
 public:
  static std::shared_ptr<DynamicKernel> For(const Node& n, int64_t opset) {
    if ((n.op_type != "MaxPool" && n.op_type != "AveragePool") || n.outputs.size() != 1)
      return nullptr;
    auto k = std::make_shared<DynamicPool>();
    k->node_ = n.onnx;
    k->opset_ = opset;
    k->max_ = n.op_type == "MaxPool";
    return k;
  }

  // The output in the input's channel blocks, where it may be.
  bool TakesChannelBlocks() const override { return true; }

  std::optional<HostTensor> Run(RunState& st, const HostTensor& x) override {
    if (x.elem_type != kFloat || x.dims.size() != 4 || (x.channel_block && !blocked_output_))
      return std::nullopt;
    std::lock_guard<std::mutex> lock(mu_);
    const std::optional<Entry>& made = by_shape_.Get(
        x, [&](const HostTensor& in) { return Make(in.dims, in.channel_block, *st.engine); });
    if (!made) return std::nullopt;
    const Entry& e = *made;
    HostTensor y;
    y.dims = e.out;
    y.channel_block = x.channel_block;
    y.f32.resize(static_cast<size_t>(CountElements(e.out)));
    if (y.f32.empty()) return y;
    memory src(HostDesc(x.dims, x.channel_block), *st.engine, const_cast<float*>(x.f32.data()));
    memory dst(HostDesc(e.out, x.channel_block), *st.engine, y.f32.data());
    e.prim.execute(*st.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    st.stream->wait();
    return y;
  }

 private:
  struct Entry {
    dnnl::pooling_v2_forward prim;
    std::vector<int64_t> out;
  };

  std::optional<Entry> Make(const std::vector<int64_t>& xd, int32_t block,
                            const dnnl::engine& eng) const {
    KernelContext ctx(*node_, opset_, {});
    if (ctx.AttrString("auto_pad", "NOTSET") != "NOTSET") return std::nullopt;
    std::vector<int64_t> kernel = ctx.AttrInts("kernel_shape"), strides = ctx.AttrInts("strides"),
                         pads = ctx.AttrInts("pads"), dil = ctx.AttrInts("dilations");
    if (strides.empty()) strides = {1, 1};
    if (pads.empty()) pads = {0, 0, 0, 0};
    if (dil.empty()) dil = {1, 1};
    const bool ceil = ctx.AttrInt("ceil_mode", 0) != 0;
    const bool count_pad = ctx.AttrInt("count_include_pad", 0) != 0;
    if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4 || dil.size() != 2 ||
        (!max_ && (count_pad || dil != std::vector<int64_t>{1, 1})))
      return std::nullopt;
    std::vector<int64_t> out = {xd[0], xd[1], 0, 0};
    memory::dims dnnl_dil(2);
    for (int d = 0; d < 2; ++d) {
      if (kernel[d] < 1 || strides[d] < 1 || dil[d] < 1 || pads[d] < 0 || pads[d + 2] < 0)
        return std::nullopt;
      const int64_t span = (kernel[d] - 1) * dil[d] + 1;
      const int64_t padded = xd[2 + d] + pads[d] + pads[d + 2];
      if (padded < span) return std::nullopt;
      const int64_t room = padded - span;
      out[2 + d] = room / strides[d] + 1;
      // ceil_mode's last window, where it starts inside the input and ends past the padding:
      // left to the reference kernel, which counts what it covers.
      if (ceil && room % strides[d] != 0) return std::nullopt;
      dnnl_dil[d] = dil[d] - 1;
    }
    const Desc src = HostDesc(xd, block), dst = HostDesc(out, block);
    dnnl::pooling_v2_forward::desc desc(
        dnnl::prop_kind::forward_inference,
        max_ ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding, src,
        dst, {strides[0], strides[1]}, {kernel[0], kernel[1]}, dnnl_dil, {pads[0], pads[1]},
        {pads[2], pads[3]});
    dnnl::pooling_v2_forward::primitive_desc pd(desc, eng);
    return Entry{dnnl::pooling_v2_forward(pd), out};
  }

  std::shared_ptr<const onnx::NodeProto> node_;
  int64_t opset_ = 0;
  bool max_ = true;
  std::mutex mu_;
  ShapeCache<Entry> by_shape_;
};

// An element-wise activation over a float host value: oneDNN's jit eltwise on its elements
// (Mask R-CNN's ReLU and sigmoid over 100 masks of 256x28x28: 75 and 64 ms element by element
// in double). The primitives of the last few sizes are kept: a decoder's GELU over one token's
// 3072 features ran 80 us in double, as long as making its primitive anew. Tiny tensors stay on
// the reference kernel. GELU (erf form) runs the backend's own pass instead (GeluInHostPass).
class DynamicEltwise : public DynamicKernel {
 public:
  static std::shared_ptr<DynamicKernel> For(const Node& n) {
    static const std::map<std::string, dnnl::algorithm> kinds = {
        {"Relu", dnnl::algorithm::eltwise_relu},
        {"LeakyRelu", dnnl::algorithm::eltwise_relu},
        {"Sigmoid", dnnl::algorithm::eltwise_logistic},
        {"Tanh", dnnl::algorithm::eltwise_tanh},
        {"Exp", dnnl::algorithm::eltwise_exp},
        {"Abs", dnnl::algorithm::eltwise_abs},
        {"Sqrt", dnnl::algorithm::eltwise_sqrt}};
    auto it = kinds.find(n.op_type);
    std::optional<dnnl::algorithm> algorithm;
    if (it != kinds.end()) algorithm = it->second;
    if (n.op_type == "Gelu") {  // FuseRunTimeGelus' (opset 20's)
      const std::string approximate =
          KernelContext(*n.onnx, 0, {}).AttrString("approximate", "none");
      if (approximate == "none") algorithm = dnnl::algorithm::eltwise_gelu_erf;
      if (approximate == "tanh") algorithm = dnnl::algorithm::eltwise_gelu_tanh;
    }
    if (!algorithm || n.inputs.size() != 1) return nullptr;
    auto k = std::make_shared<DynamicEltwise>();
    k->algorithm_ = *algorithm;
    if (n.op_type == "LeakyRelu")
      k->alpha_ = KernelContext(*n.onnx, 0, {}).AttrFloat("alpha", 0.01f);
    return k;
  }

  // Element by element as they lie, in channel blocks too (their channels fill the blocks).
  bool TakesChannelBlocks() const override { return true; }

  std::optional<HostTensor> Run(RunState& st, const HostTensor& x) override {
    const int64_t n = x.NumElements();
    if (x.elem_type != kFloat || n < kMinElements || (x.channel_block && !blocked_output_))
      return std::nullopt;
    HostTensor y;
    y.dims = x.dims;
    y.channel_block = x.channel_block;
    y.f32.resize(static_cast<size_t>(n));
    Apply(st, x.f32.data(), y.f32.data(), n);
    return y;
  }

  bool RunInPlace(RunState& st, HostTensor* x) override {
    const int64_t n = x->NumElements();
    if (x->elem_type != kFloat || n < kMinElements || (x->channel_block && !blocked_output_))
      return false;
    Apply(st, x->f32.data(), x->f32.data(), n);
    return true;
  }

 private:
  static constexpr int64_t kMinElements = 256;
  static constexpr size_t kSizesKept = 8;

  void Apply(RunState& st, const float* in, float* out, int64_t n) {
    if (algorithm_ == dnnl::algorithm::eltwise_gelu_erf && GeluInHostPass()) {
      InChunks(n, [&](int64_t at, int64_t len) { GeluOf(in + at, out + at, len); });
      return;
    }
    const Desc md({n}, memory::data_type::f32, memory::format_tag::a);
    dnnl::eltwise_forward prim;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = primitives_.find(n);
      if (it == primitives_.end()) {
        if (primitives_.size() >= kSizesKept) primitives_.clear();
        dnnl::eltwise_forward::primitive_desc pd(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, algorithm_, md, alpha_,
                                        0.f),
            *st.engine);
        it = primitives_.emplace(n, dnnl::eltwise_forward(pd)).first;
      }
      prim = it->second;
    }
    memory src(md, *st.engine, const_cast<float*>(in));
    memory dst(md, *st.engine, out);
    prim.execute(*st.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    st.stream->wait();
  }

  dnnl::algorithm algorithm_ = dnnl::algorithm::eltwise_relu;
  float alpha_ = 0;
  std::mutex mu_;
  std::map<int64_t, dnnl::eltwise_forward> primitives_;  // by element count
};

}  // namespace

bool TakesChannelBlocks(const Node& n, size_t k) {
  if (!n.opaque() || !n.domain.empty() || k >= n.inputs.size() || n.outputs.size() != 1)
    return false;
  const std::string& t = n.op_type;
  if (t == "Conv" || t == "MaxPool" || t == "AveragePool") return k == 0;
  if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") return true;
  return k == 0 && DynamicEltwise::For(n) != nullptr;
}

HostTensor RowMajor(RunState& st, const HostTensor& t) {
  if (!t.channel_block) return t;
  HostTensor y;
  y.elem_type = t.elem_type;
  y.dims = t.dims;
  y.f32.resize(t.f32.size());
  if (y.f32.empty()) return y;
  memory src(HostDesc(t.dims, t.channel_block), *st.engine, const_cast<float*>(t.f32.data()));
  memory dst(HostDesc(t.dims, 0), *st.engine, y.f32.data());
  dnnl::reorder(src, dst).execute(*st.stream, src, dst);
  st.stream->wait();
  return y;
}

std::shared_ptr<DynamicKernel> MakeDynamicKernel(KernelBuilder& b,
                                                 const std::vector<const HostTensor*>& constants) {
  const Node& n = b.node();
  if (!n.opaque() || !n.domain.empty() || constants.empty()) return nullptr;
  try {
    if (auto values = ValuesMatmul::For(n, constants)) return values;
    if (auto norm = DynamicNorm::For(b, constants)) return norm;
    if (auto arithmetic = DynamicArithmetic::For(n, constants)) return arithmetic;
    if (n.op_type == "MatMul" || n.op_type == "Gemm") return RowsMatmul::For(b, constants);
    if (n.op_type == "Conv") return DynamicConv::For(b, constants);
    if (n.op_type == "ConvTranspose") return DynamicPatchDeconv::For(b, constants);
    if (auto pool = DynamicPool::For(n, b.Opset())) return pool;
    if (!constants[0]) return DynamicEltwise::For(n);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return nullptr;
}

}  // namespace verisub::runtime::dnnl_backend
