// KernelBuilder: argument binding, conversions and constants for the oneDNN kernels; the kernel
// registry.
#include "runtime/dnnl/builder.h"

#include <omp.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>

#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/dnnl/vector_math.h"
#include "runtime/large_buffer.h"

namespace verisub::runtime::dnnl_backend {
namespace {

std::string DescKey(const Desc& d) {
  return std::string(reinterpret_cast<const char*>(&d.data), sizeof(d.data));
}

int Root(const std::deque<Slot>& slots, int id) {
  while (slots[id].alias_of >= 0) id = slots[id].alias_of;
  return id;
}

}  // namespace

Desc PlainDesc(const std::vector<int64_t>& dims, memory::data_type type) {
  memory::dims d(std::max<size_t>(dims.size(), 1), 1);
  std::copy(dims.begin(), dims.end(), d.begin());
  memory::dims strides(d.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(d.size()) - 1; i >= 0; --i) {
    strides[i] = acc;
    acc *= d[i];
  }
  return Desc(d, type, strides);
}

Desc WithType(const Desc& d, memory::data_type type) {
  dnnl_memory_desc_t md = d.data;
  md.data_type = static_cast<dnnl_data_type_t>(type);
  return Desc(md);
}

std::string CpuIsaName() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "isa" + std::to_string(static_cast<int>(isa));
  }
}

bool HasBf16Kernels() {
  static const bool has = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return has;
}

bool HasInt8DotKernels() {
  static const bool has = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx2_vnni || isa == dnnl::cpu_isa::avx512_core_vnni ||
           isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return has;
}

std::vector<int64_t> DimsOf(const Desc& d) {
  memory::dims v = d.dims();
  return std::vector<int64_t>(v.begin(), v.end());
}

bool IsPlain(const Desc& d) { return d == PlainDesc(DimsOf(d)); }

