// What a oneDNN kernel sees while a model is prepared: the node (or fused group) it implements,
// the stored descriptors of its inputs, and calls that bind primitive arguments to values,
// inserting layout conversions (reorders) where a primitive wants another layout. Kernels only
// describe; the prepared model owns the steps and the memory.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/dnnl/fusion.h"
#include "runtime/graph.h"
#include "runtime/kernel_generator.h"
#include "specs/layout.h"

namespace verisub::runtime::dnnl_backend {

using dnnl::memory;
using Desc = dnnl::memory::desc;

// Descriptor of `dims` in layout `l` (float32 unless said), or nullopt when the layout does not
// fit.
std::optional<Desc> LayoutDesc(const std::vector<int64_t>& dims, specs::Layout l,
                               memory::data_type type = memory::data_type::f32);
// The layout (ours) in which `desc` stores a float32 tensor of `dims`, if any.
std::optional<specs::Layout> LayoutOf(const Desc& desc, const std::vector<int64_t>& dims);
// Row-major descriptor of `dims` (rank 0 is stored as [1]), float32 unless said.
Desc PlainDesc(const std::vector<int64_t>& dims, memory::data_type type = memory::data_type::f32);
// The same layout with another element type.
Desc WithType(const Desc& d, memory::data_type type);
// HasBf16Kernels() and CpuIsaName() are declared in dnnl_backend.h.
std::vector<int64_t> DimsOf(const Desc& d);
bool IsPlain(const Desc& d);
// `d` with leading ones up to `rank` (d.size() <= rank): an operand's dims as broadcasting aligns
// them with the output's.
std::vector<int64_t> PadRank(std::vector<int64_t> d, size_t rank);
// Whether oneDNN chose its reference implementation ("ref:any", a plain loop) for `pd`: the cue
// for a kernel to take another form where one exists.
bool IsReferenceImpl(const dnnl::primitive_desc_base& pd);

// The median time in microseconds of primitive `p` run with scratch buffers of `args`' descriptors
// (small finite values: uninitialized memory may hold denormals, which time differently), after
// a warm-up run: 3 runs, up to 9 while they total under 20 ms.
double PrimitiveUs(const dnnl::primitive& p, const std::vector<std::pair<int, Desc>>& args,
                   const dnnl::engine& engine);
// For FirstFasterOnce: a function timing the primitive of `pd` (a convolution's or a
// deconvolution's: source, weights, bias, destination) with PrimitiveUs.
template <class Primitive, class Pd>
std::function<double()> WindowPrimitiveTimer(const Pd& pd, const dnnl::engine& engine) {
  return [pd, engine] {
    return PrimitiveUs(Primitive(pd),
                       {{DNNL_ARG_SRC, pd.src_desc()},
                        {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                        {DNNL_ARG_BIAS, pd.bias_desc()},
                        {DNNL_ARG_DST, pd.dst_desc()}},
                       engine);
  };
}
// Whether the first of two kernels for one job is faster, both timed (`time_first`,
// `time_second`, microseconds) the first time `key` is asked at the current thread count in
// this process, the answer remembered after: kernel choices oneDNN does not make well itself
// (Winograd convolutions, global pooling against reduction), made once per shape.
bool FirstFasterOnce(const std::string& key, const std::function<double()>& time_first,
                     const std::function<double()>& time_second);

// A value of the prepared model: a graph value or a temporary (a converted copy).
struct Slot {
  std::string name;
  std::vector<int64_t> dims;
  int32_t elem_type = kFloat;
  bool host = false;  // kept as a HostTensor (not float32, or a shape oneDNN cannot hold)
  Desc desc;          // storage of a non-host value
  std::shared_ptr<const HostTensor> constant;
  // When positive: the value (float32 in the graph) is stored as the 8-bit steps of this
  // quantization (desc u8 or s8): a QuantizeLinear / DequantizeLinear pair's output that only int8
  // kernels read (ModelDraft::eight_bit). A conversion to float32 dequantizes (Converted).
  float quant_scale = 0.f;
  int32_t quant_zero = 0;
  int alias_of = -1;        // shares the buffer of this slot (a reshape of a plain tensor)
  size_t alias_offset = 0;  // bytes into alias_of's buffer (a concat input written in place)
  bool graph_input = false, graph_output = false;
};

struct RunState;

// One executed kernel: a primitive with its arguments, or a host function (reference kernels,
// copies). `reads` and `writes` are slot ids, for buffer planning.
struct Step {
  std::string name;
  std::vector<int> nodes;  // graph nodes it computes
  std::optional<dnnl::primitive> primitive;
  std::vector<std::pair<int, int>> slot_args;  // DNNL_ARG_* -> slot
  std::unordered_map<int, memory> fixed_args;  // weights, constants
  std::map<int, Desc> arg_views;  // arguments that see their slot's buffer through another desc
  std::function<Status(RunState&)> host;
  std::vector<int> reads, writes;
  bool is_reorder = false;
  bool reference = false;  // a host step running the node's reference kernel (fallback.cc)
  std::string kind;        // for profiles, when not the kernel node's kind (generated kernels)
};

// Buffers of one prepared model at run time.
struct RunState {
  dnnl::engine* engine = nullptr;
  dnnl::stream* stream = nullptr;
  std::vector<memory> mem;                              // per slot (non-host)
  std::vector<std::shared_ptr<const HostTensor>> host;  // per slot (host values)
  // Set while a profile reruns steps: a host step computing over its input in place then leaves
  // the input's slot holding the tensor too, so that the step can run again alone (a run frees
  // that slot, so that the tensor's next reader may compute over it in place again; in a profile
  // that reader copies instead: a Reshape after a bias added in place shows a copy the run does
  // not make).
  bool profiling = false;
  // Set by a host step of fallback.cc whose last run computed its node on the reference kernel
  // (not a kernel of run-time shape, which may decline a value at run time): a profile labels the
  // steps by what ran.
  bool ran_reference_kernel = false;
};

// 8-bit weights of a QDQ model (a DequantizeLinear of an int8 constant with zero points 0, one
// scale or one per slice of an axis), recorded before the prepare folds them to float32: a
// convolution (scales per output channel, axis 0) or matmul (per column, axis 1) over them may
// run in int8 (conv.cc, matmul.cc).
struct QuantizedWeight {
  std::shared_ptr<const HostTensor> data;  // int8
  std::vector<float> scales;               // one, or one per slice of `axis`
  int axis = -1;                           // -1: one scale
  std::vector<int8_t> Values() const;      // data's elements
  // The scales when they are one, or one per slice of `want_axis`; else null.
  const std::vector<float>* ScalesAlong(int want_axis) const {
    return scales.size() == 1 || axis == want_axis ? &scales : nullptr;
  }
};

struct ModelDraft;

// What a group's int8 kernel runs on (conv.cc Int8Convolution, matmul.cc Int8Matmul): its 8-bit
// weights and the quantization its input holds.
struct Int8Operands {
  const QuantizedWeight* weights = nullptr;
  FakeQuant input;
  // The input's scale times the weights' (one, or one per output channel or column): the
  // kernel's output scales.
  std::vector<float> OutputScales() const;
  // `bias` ([channels]) in units of the int32 sums: oneDNN 2.6 adds an int8 kernel's bias before
  // its output scales.
  std::vector<float> BiasInSums(const std::vector<float>& bias) const;
};
// The operands when group `grp` runs in int8 (Int8KernelsEnabled): a convolution or matmul, no
// pattern, pad, input scale or folded scale/batch normalization, a float32 output, weights a
// QuantizedWeight with scales along the output channels (axis 0) or columns (axis 1, 2-D
// weights), its input computed by a QuantizeLinear / DequantizeLinear pair. The plan
// (EightBitValues) and the kernels decide with this one predicate; the kernels add the shape
// conditions of their primitives.
std::optional<Int8Operands> Int8OperandsOf(const Graph& g, const ModelDraft& d, const Group& grp);

// The attribute of a reorder from float32 values on the steps of a quantization to those 8-bit
// steps: round(x / scale) + zero.
dnnl::primitive_attr QuantizeAttr(float scale, int32_t zero);

// The model under construction; shared by the driver and the kernels.
struct ModelDraft {
  dnnl::engine engine;
  const Graph* graph = nullptr;
  // Graph values first (same ids), then temporaries. A deque: kernels hold references to slots
  // (`KernelBuilder::dims`) while a Read adds a converted one, and a vector's reallocation left
  // those dangling (MaxViT's matmuls read freed dims, now and then a SIGSEGV).
  std::deque<Slot> slots;
  std::vector<Step> steps;
  std::map<std::pair<int, std::string>, int> conversions;  // (slot, desc key) -> converted slot
  std::vector<int> readers;    // per graph value: node reads not yet prepared
  std::vector<int> producers;  // per graph value: the node computing it, -1 for none
  // Per graph value: (node, input) per read (KernelBuilder::ReadersOf; made at its first call).
  std::vector<std::vector<std::pair<int, int>>> reads;
  // QuantizedWeight by the name of the value the DequantizeLinear computed (the folded weight).
  std::map<std::string, QuantizedWeight> quantized_weights;
  // Graph values whose producer writes them as their 8-bit steps where it can (Slot::quant_scale):
  // a pair's output read only by int8 convolutions and matmuls (EightBitValues).
  std::map<int, FakeQuant> eight_bit;
  dnnl::stream stream;  // for prepare-time weight reorders
  int reorders = 0;
  int in_place = 0;  // steps writing over a dead input (WriteOver, WriteAccumulating)
  std::map<std::string, int> kernel_variants;  // PrepareStats::kernel_variants
  int64_t weight_bytes = 0;
  std::vector<specs::Layout> layouts;  // PrepareOptions::layouts (empty: own policy)
  std::vector<char> bf16;              // per graph value: stored in bfloat16 (empty: none)
  // Concat outputs whose inputs were placed in their buffer (no copy), with those inputs.
  std::map<int, std::vector<int>> placed_concats;
  // The buffers of the constants' memories (ConstantMemory), kept for the model's life; those
  // shared with another model of the process (ConstantMemoryOf) counted.
  std::vector<std::shared_ptr<void>> constant_buffers;
  int64_t shared_weight_bytes = 0;
  // Generated kernels (PrepareOptions::generator): the generator and the clusters it planned.
  KernelGenerator* generator = nullptr;
  std::vector<KernelCluster> generated;
  int generated_kernels = 0, generated_nodes = 0;
  double generator_plan_seconds = 0;  // the generator's Plan (its partition)
  std::string generator_error;        // why a cluster's kernel could not be made (the first)
};

// Thrown-free wrapper: runs f, turning a dnnl::error into a Status naming `what`.
Status DnnlCall(const std::string& what, const std::function<void()>& f);

class KernelBuilder {
 public:
  KernelBuilder(ModelDraft* draft, const Group& group, bool plain_inputs)
      : d_(draft), group_(group), plain_inputs_(plain_inputs) {}

  const Graph& graph() const { return *d_->graph; }
  const Node& node() const { return graph().node(group_.kernel_node); }
  const Group& group() const { return group_; }
  ModelDraft& draft() { return *d_; }
  dnnl::engine& engine() { return d_->engine; }
  int64_t Opset() const;

  int num_inputs() const { return static_cast<int>(node().inputs.size()); }
  int in(int k) const { return node().inputs[k]; }  // slot id, kNoValue when omitted
  const Slot& slot(int id) const { return d_->slots[id]; }
  Slot& mutable_slot(int id) { return d_->slots[id]; }
  const std::vector<int64_t>& dims(int id) const { return d_->slots[id].dims; }
  const HostTensor* constant(int id) const { return d_->slots[id].constant.get(); }
  // Float32 data of a constant slot, or nullopt.
  std::optional<std::vector<float>> ConstantFloats(int id) const;
  // A constant's float data for kernel weights: read in place where it is stored as float32 and
  // `modify` is false (a copy of every weight into fresh pages costs about 3 ms per MB on a
  // paravirtualized guest), else copied into `*copy`, which is then the data returned and the one
  // to change. nullptr when `id` is not a float constant.
  // `copy` must not be null: a weight still in its model file is always read into it.
  const std::vector<float>* ConstantFloatsInPlaceOrCopy(
      int id, bool modify, std::optional<std::vector<float>>* copy) const;
  bool Dnnl(int id) const { return id != kNoValue && !slot(id).host; }
  // True when every input and the group's output are float tensors oneDNN can hold (a value
  // only the group's own nodes read, never materialized, may be of any type: the 8-bit value
  // between a QuantizeLinear and its DequantizeLinear).
  bool AllDnnl() const;
  // Int8OperandsOf this builder's group.
  std::optional<Int8Operands> Int8OperandsOfGroup() const {
    return Int8OperandsOf(graph(), *d_, group_);
  }
  // Writes the int8 kernel's output as its 8-bit steps (ModelDraft::eight_bit) when it is such a
  // value: the eltwise post-ops of the group without the pair's own, which the conversion of the
  // destination to 8 bits (round to nearest even, saturate) and a last linear(1 / scale, zero)
  // replace; nullopt when not.
  struct EightBitOutput {
    FakeQuant fq;
    dnnl::post_ops post_ops;
    memory::data_type type;
  };
  std::optional<EightBitOutput> EightBitOutputOf() const;
  // The same for a convolution's group with a residual add and its trailing pair
  // (Group::trailing_quantize) whose residual is stored in 8 bits: the destination holds the
  // residual's steps before the convolution accumulates into it.
  std::optional<EightBitOutput> ResidualEightBitOutput(const FakeQuant& out) const;
  // Records that output `id` holds the 8-bit steps of `fq` (Slot::quant_scale).
  void MarkEightBit(int id, const FakeQuant& fq) {
    d_->slots[id].quant_scale = fq.scale;
    d_->slots[id].quant_zero = static_cast<int32_t>(fq.zero);
  }
  // Whether value `v` is read only by the group's members (and is no graph output).
  bool InsideGroup(int v) const;
  // The descriptor a kernel should start from for input slot `id`: its storage, or plain when
  // the kernel is being retried on plain inputs.
  Desc StoredDesc(int id) const;
  // The descriptor an output should have: the layout PrepareOptions assigned to graph value
  // `id` when it fits, else `any` (oneDNN's choice).
  Desc OutputDesc(int id) const;
  // The element type a kernel writing slot `id` computes in: bfloat16 when PrepareOptions
  // assigned it (PrepareOptions::storage_types), else float32.
  memory::data_type OutputType(int id) const;
  // The layout PrepareOptions::layouts assigns to slot `id`, when there is an assignment.
  std::optional<specs::Layout> AssignedLayout(int id) const;

  // Binds `arg` to slot `id` in layout `want` (a conversion is inserted, or a constant is
  // reordered once, when its storage differs).
  void Read(int arg, int id, const Desc& want);
  // The primitive sees the buffer bound to `arg` as `view` (a reshape, a strided transpose, a
  // sub-tensor) instead of the slot's own descriptor.
  void View(int arg, const Desc& view) { step_.arg_views[arg] = view; }
  // Binds `arg` to a memory the step owns (weights, folded constants).
  void Fixed(int arg, memory m) { step_.fixed_args[arg] = std::move(m); }
  // Defines slot `id` (an output) with `desc` and binds `arg` to it.
  void Write(int arg, int id, const Desc& desc);
  // Binds `arg` to slot `id`, which an earlier step of this kernel wrote, as this step's output
  // too: a step updating the value in place (an activation over a convolution's output).
  void Update(int arg, int id) {
    step_.slot_args.push_back({arg, id});
    step_.writes.push_back(id);
  }
  // Defines slot `id` with `desc`, a buffer of its own: the output of a host step (EmitHost).
  void Define(int id, const Desc& desc);
  // The slot holding `id` as plain float32, what a host loop reads: itself when so stored,
  // else its converted copy.
  int PlainFloat(int id) {
    return IsPlain(slot(id).desc) ? id : Converted(id, PlainDesc(dims(id)));
  }
  // Whether the step being built may write a value in `desc` over `source`'s buffer: `source` is
  // an activation stored in `desc` that this step reads last, and every other value sharing its
  // buffer (an earlier in-place result, a reshape) is dead.
  bool Overwritable(int source, const Desc& desc) const;
  // Whether `id` is a host value (not a graph input or output, nor a constant) that the step
  // being built reads last, once: its tensor may become the step's output.
  bool ConsumableHost(int id) const;
  // The reads of graph value `id`: (node index, input index) per input that reads it.
  const std::vector<std::pair<int, int>>& ReadersOf(int id) const;
  // Write, but into `source`'s buffer where Overwritable (an elementwise kernel run in place:
  // one stream of memory traffic less, and no fresh buffer for the planner to find).
  void WriteOver(int arg, int id, const Desc& desc, int source);
  // `id` shares the buffer of `source` (which must outlive nothing it is read after).
  void Alias(int id, int source, const Desc& desc);
  // `id` (already defined) lives `offset` bytes into `container`'s buffer.
  void Place(int id, int container, size_t offset);
  // True when some other slot shares `id`'s buffer.
  bool Shared(int id) const;
  // The slot whose buffer holds `id` (itself when it is no alias).
  int RootOf(int id) const;
  // Concat outputs built in place (ConcatInPlace): their inputs, or null.
  const std::vector<int>* PlacedConcat(int id) const;
  void RecordPlacedConcat(int id, std::vector<int> inputs) {
    d_->placed_concats[id] = std::move(inputs);
  }
  // Defines output slot `id` holding `addend` before the primitive accumulates into it (a sum
  // post-op): the addend's own buffer when this is its last reader and its layout matches,
  // else a copy made just before the step. Binds `arg` to it.
  void WriteAccumulating(int arg, int id, const Desc& desc, int addend);
  // Memory owned by the model holding `data` (row-major in `plain`), reordered to `want`: float32
  // weights, or int8 ones.
  memory ConstantMemory(const std::vector<float>& data, const Desc& plain, const Desc& want) {
    return ConstantMemoryOf(data.data(), data.size() * sizeof(float), plain, want);
  }
  memory ConstantMemory(const std::vector<int8_t>& data, const Desc& plain, const Desc& want) {
    return ConstantMemoryOf(data.data(), data.size(), plain, want);
  }
  // A zeroed buffer of `bytes` for a constant's memory, kept for the model's life on huge pages
  // where granted (NewLargeBuffer).
  void* ConstantBuffer(size_t bytes);
  // The buffer of the constant memory made last, no longer kept by the model: the caller owns
  // it (a kernel that may move its weights into another layout, and free these).
  std::shared_ptr<void> ReleaseLastConstant() {
    std::shared_ptr<void> last = std::move(d_->constant_buffers.back());
    d_->constant_buffers.pop_back();
    return last;
  }
  // A slot converted to `want` (cached per slot and layout); returns the slot to read. `fresh`:
  // a new copy of its own, neither taken from nor added to the cache (a copy an in-place concat
  // places in its buffer, where an earlier concat's placed copy cannot move).
  int Converted(int id, const Desc& want, bool fresh = false);
  // Slot `id`, whose elements are steps of quantization `fq` (its pair computed them), as those
  // 8-bit steps in `want` (u8 or s8): the slot itself where its producer stored the steps
  // (Slot::quant_scale; reading it in `want` reorders 8 bits), else a float32 slot quantized,
  // round(x / scale) + zero, exact for such values (cached per slot and layout).
  int Quantized(int id, const Desc& want, const FakeQuant& fq);
  // A new slot of `desc` that is no graph value (a kernel's intermediate between two of its
  // steps); the buffer plan gives it a buffer from its first write to its last read.
  int Temporary(const std::string& name, const Desc& desc);
  // The slot holding `id` converted to `want` when some kernel made it already, else -1.
  int FindConverted(int id, const Desc& want) const;

  void Emit(dnnl::primitive p);
  // A kernel other than the default one, for PrepareStats::kernel_variants.
  void CountVariant(const std::string& name) { ++d_->kernel_variants[name]; }
  // A host step (reads and writes listed for the buffer plan); `reference` when it runs the
  // node's reference kernel rather than a kernel of the backend's own.
  void EmitHost(std::function<Status(RunState&)> f, std::vector<int> reads, std::vector<int> writes,
                bool reference = false);

  // Names the kind of the last emitted step for profiles ("gen:ewmul+transpose#1a2b3c4d").
  void SetStepKind(std::string kind) { pending_.back().kind = std::move(kind); }

  // Commits the emitted steps; called by the driver when the kernel succeeded.
  std::vector<Step> TakeSteps();

 private:
  // ConstantMemory of `bytes` at `data`: the buffer of another model of this process that holds
  // the same bytes in `want` where there is one (shared, read only), else NewConstantMemory.
  memory ConstantMemoryOf(const void* data, size_t bytes, const Desc& plain, const Desc& want);
  // A fresh buffer of the constant in `want` (the last of ModelDraft::constant_buffers).
  memory NewConstantMemory(const void* data, size_t bytes, const Desc& plain, const Desc& want);

  ModelDraft* d_;
  const Group& group_;
  bool plain_inputs_;
  Step step_;
  std::vector<Step> pending_;
  std::map<std::pair<int, std::string>, int> new_conversions_;
};

// A kernel: fills the builder for its group, or returns an error (Unimplemented: retry on
// plain inputs, then fall back to the reference kernel).
using KernelFn = Status (*)(KernelBuilder& b);

// Kernels by node kind name ("conv2d", "onnx:Conv").
class KernelRegistry {
 public:
  void Add(const std::string& kind, KernelFn f) { kernels_[kind] = f; }
  KernelFn Find(const std::string& kind) const;

 private:
  std::map<std::string, KernelFn> kernels_;
};
const KernelRegistry& Kernels();

// Registration of each kernel family (one file each); the list is in builder.cc.
void AddConvKernels(KernelRegistry* r);
void AddMatmulKernels(KernelRegistry* r);
void AddPoolKernels(KernelRegistry* r);
void AddEltwiseKernels(KernelRegistry* r);
void AddBinaryKernels(KernelRegistry* r);
void AddDataKernels(KernelRegistry* r);  // concat, reshape, transpose, split, slice
void AddNormKernels(KernelRegistry* r);  // batch/layer normalization, softmax
void AddReduceKernels(KernelRegistry* r);
void AddChannelAffineKernels(KernelRegistry* r);  // per-channel scale, shift and clamps
void AddResizeKernels(KernelRegistry* r);         // ONNX Resize and Upsample
void AddConvTransposeKernels(KernelRegistry* r);  // ONNX ConvTranspose
void AddRnnKernels(KernelRegistry* r);            // ONNX LSTM and GRU
void AddQuantKernels(KernelRegistry* r);          // int8 matmuls, QDQ activations (quant.cc)
void AddGeneratedKernels(KernelRegistry* r);      // clusters run by generated kernels

// y = the QuantizeLinear / DequantizeLinear pair `fq` of float32 slot x, one pass in x's layout
// (quant.cc; a pair on its own, or a convolution group's trailing pair).
void EmitFakeQuantPass(KernelBuilder& b, int x, int y, const FakeQuant& fq);

// How the backend's elementwise host passes split their work: f(begin, count) over [0, n) in
// chunks of kHostChunk elements, the chunks on the model's threads (one chunk: this thread).
inline constexpr int64_t kHostChunk = 16384;
void InChunks(int64_t n, const std::function<void(int64_t, int64_t)>& f);
// SoftmaxRowsOf (vector_math.h) over `rows` rows of `cols` floats in chunks of whole rows (about
// kHostChunk elements, at least one row), the chunks on the model's threads.
void SoftmaxRowsInChunks(const float* x, float* y, int64_t rows, int64_t cols);

// Eltwise and sum post-ops of a fused group, in order (bias and batchnorm are the kernel's);
// without the last one where `drop_trailing_silu` (SiluAfterPrimitive).
dnnl::post_ops MakePostOps(const Group& g, bool drop_trailing_silu = false);
// Whether a float32 group whose post-ops end with SiLU (swish, alpha 1: YOLO's and
// EfficientNet's Conv-BN-SiLU, a gated feed-forward's projection) computes it in a pass of its
// own after the primitive (EmitSiluPass) rather than as oneDNN's post-op: 2.6's injector
// evaluates swish with an exp, a reciprocal and register spills inside the convolution's
// epilogue, 270 us over a 96x112x112 output where the pass takes 170 us and the convolution
// alone 160 us; measured on nine convolution shapes from 7x7 to 320x320 (docs/backend-onednn.md),
// the pass was faster on all. VERISUB_SILU=fused keeps the post-op (diagnosis, tests).
bool SiluAfterPrimitive(const Group& g, memory::data_type type);
// Whether GELU (erf form) on its own runs in the backend's vector pass (GeluOf, vector_math.h):
// half of oneDNN 2.6's gelu_erf eltwise time (81 against 157 us over ViT-B/16's 197 x 3072
// feed-forward, one thread). VERISUB_GELU=onednn keeps oneDNN's (diagnosis, tests).
bool GeluInHostPass();
// Whether a float32 softmax along the last axis of a row-major value runs in the backend's pass
// (SoftmaxRowsOf, vector_math.h): 1.0-1.2x oneDNN 2.6's jit softmax alone, the most on long rows
// (1536 x 128: 77 against 70 us; 9408 x 49, a window attention's: equal).
// VERISUB_SOFTMAX=onednn keeps oneDNN's (diagnosis, tests).
bool SoftmaxInHostPass();
// Whether a transpose of the last two axes read only by matrix products is a strided view of its
// input that they read in place (TransposeKernel, MatmulKernel) rather than a copy: Swin-T's k^T
// over 192 x 49 x 32 took 0.2 ms alone and up to 0.9 ms in the run as oneDNN 2.6's strided
// reorder. VERISUB_TRANSPOSE=copy keeps the copy (diagnosis, tests).
bool MatmulReadsStrided();
// The kernel variant such a transpose counts.
inline constexpr char kTransposeReadInPlace[] = "transpose read in place by its matmuls";
// y = a host pass over float32 slot x read in `desc` (converted first where x is stored
// otherwise): `pass(in, out)` on the buffers at run time, `out` x's own buffer where
// `may_overwrite` and x dies here, else a buffer of y's own in `desc`. nullopt where x or y is no
// oneDNN value, x is a constant, or either is not float32 (the caller runs another kernel).
std::optional<Status> EmitFloatPass(KernelBuilder& b, int x, int y, const Desc& desc,
                                    bool may_overwrite,
                                    std::function<void(const float*, float*)> pass);
// silu(x) over float32 slot `id` in place, in its stored layout (padding stays 0), in chunks on
// the model's threads; a step of its own after the one writing `id`.
void EmitSiluPass(KernelBuilder& b, int id);
// The addend of the group's sum post-op, kNoValue when none.
int SumAddend(const Group& g);
// One eltwise primitive computing `ops` (not empty) in order over `src`: the first function as
// the primitive's own, the others as its post-ops. Throws dnnl::error where oneDNN has none.
dnnl::eltwise_forward::primitive_desc EltwiseChain(const std::vector<Eltwise>& ops, const Desc& src,
                                                   const dnnl::engine& engine);

}  // namespace verisub::runtime::dnnl_backend