bool IsReferenceImpl(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

std::vector<int64_t> PadRank(std::vector<int64_t> d, size_t rank) {
  d.insert(d.begin(), rank - d.size(), 1);
  return d;
}

double PrimitiveUs(const dnnl::primitive& p, const std::vector<std::pair<int, Desc>>& args,
                   const dnnl::engine& engine) {
  std::unordered_map<int, memory> bound;
  for (const auto& [arg, md] : args) {
    memory m(md, engine);
    if (md.get_size() > 0) {
      float* f = static_cast<float*>(m.get_data_handle());
      std::fill(f, f + md.get_size() / sizeof(float), 0.01f);
    }
    bound.emplace(arg, m);
  }
  dnnl::stream stream(engine);
  p.execute(stream, bound);
  stream.wait();
  std::vector<double> us;
  double total = 0;
  while (us.size() < 3 || (us.size() < 9 && total < 2e4)) {
    auto start = std::chrono::steady_clock::now();
    p.execute(stream, bound);
    stream.wait();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
    total += us.back();
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

bool FirstFasterOnce(const std::string& key, const std::function<double()>& time_first,
                     const std::function<double()>& time_second) {
  static std::mutex mu;
  static std::map<std::string, bool> first_faster;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, added] =
      first_faster.emplace(key + " t" + std::to_string(omp_get_max_threads()), false);
  if (added) {
    try {
      const double second_us = time_second();
      it->second = time_first() < second_us;
    } catch (const dnnl::error&) {
      it->second = false;
    }
  }
  return it->second;
}

Status DnnlCall(const std::string& what, const std::function<void()>& f) {
  try {
    f();
  } catch (const dnnl::error& e) {
    return Unimplemented(what + ": oneDNN: " + e.what());
  }
  return Status::Ok();
}

std::optional<Desc> LayoutDesc(const std::vector<int64_t>& dims, specs::Layout l,
                               memory::data_type type) {
  using T = memory::format_tag;
  const int rank = static_cast<int>(dims.size());
  if (!specs::LayoutFitsRank(l, rank)) return std::nullopt;
  memory::dims d(dims.begin(), dims.end());
  switch (l) {
    case specs::Layout::kPlain:
      return PlainDesc(dims, type);
    case specs::Layout::kNHWC:
      return Desc(d, type, T::acdb);
    case specs::Layout::kNCHW8c:
      return Desc(d, type, T::aBcd8b);
    case specs::Layout::kNCHW16c:
      return Desc(d, type, T::aBcd16b);
    case specs::Layout::kColMajor: {
      const std::vector<int64_t> strides = *specs::LayoutStrides(dims, l);
      return Desc(d, type, memory::dims(strides.begin(), strides.end()));
    }
    default:
      return std::nullopt;
  }
}

std::optional<specs::Layout> LayoutOf(const Desc& desc, const std::vector<int64_t>& dims) {
  for (int l = 0; l < specs::kNumLayouts; ++l) {
    const auto layout = static_cast<specs::Layout>(l);
    if (auto d = LayoutDesc(dims, layout); d && *d == desc) return layout;
  }
  return std::nullopt;
}

Desc KernelBuilder::OutputDesc(int id) const {
  const auto& l = d_->layouts;
  const memory::data_type type = OutputType(id);
  if (id >= 0 && id < static_cast<int>(l.size()))
    if (auto d = LayoutDesc(slot(id).dims, l[id], type)) return *d;
  memory::dims d(slot(id).dims.begin(), slot(id).dims.end());
  return Desc(d, type, memory::format_tag::any);
}

memory::data_type KernelBuilder::OutputType(int id) const {
  const auto& t = d_->bf16;
  return id >= 0 && id < static_cast<int>(t.size()) && t[id] && !plain_inputs_
             ? memory::data_type::bf16
             : memory::data_type::f32;
}

std::optional<specs::Layout> KernelBuilder::AssignedLayout(int id) const {
  const auto& l = d_->layouts;
  if (id < 0 || id >= static_cast<int>(l.size())) return std::nullopt;
  return l[id];
}

int64_t KernelBuilder::Opset() const { return graph().DefaultOpset(); }

std::optional<std::vector<float>> KernelBuilder::ConstantFloats(int id) const {
  const HostTensor* t = constant(id);
  if (!t || !IsFloatType(t->elem_type)) return std::nullopt;
  if (t->elem_type == kFloat) return t->f32.Copy();  // a weight in its file: read from there
  std::vector<double> d = t->ToDoubles();
  return std::vector<float>(d.begin(), d.end());
}

const std::vector<float>* KernelBuilder::ConstantFloatsInPlaceOrCopy(
    int id, bool modify, std::optional<std::vector<float>>* copy) const {
  const HostTensor* t = constant(id);
  // A weight still in its file is read from there into a copy that goes once reordered: the
  // prepared model then holds its kernels' weights and not a decoded copy beside them.
  if (!modify && t && t->elem_type == kFloat && !t->f32.InFile()) return &t->f32.Floats();
  *copy = ConstantFloats(id);
  return *copy ? &**copy : nullptr;
}

bool KernelBuilder::AllDnnl() const {
  for (int v : node().inputs)
    if (v == kNoValue || slot(v).host) return false;
  for (int m : group_.members)
    for (int v : graph().node(m).outputs)
      if (v == kNoValue || (slot(v).host && !InsideGroup(v))) return false;
  return true;
}

bool KernelBuilder::InsideGroup(int v) const {
  const Graph& g = graph();
  if (std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end()) return false;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const std::vector<int>& in = g.node(i).inputs;
    if (std::find(in.begin(), in.end(), v) != in.end() &&
        std::find(group_.members.begin(), group_.members.end(), i) == group_.members.end())
      return false;
  }
  return true;
}

std::vector<int8_t> QuantizedWeight::Values() const {
  const std::vector<int64_t> v = data->ToInts();
  return std::vector<int8_t>(v.begin(), v.end());
}

bool Int8KernelsEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("VERISUB_INT8");
    return HasInt8DotKernels() && !(v && std::string(v) == "off");
  }();
  return on;
}

std::vector<float> Int8Operands::OutputScales() const {
  std::vector<float> scales(weights->scales.size());
  for (size_t c = 0; c < scales.size(); ++c) scales[c] = input.scale * weights->scales[c];
  return scales;
}

std::vector<float> Int8Operands::BiasInSums(const std::vector<float>& bias) const {
  const std::vector<float> scales = OutputScales();
  std::vector<float> out(bias.size());
  for (size_t c = 0; c < bias.size(); ++c) out[c] = bias[c] / scales[scales.size() > 1 ? c : 0];
  return out;
}

std::optional<Int8Operands> Int8OperandsOf(const Graph& g, const ModelDraft& d, const Group& grp) {
  if (!Int8KernelsEnabled() || grp.kernel_node < 0) return std::nullopt;
  const Node& n = g.node(grp.kernel_node);
  const bool conv = IsConv(n);
  if ((!conv && !IsMatmul(n)) || n.inputs.size() < 2 || n.inputs[0] == kNoValue ||
      n.inputs[1] == kNoValue || !grp.pattern.empty() || grp.pad_input != kNoValue ||
      grp.scaled_input != kNoValue || grp.output == kNoValue ||
      (!d.bf16.empty() && d.bf16[grp.output]))
    return std::nullopt;
  for (const PostOp& op : grp.post_ops)
    if (op.kind == PostOp::kScale || op.kind == PostOp::kBatchnorm) return std::nullopt;
  const Value& w = g.value(n.inputs[1]);
  auto q = d.quantized_weights.find(w.name);
  if (q == d.quantized_weights.end() || q->second.data->dims != w.dims ||
      !q->second.ScalesAlong(conv ? 0 : 1) || (!conv && w.dims.size() != 2))
    return std::nullopt;
  const std::optional<FakeQuant> input = PairProducing(g, d.producers, n.inputs[0]);
  if (!input) return std::nullopt;
  return Int8Operands{&q->second, *input};
}

namespace {
void InChunks(int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& f) {
  const int64_t chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) f(c * chunk, std::min(chunk, n - c * chunk));
}
}  // namespace

void InChunks(int64_t n, const std::function<void(int64_t, int64_t)>& f) {
  InChunks(n, kHostChunk, f);
}

void SoftmaxRowsInChunks(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t per_chunk = std::max<int64_t>(1, kHostChunk / std::max<int64_t>(cols, 1));
  InChunks(rows, per_chunk, [&](int64_t at, int64_t count) {
    SoftmaxRowsOf(x + at * cols, y + at * cols, count, cols);
  });
}

dnnl::primitive_attr QuantizeAttr(float scale, int32_t zero) {
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {1.f / scale});
  if (zero != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {zero});
  return attr;
}

std::optional<KernelBuilder::EightBitOutput> KernelBuilder::EightBitOutputOf() const {
  auto it = d_->eight_bit.find(group_.output);
  if (it == d_->eight_bit.end()) return std::nullopt;
  const FakeQuant& fq = it->second;
  if (group_.trailing_quantize >= 0) return ResidualEightBitOutput(fq);
  Group g = group_;
  std::vector<PostOp> kept;
  for (const PostOp& op : g.post_ops) {
    if (op.kind == PostOp::kSum) return std::nullopt;  // it would add to the 8-bit destination
    if (op.node != fq.quantize) kept.push_back(op);
  }
  if (!AppendEltwise(&kept, fq.quantize,
                     {dnnl::algorithm::eltwise_linear, 1.f / fq.scale, fq.zero}))
    return std::nullopt;
  g.post_ops = std::move(kept);
  return EightBitOutput{fq, MakePostOps(g), fq.StepType()};
}

std::optional<KernelBuilder::EightBitOutput> KernelBuilder::ResidualEightBitOutput(
    const FakeQuant& out) const {
  // The group's post-ops must be the pair after the convolution (its four eltwises), the sum,
  // then relus: the convolution's pair in steps of its own scale s less its zero point (x / s as
  // pow(1/s, 1), round, clip), the residual's steps added scaled by s_r / s less its zero point
  // (oneDNN's sum with a zero point reads the 8-bit destination it accumulates into), the relus
  // (the same at any positive scale), and linear(s / s_out, zero_out) before the 8-bit conversion.
  // No algorithm repeats (fusion.h AppendEltwise).
  std::vector<PostOp> ops;  // a bias is the kernel's, not a post-op
  for (const PostOp& op : group_.post_ops)
    if (op.kind != PostOp::kBias) ops.push_back(op);
  if (ops.size() < 5 || ops[4].kind != PostOp::kSum) return std::nullopt;
  // The add's other operand: the convolution's own pair computed it.
  const int addend = ops[4].operands[0];
  const std::vector<int>& add_inputs = graph().node(ops[4].node).inputs;
  if (add_inputs.size() != 2) return std::nullopt;
  const std::optional<FakeQuant> own = PairProducing(
      graph(), d_->producers, add_inputs[0] == addend ? add_inputs[1] : add_inputs[0]);
  const Slot& r = slot(addend);
  if (!own || r.quant_scale <= 0.f) return std::nullopt;
  for (int k = 0; k < 4; ++k)
    if (ops[k].kind != PostOp::kEltwise || ops[k].node != own->quantize) return std::nullopt;
  for (size_t k = 5; k < ops.size(); ++k)
    if (ops[k].kind != PostOp::kEltwise || ops[k].eltwise.alg != dnnl::algorithm::eltwise_relu ||
        ops[k].eltwise.alpha != 0.f)
      return std::nullopt;
  dnnl::post_ops po;
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_pow, 1.f / own->scale, 1.f);
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_round, 0.f, 0.f);
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_clip_v2, own->low - own->zero,
                    own->high - own->zero);
  po.append_sum(r.quant_scale / own->scale, r.quant_zero, r.desc.data_type());
  if (ops.size() > 5) po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, own->scale / out.scale, out.zero);
  return EightBitOutput{out, po, out.StepType()};
}

Desc KernelBuilder::StoredDesc(int id) const {
  const Slot& s = slot(id);
  if (plain_inputs_ || s.constant) return PlainDesc(s.dims);
  return s.desc;
}

int KernelBuilder::FindConverted(int id, const Desc& want) const {
  auto key = std::make_pair(id, DescKey(want));
  if (auto it = d_->conversions.find(key); it != d_->conversions.end()) return it->second;
  if (auto it = new_conversions_.find(key); it != new_conversions_.end()) return it->second;
  return -1;
}

namespace {
// A conversion of `from` into `to` turns 8-bit steps (Slot::quant_scale) into the value they
// stand for, (q - zero) * scale, when `to` is float32.
bool Dequantizes(const Slot& from, const Desc& to) {
  return from.quant_scale > 0.f && to.data_type() == memory::data_type::f32;
}
dnnl::primitive_attr ConversionAttr(const Slot& from, const Desc& to) {
  dnnl::primitive_attr attr;
  if (Dequantizes(from, to)) {
    attr.set_output_scales(0, {from.quant_scale});
    if (from.quant_zero != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {from.quant_zero});
  }
  return attr;
}
}  // namespace

int KernelBuilder::Converted(int id, const Desc& want, bool fresh) {
  if (int c = fresh ? -1 : FindConverted(id, want); c >= 0) return c;
  auto key = std::make_pair(id, DescKey(want));
  Slot s;
  s.name = slot(id).name + ".reordered";
  s.dims = slot(id).dims;
  s.desc = want;
  int cid = static_cast<int>(d_->slots.size());
  d_->slots.push_back(std::move(s));
  Step r;
  r.name = "reorder " + slot(id).name;
  r.nodes = group_.members;
  if (Dequantizes(slot(id), want)) r.name = "dequantize " + slot(id).name;
  r.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), slot(id).desc, engine(), want,
                                                            ConversionAttr(slot(id), want)));
  r.slot_args = {{DNNL_ARG_SRC, id}, {DNNL_ARG_DST, cid}};
  r.reads = {id};
  r.writes = {cid};
  r.is_reorder = true;
  pending_.push_back(std::move(r));
  if (!fresh) new_conversions_[key] = cid;
  return cid;
}

int KernelBuilder::Quantized(int id, const Desc& want, const FakeQuant& fq) {
  if (slot(id).quant_scale > 0.f) return id;  // its producer stored the steps
  const int32_t zero = static_cast<int32_t>(fq.zero);
  const auto key = std::make_pair(id, "quantized " + std::to_string(fq.scale) + " " +
                                          std::to_string(zero) + " " + DescKey(want));
  if (auto it = d_->conversions.find(key); it != d_->conversions.end()) return it->second;
  if (auto it = new_conversions_.find(key); it != new_conversions_.end()) return it->second;
  Slot s;
  s.name = slot(id).name + ".quantized";
  s.dims = slot(id).dims;
  s.desc = want;
  const int qid = static_cast<int>(d_->slots.size());
  d_->slots.push_back(std::move(s));
  Step r;
  r.name = "quantize " + slot(id).name;
  r.nodes = group_.members;
  r.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), slot(id).desc, engine(), want,
                                                            QuantizeAttr(fq.scale, zero)));
  r.slot_args = {{DNNL_ARG_SRC, id}, {DNNL_ARG_DST, qid}};
  r.reads = {id};
  r.writes = {qid};
  r.kind = "quantize";
  pending_.push_back(std::move(r));
  new_conversions_[key] = qid;
  return qid;
}

int KernelBuilder::Temporary(const std::string& name, const Desc& desc) {
  Slot s;
  s.name = name;
  s.dims = DimsOf(desc);
  s.desc = desc;
  d_->slots.push_back(std::move(s));
  return static_cast<int>(d_->slots.size()) - 1;
}

void* KernelBuilder::ConstantBuffer(size_t bytes) {
  d_->constant_buffers.push_back(NewLargeBuffer(bytes));
  return d_->constant_buffers.back().get();
}

namespace {

// The constants' memories of every model prepared in this process, by their content and layout:
// the same bytes wanted in the same layout are one buffer, shared (read only) by the models that
// hold it. A model prepared again for another input shape (ShapeAdaptiveSession), the original
// and the rewritten graph of --optimize, the layout policies timed side by side: their weights
// were copied and reordered anew each time, at about 3 ms per MB of fresh pages here.
class SharedConstants {
 public:
  // Constants smaller than this are not worth hashing.
  static constexpr size_t kMinBytes = 64 * 1024;

  static SharedConstants& Get() {
    static SharedConstants* shared = new SharedConstants();  // never destroyed: see Find
    return *shared;
  }

  // The key of `bytes` at `data` laid out as `want` from `plain`.
  struct Key {
    XXH128_hash_t hash;
    size_t bytes;
  };
  static Key KeyOf(const void* data, size_t bytes) { return {XXH3_128bits(data, bytes), bytes}; }

  // The live buffer of `key` in `want`, or null.
  std::shared_ptr<void> Find(const Key& key, const Desc& plain, const Desc& want) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      std::shared_ptr<void> buffer = it->buffer.lock();
      if (!buffer) {
        it = entries_.erase(it);
        continue;
      }
      if (XXH128_isEqual(it->key.hash, key.hash) && it->key.bytes == key.bytes &&
          it->plain == plain && it->want == want)
        return buffer;
      ++it;
    }
    return nullptr;
  }

  void Add(const Key& key, const Desc& plain, const Desc& want, const std::shared_ptr<void>& b) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back({key, plain, want, b});
  }

 private:
  struct Entry {
    Key key;
    Desc plain, want;
    std::weak_ptr<void> buffer;
  };
  std::mutex mu_;
  std::list<Entry> entries_;
};

}  // namespace

memory KernelBuilder::ConstantMemoryOf(const void* data, size_t bytes, const Desc& plain,
                                       const Desc& want) {
  d_->weight_bytes += static_cast<int64_t>(want.get_size());
  std::optional<SharedConstants::Key> key;
  if (bytes >= SharedConstants::kMinBytes) {
    key = SharedConstants::KeyOf(data, bytes);
    if (std::shared_ptr<void> shared = SharedConstants::Get().Find(*key, plain, want)) {
      d_->constant_buffers.push_back(shared);
      d_->shared_weight_bytes += static_cast<int64_t>(want.get_size());
      return memory(want, engine(), shared.get());
    }
  }
  memory made = NewConstantMemory(data, bytes, plain, want);
  if (key) SharedConstants::Get().Add(*key, plain, want, d_->constant_buffers.back());
  return made;
}

memory KernelBuilder::NewConstantMemory(const void* data, size_t bytes, const Desc& plain,
                                        const Desc& want) {
  if (want == plain) {
    memory src(plain, engine(), ConstantBuffer(plain.get_size()));
    std::memcpy(src.get_data_handle(), data, std::min(plain.get_size(), bytes));
    return src;
  }
  if (plain.get_size() > bytes)
    throw dnnl::error(dnnl_invalid_arguments, "constant smaller than its descriptor");
  // Reordered straight from the elements: every copy into fresh pages costs about 3 ms per MB
  // on a paravirtualized guest (VGG-16's 528 MB of weights were copied twice before).
  memory src(plain, engine(), const_cast<void*>(data));  // read only
  memory dst(want, engine(), ConstantBuffer(want.get_size()));
  dnnl::reorder(src, dst).execute(d_->stream, src, dst);
  d_->stream.wait();
  return dst;
}

void KernelBuilder::Read(int arg, int id, const Desc& want) {
  const Slot& s = slot(id);
  if (s.constant) {
    auto data = ConstantFloats(id);
    if (!data) throw dnnl::error(dnnl_unimplemented, "non-float constant");
    if (static_cast<int64_t>(data->size()) != CountElements(DimsOf(want)))
      throw dnnl::error(dnnl_invalid_arguments, "constant size");
    Fixed(arg, ConstantMemory(*data, PlainDesc(DimsOf(want)), want));
    return;
  }
  // Row-major in either element type: the same data under other dims is a view.
  auto row_major = [](const Desc& d) { return d == PlainDesc(DimsOf(d), d.data_type()); };
  if (s.desc != want && row_major(s.desc) && row_major(want) &&
      s.desc.data_type() == want.data_type() && s.desc.get_size() == want.get_size()) {
    View(arg, want);  // the same row-major data under other dims (rank padding, reshape)
    step_.slot_args.push_back({arg, id});
    step_.reads.push_back(id);
    return;
  }
  if (DimsOf(want) != DimsOf(s.desc) && row_major(want)) {
    int cid = Converted(id, PlainDesc(DimsOf(s.desc), want.data_type()));
    View(arg, want);
    step_.slot_args.push_back({arg, cid});
    step_.reads.push_back(cid);
    return;
  }
  int use = s.desc == want ? id : Converted(id, want);
  step_.slot_args.push_back({arg, use});
  step_.reads.push_back(use);
}

void KernelBuilder::Define(int id, const Desc& desc) {
  d_->slots[id].desc = desc;
  d_->slots[id].alias_of = -1;
  d_->slots[id].alias_offset = 0;
}

void KernelBuilder::Write(int arg, int id, const Desc& desc) {
  Define(id, desc);
  step_.slot_args.push_back({arg, id});
  step_.writes.push_back(id);
}

void KernelBuilder::Alias(int id, int source, const Desc& desc) {
  d_->slots[id].desc = desc;
  d_->slots[id].alias_of = source;
  d_->slots[id].alias_offset = 0;
}

void KernelBuilder::Place(int id, int container, size_t offset) {
  d_->slots[id].alias_of = container;
  d_->slots[id].alias_offset = offset;
}

int KernelBuilder::RootOf(int id) const { return Root(d_->slots, id); }

const std::vector<int>* KernelBuilder::PlacedConcat(int id) const {
  auto it = d_->placed_concats.find(id);
  return it == d_->placed_concats.end() ? nullptr : &it->second;
}

bool KernelBuilder::Shared(int id) const {
  if (d_->slots[id].alias_of >= 0) return true;
  for (const Slot& s : d_->slots)
    if (s.alias_of == id) return true;
  return false;
}

bool KernelBuilder::ConsumableHost(int id) const {
  if (id < 0 || id >= static_cast<int>(d_->readers.size())) return false;
  const Slot& v = d_->slots[id];
  if (!v.host || v.graph_input || v.graph_output || v.constant || d_->readers[id] != 1)
    return false;
  return std::count(node().inputs.begin(), node().inputs.end(), id) == 1;
}

const std::vector<std::pair<int, int>>& KernelBuilder::ReadersOf(int id) const {
  std::vector<std::vector<std::pair<int, int>>>& reads = d_->reads;
  if (reads.empty()) {
    const Graph& g = *d_->graph;
    reads.resize(d_->readers.size());
    for (int i = 0; i < g.num_nodes(); ++i) {
      const std::vector<int>& in = g.node(i).inputs;
      for (size_t k = 0; k < in.size(); ++k)
        if (in[k] >= 0 && in[k] < static_cast<int>(reads.size()))
          reads[in[k]].emplace_back(i, static_cast<int>(k));
    }
  }
  static const std::vector<std::pair<int, int>> kNone;
  return id >= 0 && id < static_cast<int>(reads.size()) ? reads[id] : kNone;
}

bool KernelBuilder::Overwritable(int source, const Desc& desc) const {
  const int root = Root(d_->slots, source);
  const int graph_values = static_cast<int>(d_->readers.size());
  auto dead_or_this = [&](int s) {
    const Slot& v = d_->slots[s];
    if (v.graph_input || v.graph_output || v.constant || v.host || s >= graph_values) return false;
    return s == source ? d_->readers[s] == 1 : d_->readers[s] == 0;
  };
  if (d_->slots[source].desc != desc || !dead_or_this(source)) return false;
  for (int s = 0; s < static_cast<int>(d_->slots.size()); ++s)
    if (s != source && Root(d_->slots, s) == root && !dead_or_this(s)) return false;
  return true;
}

void KernelBuilder::WriteOver(int arg, int id, const Desc& desc, int source) {
  if (!Overwritable(source, desc)) return Write(arg, id, desc);
  ++d_->in_place;
  Alias(id, source, desc);
  step_.slot_args.push_back({arg, id});
  step_.writes.push_back(id);
}

void KernelBuilder::WriteAccumulating(int arg, int id, const Desc& desc, int addend) {
  const Slot& a = slot(addend);
  // In place only when nothing else will read the addend's buffer.
  if (Overwritable(addend, desc)) {
    ++d_->in_place;
    Alias(id, addend, desc);
    step_.slot_args.push_back({arg, id});
    step_.reads.push_back(addend);
    step_.writes.push_back(id);
    return;
  }
  d_->slots[id].desc = desc;
  d_->slots[id].alias_of = -1;
  Step copy;
  copy.name = "copy " + a.name;
  copy.nodes = group_.members;
  copy.is_reorder = true;
  if (a.constant) {
    auto data = ConstantFloats(addend);
    if (!data) throw dnnl::error(dnnl_unimplemented, "non-float constant");
    memory m = ConstantMemory(*data, PlainDesc(a.dims), desc);
    copy.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), desc, engine(), desc));
    copy.fixed_args[DNNL_ARG_SRC] = m;
  } else {
    copy.primitive = dnnl::reorder(
        dnnl::reorder::primitive_desc(engine(), a.desc, engine(), desc, ConversionAttr(a, desc)));
    int src = addend;
    copy.slot_args.push_back({DNNL_ARG_SRC, src});
    copy.reads.push_back(src);
  }
  copy.slot_args.push_back({DNNL_ARG_DST, id});
  copy.writes.push_back(id);
  pending_.push_back(std::move(copy));
  step_.slot_args.push_back({arg, id});
  step_.reads.push_back(id);
  step_.writes.push_back(id);
}

void KernelBuilder::Emit(dnnl::primitive p) {
  step_.primitive = std::move(p);
  step_.name = node().name;
  step_.nodes = group_.members;
  pending_.push_back(std::move(step_));
  step_ = Step();
}

void KernelBuilder::EmitHost(std::function<Status(RunState&)> f, std::vector<int> reads,
                             std::vector<int> writes, bool reference) {
  step_.host = std::move(f);
  step_.reference = reference;
  step_.reads.insert(step_.reads.end(), reads.begin(), reads.end());
  step_.writes.insert(step_.writes.end(), writes.begin(), writes.end());
  step_.name = node().name;
  step_.nodes = group_.members;
  pending_.push_back(std::move(step_));
  step_ = Step();
}

std::vector<Step> KernelBuilder::TakeSteps() {
  for (auto& [k, v] : new_conversions_) d_->conversions[k] = v;
  for (const Step& s : pending_)
    if (s.is_reorder && !s.fixed_args.count(DNNL_ARG_SRC)) ++d_->reorders;
  return std::move(pending_);
}

KernelFn KernelRegistry::Find(const std::string& kind) const {
  auto it = kernels_.find(kind);
  return it == kernels_.end() ? nullptr : it->second;
}

const KernelRegistry& Kernels() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry;
    AddConvKernels(r);
    AddMatmulKernels(r);
    AddPoolKernels(r);
    AddEltwiseKernels(r);
    AddBinaryKernels(r);
    AddDataKernels(r);
    AddNormKernels(r);
    AddReduceKernels(r);
    AddChannelAffineKernels(r);
    AddGeneratedKernels(r);
    AddResizeKernels(r);
    AddConvTransposeKernels(r);
    AddRnnKernels(r);
    AddQuantKernels(r);
    return r;
  }();
  return *registry;
}

namespace {

// Whether environment variable `var` is `value`: a switch back to another kernel (diagnosis,
// tests).
bool Forced(const char* var, const char* value) {
  const char* v = std::getenv(var);
  return v && std::string(v) == value;
}

bool EndsWithSilu(const Group& g) {
  if (g.post_ops.empty()) return false;
  const PostOp& last = g.post_ops.back();
  return last.kind == PostOp::kEltwise && last.eltwise.alg == dnnl::algorithm::eltwise_swish &&
         last.eltwise.alpha == 1.f;
}

}  // namespace

bool SiluAfterPrimitive(const Group& g, memory::data_type type) {
  return type == memory::data_type::f32 && EndsWithSilu(g) && !Forced("VERISUB_SILU", "fused");
}

bool GeluInHostPass() { return !Forced("VERISUB_GELU", "onednn"); }

bool SoftmaxInHostPass() { return !Forced("VERISUB_SOFTMAX", "onednn"); }

bool MatmulReadsStrided() { return !Forced("VERISUB_TRANSPOSE", "copy"); }

std::optional<Status> EmitFloatPass(KernelBuilder& b, int x, int y, const Desc& desc,
                                    bool may_overwrite,
                                    std::function<void(const float*, float*)> pass) {
  if (!b.Dnnl(x) || !b.Dnnl(y) || b.constant(x) || b.OutputType(y) != memory::data_type::f32 ||
      b.slot(x).desc.data_type() != memory::data_type::f32)
    return std::nullopt;
  const int src = b.slot(x).desc == desc ? x : b.Converted(x, desc);
  const bool in_place = may_overwrite && src == x && b.Overwritable(x, desc);
  if (in_place)
    b.WriteOver(DNNL_ARG_DST, y, desc, x);  // lists the write
  else
    b.Define(y, desc);
  b.EmitHost(
      [src, y, pass = std::move(pass)](RunState& st) -> Status {
        pass(static_cast<const float*>(st.mem[src].get_data_handle()),
             static_cast<float*>(st.mem[y].get_data_handle()));
        return Status::Ok();
      },
      {src}, in_place ? std::vector<int>{} : std::vector<int>{y});
  return Status::Ok();
}

void EmitSiluPass(KernelBuilder& b, int id) {
  const int64_t count = static_cast<int64_t>(b.slot(id).desc.get_size() / sizeof(float));
  b.EmitHost(
      [id, count](RunState& st) -> Status {
        float* y = static_cast<float*>(st.mem[id].get_data_handle());
        InChunks(count, [&](int64_t at, int64_t len) { SiluOf(y + at, y + at, len); });
        return Status::Ok();
      },
      {id}, {id});
  b.SetStepKind("silu");
  b.CountVariant("silu after the primitive");
}

dnnl::post_ops MakePostOps(const Group& g, bool drop_trailing_silu) {
  dnnl::post_ops po;
  const size_t count = g.post_ops.size() - (drop_trailing_silu && EndsWithSilu(g) ? 1 : 0);
  for (size_t i = 0; i < count; ++i) {
    const PostOp& op = g.post_ops[i];
    if (op.kind == PostOp::kEltwise)
      po.append_eltwise(1.f, op.eltwise.alg, op.eltwise.alpha, op.eltwise.beta);
    else if (op.kind == PostOp::kSum)
      po.append_sum(1.f);
  }
  return po;
}

int SumAddend(const Group& g) {
  for (const PostOp& op : g.post_ops)
    if (op.kind == PostOp::kSum) return op.operands[0];
  return kNoValue;
}

dnnl::eltwise_forward::primitive_desc EltwiseChain(const std::vector<Eltwise>& ops, const Desc& src,
                                                   const dnnl::engine& engine) {
  dnnl::primitive_attr attr;
  if (ops.size() > 1) {
    dnnl::post_ops po;
    for (size_t k = 1; k < ops.size(); ++k)
      po.append_eltwise(1.f, ops[k].alg, ops[k].alpha, ops[k].beta);
    attr.set_post_ops(po);
  }
  return dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, ops[0].alg, src, ops[0].alpha,
                                  ops[0].beta),
      attr, engine);
}

}  // namespace verisub::runtime::dnnl_backend
