// The CUDA backend (see cuda_backend.h). Prepare runs in four phases: storage (which values live
// on the device, which reshapes are views), groups (what each convolution, matmul and channel
// affine map absorbs), kernels (descriptors, algorithms and uploaded weights per group, or a CPU
// step where no GPU kernel fits) and memory (the arena from the steps' lifetimes). Steps look
// their buffers up when they are enqueued, so kernels are built before the arena exists.
#include "runtime/cuda/cuda_backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>

#include "onnx/onnx_pb.h"
#include "runtime/constant_folding.h"
#include "runtime/cuda/arena.h"
#include "runtime/cuda/cuda_util.h"
#include "runtime/cuda/kernels.h"
#include "runtime/executor.h"
#include "runtime/onnx_kernels.h"
#include "specs/ops/batchnorm.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/channel_scale.h"
#include "specs/ops/concat.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/elementwise.h"
#include "specs/ops/layer_norm.h"
#include "specs/ops/matmul.h"
#include "specs/ops/pooling.h"
#include "specs/ops/reduce_mean.h"
#include "specs/ops/slice.h"
#include "specs/ops/softmax.h"
#include "specs/ops/split.h"
#include "specs/ops/transpose.h"

namespace verisub::runtime {
namespace cuda_backend {
namespace {

using namespace cuda_util;  // NOLINT
using specs::Activation;
using specs::OpKind;
namespace ops = specs::ops;

constexpr size_t kMatmulWorkspace = size_t{32} << 20;
constexpr size_t kConvWorkspaceLimit = size_t{256} << 20;
const float kOne = 1.f, kZero = 0.f;

bool Is(const Node& n, OpKind k) { return n.op && *n.op == k; }

cudnnDataType_t CudnnType(DType t) {
  return t == DType::kF16    ? CUDNN_DATA_HALF
         : t == DType::kBF16 ? CUDNN_DATA_BFLOAT16
                             : CUDNN_DATA_FLOAT;
}
cudaDataType_t BlasType(DType t) {
  return t == DType::kF16 ? CUDA_R_16F : t == DType::kBF16 ? CUDA_R_16BF : CUDA_R_32F;
}
const char* DTypeName(DType t) {
  return t == DType::kF16 ? "float16" : t == DType::kBF16 ? "bfloat16" : "float32";
}

// Host float32 values as the bytes of type `t` (round to nearest even).
std::vector<uint16_t> Narrow(const std::vector<float>& v, DType t) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::kF16) {
      out[i] = FloatToHalfBits(v[i]);
    } else {
      const float r = static_cast<float>(RoundToBfloat16(v[i]));
      uint32_t bits;
      std::memcpy(&bits, &r, 4);
      out[i] = static_cast<uint16_t>(bits >> 16);
    }
  }
  return out;
}
// The inverse: 16-bit values of type `t` widened to float32.
std::vector<float> Widen(const std::vector<uint16_t>& v, DType t) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::kF16) {
      out[i] = HalfBitsToFloat(v[i]);
    } else {
      const uint32_t bits = static_cast<uint32_t>(v[i]) << 16;
      std::memcpy(&out[i], &bits, 4);
    }
  }
  return out;
}

// A fused convolution or matmul: what the kernel node absorbed after it.
struct GroupPlan {
  int kernel = -1;
  std::vector<int> members;     // in node order, the kernel first
  int output = kNoValue;        // the value the group writes
  std::vector<int> scales;      // constant channel_scale vectors (conv: folded into weights)
  std::vector<int> biases;      // constant bias vectors, in order
  std::vector<int> batchnorms;  // batchnorm nodes folded (conv)
  int residual = kNoValue;      // an ewadd's other operand
  Activation act = Activation::kNone;
  int LastNode() const { return members.back(); }
};

struct Step {
  std::string name, kind;
  int node = -1;
  std::vector<int> members;
  bool host = false;
  std::vector<int> reads, writes;
  std::function<Status()> enqueue;
};

// Descriptors and device copies a step keeps.
struct KernelState {
  virtual ~KernelState() = default;
};

struct ConvState : KernelState {
  TensorDesc x, y, bias_desc;
  FilterDesc w;
  ConvDesc conv;
  ActDesc relu;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace = 0;
  bool fused_relu = false;  // cuDNN's bias + residual + relu kernel
  bool has_bias = false;
};

struct PoolState : KernelState {
  TensorDesc x, y;
  PoolDesc pool;
};

struct MatmulState : KernelState {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  ~MatmulState() override {
    if (a) LoadedCublas().cublasLtMatrixLayoutDestroy(a);
    if (b) LoadedCublas().cublasLtMatrixLayoutDestroy(b);
    if (c) LoadedCublas().cublasLtMatrixLayoutDestroy(c);
    if (op) LoadedCublas().cublasLtMatmulDescDestroy(op);
  }
};

class CudaPrepared : public PreparedModel {
 public:
  ~CudaPrepared() override {
    if (exec_) cudaGraphExecDestroy(exec_);
    state_.clear();
    if (lt_) LoadedCublas().cublasLtDestroy(lt_);
    if (dnn_) cudnnDestroy(dnn_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  Status Init(const Graph& g, const std::vector<int32_t>& storage_types) {
    VERISUB_RETURN_IF_ERROR(CudaDeviceStatus());
    graph_ = std::make_unique<Graph>(g);
    if (!FoldConstants(graph_.get()).ok()) *graph_ = g;
    // Folding renumbers values: the requested storage types follow the value names.
    std::vector<DType> types(graph_->num_values(), DType::kF32);
    if (!storage_types.empty()) {
      std::map<std::string, int32_t> by_name;
      for (int v = 0; v < g.num_values(); ++v) by_name[g.value(v).name] = storage_types[v];
      for (int v = 0; v < graph_->num_values(); ++v)
        if (auto it = by_name.find(graph_->value(v).name); it != by_name.end())
          types[v] = it->second == kFloat16    ? DType::kF16
                     : it->second == kBfloat16 ? DType::kBF16
                                               : DType::kF32;
    }
    VERISUB_RETURN_IF_ERROR(
        Check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
    VERISUB_RETURN_IF_ERROR(Check(cudnnCreate(&dnn_), "cudnnCreate"));
    VERISUB_RETURN_IF_ERROR(Check(cudnnSetStream(dnn_, stream_), "cudnnSetStream"));
    VERISUB_RETURN_IF_ERROR(Cublas().status());
    VERISUB_RETURN_IF_ERROR(Check(LoadedCublas().cublasLtCreate(&lt_), "cublasLtCreate"));
    ChooseStorage(types);
    PlanGroups();
    VERISUB_RETURN_IF_ERROR(BuildSteps());
    VERISUB_RETURN_IF_ERROR(PlanMemory());
    stats_.steps = static_cast<int>(steps_.size());
    return Status::Ok();
  }

  StatusOr<std::vector<HostTensor>> Run(const std::vector<HostTensor>& inputs) override {
    const Graph& g = *graph_;
    if (inputs.size() != g.inputs().size())
      return InvalidArgument("expected " + std::to_string(g.inputs().size()) + " inputs, got " +
                             std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int v = g.inputs()[i];
      const Value& val = g.value(v);
      if (inputs[i].elem_type != val.elem_type ||
          (val.rank_known && inputs[i].dims != val.dims && device_[v]))
        return InvalidArgument("input '" + val.name + "': expected " + ElemTypeName(val.elem_type) +
                               " " + DimsToString(val.dims) + ", got " +
                               ElemTypeName(inputs[i].elem_type) + " " +
                               DimsToString(inputs[i].dims));
      if (device_[v]) {
        auto st = stage_.find(v);
        void* dst = st != stage_.end() ? st->second->get() : Ptr(v);
        VERISUB_RETURN_IF_ERROR(
            Check(cudaMemcpyAsync(dst, inputs[i].f32.data(), inputs[i].f32.size() * sizeof(float),
                                  cudaMemcpyHostToDevice, stream_),
                  "copying an input to the GPU"));
      } else {
        host_[v] = inputs[i];
      }
    }
    if (!exec_ && capturable_ && runs_ > 0) Capture();
    if (exec_) {
      VERISUB_RETURN_IF_ERROR(Check(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch"));
    } else {
      for (Step& s : steps_)
        if (Status st = s.enqueue(); !st.ok()) return st.WithContext("node '" + s.name + "'");
    }
    std::vector<HostTensor> out;
    for (int v : g.outputs()) {
      const Value& val = g.value(v);
      if (val.constant) {
        out.push_back(*val.constant);
      } else if (device_[v]) {
        HostTensor t;
        t.elem_type = kFloat;
        t.dims = val.dims;
        t.f32.resize(CountElements(val.dims));
        auto st = stage_.find(v);
        const void* src = st != stage_.end() ? st->second->get() : Ptr(v);
        VERISUB_RETURN_IF_ERROR(
            Check(cudaMemcpyAsync(t.f32.data(), src, t.f32.size() * sizeof(float),
                                  cudaMemcpyDeviceToHost, stream_),
                  "copying an output from the GPU"));
        out.push_back(std::move(t));
      } else if (auto it = host_.find(v); it != host_.end()) {
        out.push_back(it->second);
      } else {
        return InternalError("output '" + val.name + "' was not computed");
      }
    }
    VERISUB_RETURN_IF_ERROR(Check(cudaStreamSynchronize(stream_), "running the model"));
    ++runs_;
    return out;
  }

  StatusOr<double> TimeNode(int node, int runs) override {
    for (Step& s : steps_)
      if (std::find(s.members.begin(), s.members.end(), node) != s.members.end())
        return TimeStep(s, runs);
    return NotFound("node " + std::to_string(node) + " runs no step (a view or folded)");
  }

  StatusOr<std::vector<StepProfile>> Profile(int runs, bool /*alone: always*/) override {
    std::vector<StepProfile> out;
    for (Step& s : steps_) {
      auto t = TimeStep(s, runs);
      if (!t.ok()) return t.status().WithContext("node '" + s.name + "'");
      StepProfile p;
      p.name = s.name;
      p.kind = s.kind;
      p.nodes = static_cast<int>(s.members.size());
      p.members = s.members;
      p.reference = s.host;
      p.seconds = *t;  // each step timed alone: a graph replay has no per-step clock
      p.alone_seconds = *t;
      out.push_back(std::move(p));
    }
    return out;
  }

  PrepareStats stats() const override { return stats_; }

 private:
  // ---- phase 1: storage ----
  void ChooseStorage(const std::vector<DType>& requested) {
    const Graph& g = *graph_;
    type_ = requested;
    device_.assign(g.num_values(), 0);
    root_.resize(g.num_values());
    std::iota(root_.begin(), root_.end(), 0);
    for (int v = 0; v < g.num_values(); ++v) {
      const Value& val = g.value(v);
      bool ok = val.elem_type == kFloat && val.rank_known && !val.constant && !val.dims.empty();
      for (int64_t d : val.dims) ok &= d > 0;
      device_[v] =
          ok || (val.elem_type == kFloat && val.rank_known && !val.constant && val.dims.empty());
    }
    view_.assign(g.num_nodes(), 0);
    for (int i = 0; i < g.num_nodes(); ++i) {
      const Node& n = g.node(i);
      const bool reshape =
          Is(n, OpKind::kReshape) || (n.opaque() && n.domain.empty() &&
                                      (n.op_type == "Reshape" || n.op_type == "Flatten" ||
                                       n.op_type == "Squeeze" || n.op_type == "Unsqueeze"));
      if (!reshape || n.inputs.empty() || n.outputs.size() != 1) continue;
      const int x = n.inputs[0], y = n.outputs[0];
      if (x == kNoValue || !device_[x] || !device_[y]) continue;
      if (CountElements(g.value(x).dims) != CountElements(g.value(y).dims)) continue;
      view_[i] = 1;
      root_[y] = root_[x];
      type_[y] = type_[root_[x]];
    }
  }

  // ---- phase 2: groups ----
  bool ConstantVector(int v, int64_t n) const {
    const Value& val = graph_->value(v);
    return val.constant && val.constant->elem_type == kFloat && val.constant->NumElements() == n;
  }

  void PlanGroups() {
    const Graph& g = *graph_;
    const std::vector<int> sole = g.SoleReaders();
    group_of_.assign(g.num_nodes(), -1);
    // The sole reader of `v` when no other group has claimed it.
    auto next = [&](int v) {
      const int r = v == kNoValue ? -1 : sole[v];
      return r >= 0 && group_of_[r] < 0 ? r : -1;
    };
    auto take_activation = [&](GroupPlan* p) {
      const int r = next(p->output);
      if (r < 0 || !g.node(r).op || p->act != Activation::kNone) return;
      if (auto a = ops::UnaryActivation(*g.node(r).op)) {
        p->act = *a;
        p->members.push_back(r);
        p->output = g.node(r).outputs[0];
      }
    };
    for (int i = 0; i < g.num_nodes(); ++i) {
      if (group_of_[i] >= 0) continue;
      const Node& n = g.node(i);
      GroupPlan p;
      p.kernel = i;
      p.members = {i};
      p.output = n.outputs.empty() ? kNoValue : n.outputs[0];
      if (p.output == kNoValue || !device_[p.output]) continue;
      if (Is(n, OpKind::kConv2d) || Is(n, OpKind::kConv2dBias)) {
        const int64_t o =
            g.value(n.outputs[0]).dims.size() == 4 ? g.value(n.outputs[0]).dims[1] : -1;
        p.act = static_cast<Activation>(n.params[ops::kConvActivation]);
        const bool const_w = g.value(n.inputs[1]).constant != nullptr;
        while (p.act == Activation::kNone) {
          const int r = next(p.output);
          if (r < 0) break;
          const Node& m = g.node(r);
          if (m.inputs[0] != p.output) break;
          if (Is(m, OpKind::kChannelScale) && m.params[ops::kChannelScaleAxis] == 1 && const_w &&
              ConstantVector(m.inputs[1], o)) {
            p.scales.push_back(m.inputs[1]);
          } else if (Is(m, OpKind::kBiasAdd) && m.params[ops::kBiasAxis] == 1 &&
                     ConstantVector(m.inputs[1], o)) {
            p.biases.push_back(m.inputs[1]);
          } else if (Is(m, OpKind::kBatchnorm) && const_w && ConstantVector(m.inputs[1], o) &&
                     ConstantVector(m.inputs[2], o) && ConstantVector(m.inputs[3], o) &&
                     ConstantVector(m.inputs[4], o)) {
            p.batchnorms.push_back(r);
          } else {
            break;
          }
          // A scale after a bias scales the bias too: folded in order at build time.
          p.members.push_back(r);
          p.output = m.outputs[0];
        }
        if (p.act == Activation::kNone) {
          const int r = next(p.output);
          if (r >= 0 && Is(g.node(r), OpKind::kEwAdd)) {
            const Node& m = g.node(r);
            const int other = m.inputs[0] == p.output ? m.inputs[1] : m.inputs[0];
            if (other != p.output && device_[other] &&
                g.value(other).dims == g.value(p.output).dims) {
              p.residual = other;
              p.members.push_back(r);
              p.output = m.outputs[0];
            }
          }
          take_activation(&p);
        }
      } else if (Is(n, OpKind::kMatmul)) {
        const auto& yd = g.value(p.output).dims;
        p.act = static_cast<Activation>(n.params[ops::kMatmulActivation]);
        if (p.act == Activation::kNone && !yd.empty()) {
          const int r = next(p.output);
          if (r >= 0 && Is(g.node(r), OpKind::kBiasAdd) && g.node(r).inputs[0] == p.output &&
              g.node(r).params[ops::kBiasAxis] == static_cast<int64_t>(yd.size()) - 1 &&
              ConstantVector(g.node(r).inputs[1], yd.back())) {
            p.biases.push_back(g.node(r).inputs[1]);
            p.members.push_back(r);
            p.output = g.node(r).outputs[0];
          }
          const int a = next(p.output);
          if (a >= 0 && (Is(g.node(a), OpKind::kRelu) || Is(g.node(a), OpKind::kGeluTanh)))
            take_activation(&p);
        }
      } else if (Is(n, OpKind::kChannelScale) || Is(n, OpKind::kBiasAdd)) {
        // A channel affine map: a scale, then a bias along the same axis, then an activation.
        const int64_t axis = Is(n, OpKind::kChannelScale) ? n.params[ops::kChannelScaleAxis]
                                                          : n.params[ops::kBiasAxis];
        if (Is(n, OpKind::kChannelScale)) {
          const int r = next(p.output);
          if (r >= 0 && Is(g.node(r), OpKind::kBiasAdd) && g.node(r).inputs[0] == p.output &&
              g.node(r).params[ops::kBiasAxis] == axis) {
            p.members.push_back(r);
            p.output = g.node(r).outputs[0];
          }
        }
        take_activation(&p);
      } else {
        continue;
      }
      if (p.members.size() < 2) continue;
      const int id = static_cast<int>(groups_.size());
      for (int m : p.members) group_of_[m] = id;
      groups_.push_back(std::move(p));
    }
  }

  // ---- phase 3: kernels ----
  // The arena buffer of a device value (valid once the arena exists).
  void* Ptr(int v) { return ptrs_[root_[v]]; }

  // The device copy of a float constant in type `t` (uploaded once), or null.
  StatusOr<void*> Constant(int v, DType t) {
    if (auto it = constants_.find({v, t}); it != constants_.end()) return it->second;
    const Value& val = graph_->value(v);
    if (!val.constant || val.constant->elem_type != kFloat) return static_cast<void*>(nullptr);
    VERISUB_ASSIGN_OR_RETURN(void* p, Upload(val.constant->f32, t));
    constants_.emplace(std::pair{v, t}, p);
    return p;
  }

  StatusOr<void*> Upload(const std::vector<float>& data, DType t = DType::kF32) {
    uploads_.push_back(std::make_unique<DeviceBuffer>());
    DeviceBuffer& b = *uploads_.back();
    const size_t bytes = data.size() * DTypeSize(t);
    VERISUB_RETURN_IF_ERROR(b.Allocate(bytes, false));
    std::vector<uint16_t> narrow;
    if (t != DType::kF32) narrow = Narrow(data, t);
    const void* src = t == DType::kF32 ? static_cast<const void*>(data.data()) : narrow.data();
    VERISUB_RETURN_IF_ERROR(
        Check(cudaMemcpy(b.get(), src, bytes, cudaMemcpyHostToDevice), "uploading a weight"));
    stats_.weight_bytes += static_cast<int64_t>(bytes);
    return b.get();
  }

  // A tensor operand of a GPU kernel in type `t`: a device value stored in `t` or a float
  // constant (uploaded in `t`); the accessor reads the pointer when the step runs.
  StatusOr<std::function<void*()>> Operand(int v, DType t) {
    if (v == kNoValue) return Unimplemented("an omitted input");
    if (device_[v]) {
      if (type_[v] != t)
        return Unimplemented("input '" + graph_->value(v).name + "' is " + DTypeName(type_[v]) +
                             ", the kernel computes in " + DTypeName(t));
      return std::function<void*()>([this, v] { return Ptr(v); });
    }
    VERISUB_ASSIGN_OR_RETURN(void* p, Constant(v, t));
    if (!p) return Unimplemented("input '" + graph_->value(v).name + "' is not float data");
    return std::function<void*()>([p] { return p; });
  }
  // A float32 parameter operand (per-channel vectors, scalars, layer normalization's scale).
  StatusOr<std::function<float*()>> FloatOperand(int v) {
    VERISUB_ASSIGN_OR_RETURN(auto f, Operand(v, DType::kF32));
    return std::function<float*()>([f] { return static_cast<float*>(f()); });
  }
  // The type a node's kernel computes in: its first output's storage type.
  DType OutType(const Node& n) const { return type_[n.outputs[0]]; }
  // Unimplemented unless every device input of the node is stored in `t`.
  Status SameType(const Node& n, DType t) const {
    for (int v : n.inputs)
      if (v != kNoValue && device_[v] && type_[v] != t) return Unimplemented("mixed storage types");
    return Status::Ok();
  }

  Status Scratch(size_t bytes) {
    if (scratch_.bytes() >= bytes) return Status::Ok();
    return scratch_.Allocate(bytes, true);
  }

  Status BuildConv(const GroupPlan& p, Step* s) {
    const Graph& g = *graph_;
    const Node& n = g.node(p.kernel);
    const auto& xd = g.value(n.inputs[0]).dims;
    const auto& wd = g.value(n.inputs[1]).dims;
    const auto& yd = g.value(p.output).dims;
    if (xd.size() != 4 || wd.size() != 4 || yd.size() != 4) return Unimplemented("conv: rank");
    if (!device_[n.inputs[0]]) return Unimplemented("conv: input not on the device");
    const DType t = type_[p.output];
    if (type_[n.inputs[0]] != t || (p.residual != kNoValue && type_[p.residual] != t))
      return Unimplemented("conv: mixed storage types");
    const cudnnDataType_t ct = CudnnType(t);
    const specs::Shape xs = *specs::Shape::FromVector(xd);
    const int64_t groups = ops::ConvGroups(n.params, xs), o = wd[0];
    const bool same = n.params[ops::kConvPadding] == static_cast<int64_t>(specs::Padding::kSame);
    const int64_t ph = same ? (wd[2] - 1) / 2 : 0, pw = same ? (wd[3] - 1) / 2 : 0;
    auto st = std::make_unique<ConvState>();
    // Weights with every scale and batch normalization folded in, and the bias they leave.
    std::vector<float> weights, bias(o, 0.f);
    const HostTensor* wc = g.value(n.inputs[1]).constant.get();
    const bool fold = !p.scales.empty() || !p.batchnorms.empty();
    if (wc) {
      if (wc->elem_type != kFloat) return Unimplemented("conv: weights not float32");
      weights = wc->f32;
    } else if (fold) {
      return Unimplemented("conv: folding into run-time weights");
    }
    if (Is(n, OpKind::kConv2dBias)) {
      if (!ConstantVector(n.inputs[2], o)) return Unimplemented("conv: run-time bias");
      bias = g.value(n.inputs[2]).constant->f32;
      st->has_bias = true;
    }
    const int64_t per_o = wd[1] * wd[2] * wd[3];
    for (size_t k = 1; k < p.members.size(); ++k) {
      const Node& m = g.node(p.members[k]);
      if (Is(m, OpKind::kChannelScale)) {
        const auto& sc = g.value(m.inputs[1]).constant->f32;
        for (int64_t c = 0; c < o; ++c) {
          for (int64_t e = 0; e < per_o; ++e) weights[c * per_o + e] *= sc[c];
          bias[c] *= sc[c];
        }
      } else if (Is(m, OpKind::kBiasAdd)) {
        const auto& b = g.value(m.inputs[1]).constant->f32;
        for (int64_t c = 0; c < o; ++c) bias[c] += b[c];
        st->has_bias = true;
      } else if (Is(m, OpKind::kBatchnorm)) {
        const double eps = specs::DecodeFloat(m.params[ops::kBatchnormEpsilon]);
        const auto& sc = g.value(m.inputs[1]).constant->f32;
        const auto& sh = g.value(m.inputs[2]).constant->f32;
        const auto& mean = g.value(m.inputs[3]).constant->f32;
        const auto& var = g.value(m.inputs[4]).constant->f32;
        for (int64_t c = 0; c < o; ++c) {
          const float k = static_cast<float>(sc[c] / std::sqrt(var[c] + eps));
          for (int64_t e = 0; e < per_o; ++e) weights[c * per_o + e] *= k;
          bias[c] = (bias[c] - mean[c]) * k + sh[c];
        }
        st->has_bias = true;
      }
    }
    VERISUB_RETURN_IF_ERROR(st->x.Set(xd, {}, ct));
    VERISUB_RETURN_IF_ERROR(st->y.Set(yd, {}, ct));
    VERISUB_RETURN_IF_ERROR(st->bias_desc.Set({1, o, 1, 1}, {}, ct));
    VERISUB_RETURN_IF_ERROR(Check(
        cudnnSetFilter4dDescriptor(st->w.d, ct, CUDNN_TENSOR_NCHW, wd[0], wd[1], wd[2], wd[3]),
        "cudnnSetFilter4dDescriptor"));
    VERISUB_RETURN_IF_ERROR(
        Check(cudnnSetConvolution2dDescriptor(st->conv.d, ph, pw, n.params[ops::kConvStrideH],
                                              n.params[ops::kConvStrideW], 1, 1,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              "cudnnSetConvolution2dDescriptor"));
    VERISUB_RETURN_IF_ERROR(
        Check(cudnnSetConvolutionGroupCount(st->conv.d, static_cast<int>(groups)), "groups"));
    // float32 is float32: no TF32 Tensor Core math, so outputs match the reference; 16-bit
    // storage computes on the Tensor Cores with float32 accumulation.
    VERISUB_RETURN_IF_ERROR(
        Check(cudnnSetConvolutionMathType(st->conv.d,
                                          t == DType::kF32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
              "math type"));
    int on, oc, oh, ow;
    VERISUB_RETURN_IF_ERROR(Check(
        cudnnGetConvolution2dForwardOutputDim(st->conv.d, st->x.d, st->w.d, &on, &oc, &oh, &ow),
        "conv output shape"));
    if (std::vector<int64_t>{on, oc, oh, ow} != yd) return Unimplemented("conv: output shape");
    std::function<void*()> w;
    if (wc) {
      VERISUB_ASSIGN_OR_RETURN(void* wp, Upload(weights, t));
      w = [wp] { return wp; };
    } else {
      VERISUB_ASSIGN_OR_RETURN(w, Operand(n.inputs[1], t));
    }
    // The bias twice: in the storage type for cuDNN's fused kernel, float32 for our epilogue.
    VERISUB_ASSIGN_OR_RETURN(void* typed_bias, Upload(bias, t));
    VERISUB_ASSIGN_OR_RETURN(void* float_bias, Upload(bias));
    // The algorithm: cuDNN's measured fastest on scratch buffers of these shapes.
    const int es = DTypeSize(t);
    // Each region 256-byte aligned, as cuDNN's vectorized kernels expect.
    auto aligned = [es](int64_t n) { return (static_cast<size_t>(n) * es + 255) / 256 * 256; };
    const size_t xb = aligned(CountElements(xd)), yb = aligned(CountElements(yd));
    const size_t wb = wc ? 0 : aligned(CountElements(wd));
    VERISUB_RETURN_IF_ERROR(Scratch(xb + 2 * yb + wb + kConvWorkspaceLimit));
    char* base = static_cast<char*>(scratch_.get());
    void* sx = base;
    void* sy = base + xb;
    void* sz = base + xb + yb;
    void* sw = wc ? w() : base + xb + 2 * yb;
    void* sws = base + xb + 2 * yb + wb;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    VERISUB_RETURN_IF_ERROR(
        Check(cudnnFindConvolutionForwardAlgorithmEx(dnn_, st->x.d, sx, st->w.d, sw, st->conv.d,
                                                     st->y.d, sy, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                     &returned, perf, sws, kConvWorkspaceLimit),
              "cudnnFindConvolutionForwardAlgorithmEx"));
    bool found = false;
    for (int k = 0; k < returned && !found; ++k)
      if (perf[k].status == CUDNN_STATUS_SUCCESS && perf[k].memory <= kConvWorkspaceLimit) {
        st->algo = perf[k].algo;
        st->workspace = perf[k].memory;
        found = true;
      }
    if (!found) return Unimplemented("conv: cuDNN found no algorithm");
    // cuDNN's fused bias + residual + relu where the group ends in a relu; tried once here.
    if (p.act == Activation::kRelu) {
      VERISUB_RETURN_IF_ERROR(Check(
          cudnnSetActivationDescriptor(st->relu.d, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0),
          "activation"));
      const float alpha2 = p.residual != kNoValue ? 1.f : 0.f;
      st->fused_relu = cudnnConvolutionBiasActivationForward(
                           dnn_, &kOne, st->x.d, sx, st->w.d, sw, st->conv.d, st->algo, sws,
                           st->workspace, &alpha2, st->y.d, sz, st->bias_desc.d, typed_bias,
                           st->relu.d, st->y.d, sy) == CUDNN_STATUS_SUCCESS &&
                       cudaStreamSynchronize(stream_) == cudaSuccess;
      cudaGetLastError();
    }
    conv_workspace_ = std::max(conv_workspace_, st->workspace);
    ConvState* c = st.get();
    state_.push_back(std::move(st));
    const int x = n.inputs[0], y = p.output, z = p.residual;
    const int64_t count = CountElements(yd), inner = yd[2] * yd[3];
    const Activation act = p.act;
    float* fb = static_cast<float*>(float_bias);
    s->enqueue = [this, c, w, x, y, z, count, o, inner, act, t, typed_bias, fb]() -> Status {
      void* yp = Ptr(y);
      if (c->fused_relu) {
        const float alpha2 = z != kNoValue ? 1.f : 0.f;
        return Check(
            cudnnConvolutionBiasActivationForward(
                dnn_, &kOne, c->x.d, Ptr(x), c->w.d, w(), c->conv.d, c->algo, workspace_.get(),
                c->workspace, &alpha2, c->y.d, z != kNoValue ? Ptr(z) : yp, c->bias_desc.d,
                typed_bias, c->relu.d, c->y.d, yp),
            "cudnnConvolutionBiasActivationForward");
      }
      VERISUB_RETURN_IF_ERROR(Check(
          cudnnConvolutionForward(dnn_, &kOne, c->x.d, Ptr(x), c->w.d, w(), c->conv.d, c->algo,
                                  workspace_.get(), c->workspace, &kZero, c->y.d, yp),
          "cudnnConvolutionForward"));
      if (!c->has_bias && z == kNoValue && act == Activation::kNone) return Status::Ok();
      Affine a;
      a.shift = c->has_bias ? fb : nullptr;
      a.z = z != kNoValue ? Ptr(z) : nullptr;
      a.act = static_cast<int>(act);
      a.channels = o;
      a.inner = inner;
      return Check(LaunchAffine(stream_, t, a, yp, yp, count), "conv epilogue");
    };
    s->reads = {x};
    if (!wc) s->reads.push_back(n.inputs[1]);
    if (z != kNoValue) s->reads.push_back(z);
    s->writes = {y};
    return Status::Ok();
  }

  Status BuildMatmul(const GroupPlan& p, Step* s) {
    const Graph& g = *graph_;
    const Node& n = g.node(p.kernel);
    const auto& ad = g.value(n.inputs[0]).dims;
    const auto& bd = g.value(n.inputs[1]).dims;
    const auto& yd = g.value(p.output).dims;
    if (ad.size() < 2 || bd.size() < 2 || yd.size() < 2) return Unimplemented("matmul: rank");
    const int64_t k = ad.back(), nn = bd.back();
    int64_t m = ad[ad.size() - 2], batch = 1, stride_a = m * k, stride_b = k * nn;
    std::vector<int64_t> abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2),
        ybatch(yd.begin(), yd.end() - 2);
    if (bbatch.empty() || CountElements(bbatch) == 1) {  // one B: fold A's batch into its rows
      m = CountElements(ad) / k;
      stride_b = 0;
    } else if (abatch == bbatch && bbatch == ybatch) {
      batch = CountElements(bbatch);
    } else if (CountElements(abatch) == 1 && bbatch == ybatch) {
      batch = CountElements(bbatch);
      stride_a = 0;
    } else {
      return Unimplemented("matmul: broadcast batch");
    }
    auto st = std::make_unique<MatmulState>();
    const DType t = type_[p.output];
    const cudaDataType_t bt = BlasType(t);
    VERISUB_ASSIGN_OR_RETURN(auto a, Operand(n.inputs[0], t));
    VERISUB_ASSIGN_OR_RETURN(auto b, Operand(n.inputs[1], t));
    VERISUB_RETURN_IF_ERROR(
        Check(LoadedCublas().cublasLtMatmulDescCreate(&st->op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
              "matmul desc"));
    // Row-major Y = A B is column-major Y^T = B^T A^T: cuBLASLt's A is our B.
    VERISUB_RETURN_IF_ERROR(
        Check(LoadedCublas().cublasLtMatrixLayoutCreate(&st->a, bt, nn, k, nn), "matmul layout"));
    VERISUB_RETURN_IF_ERROR(
        Check(LoadedCublas().cublasLtMatrixLayoutCreate(&st->b, bt, k, m, k), "matmul layout"));
    VERISUB_RETURN_IF_ERROR(
        Check(LoadedCublas().cublasLtMatrixLayoutCreate(&st->c, bt, nn, m, nn), "matmul layout"));
    if (batch > 1) {
      const int32_t count = static_cast<int32_t>(batch);
      const int64_t stride_c = m * nn;
      for (auto [layout, stride] :
           {std::pair{st->a, stride_b}, std::pair{st->b, stride_a}, std::pair{st->c, stride_c}}) {
        VERISUB_RETURN_IF_ERROR(
            Check(LoadedCublas().cublasLtMatrixLayoutSetAttribute(
                      layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                  "batch count"));
        VERISUB_RETURN_IF_ERROR(
            Check(LoadedCublas().cublasLtMatrixLayoutSetAttribute(
                      layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
                  "batch stride"));
      }
    }
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    const bool bias = !p.biases.empty();
    Activation rest = p.act;  // what the epilogue cannot do runs as its own kernel
    if (p.act == Activation::kRelu) {
      epilogue = bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
      rest = Activation::kNone;
    } else if (p.act == Activation::kGeluTanh) {
      epilogue = bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
      rest = Activation::kNone;
    } else if (bias) {
      epilogue = CUBLASLT_EPILOGUE_BIAS;
    }
    if (bias) {  // in the output's type, cuBLASLt's default bias type
      VERISUB_ASSIGN_OR_RETURN(void* bias_ptr, Upload(g.value(p.biases[0]).constant->f32, t));
      const void* bp = bias_ptr;
      VERISUB_RETURN_IF_ERROR(Check(LoadedCublas().cublasLtMatmulDescSetAttribute(
                                        st->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof(bp)),
                                    "bias pointer"));
    }
    VERISUB_RETURN_IF_ERROR(
        Check(LoadedCublas().cublasLtMatmulDescSetAttribute(st->op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                            &epilogue, sizeof(epilogue)),
              "epilogue"));
    cublasLtMatmulPreference_t pref = nullptr;
    VERISUB_RETURN_IF_ERROR(
        Check(LoadedCublas().cublasLtMatmulPreferenceCreate(&pref), "preference"));
    const uint64_t ws = kMatmulWorkspace;
    LoadedCublas().cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t hs = LoadedCublas().cublasLtMatmulAlgoGetHeuristic(
        lt_, st->op, st->a, st->b, st->c, st->c, pref, 1, &result, &found);
    LoadedCublas().cublasLtMatmulPreferenceDestroy(pref);
    if (hs != CUBLAS_STATUS_SUCCESS || found == 0)
      return Unimplemented("matmul: cuBLASLt has no algorithm");
    st->algo = result.algo;
    st->workspace = result.workspaceSize;
    MatmulState* c = st.get();
    state_.push_back(std::move(st));
    const int y = p.output;
    const int64_t count = CountElements(yd);
    s->enqueue = [this, c, a, b, y, rest, count, t]() -> Status {
      void* yp = Ptr(y);
      VERISUB_RETURN_IF_ERROR(
          Check(LoadedCublas().cublasLtMatmul(lt_, c->op, &kOne, b(), c->a, a(), c->b, &kZero, yp,
                                              c->c, yp, c->c, &c->algo, workspace_.get(),
                                              c->workspace, stream_),
                "cublasLtMatmul"));
      if (rest == Activation::kNone) return Status::Ok();
      return Check(LaunchUnary(stream_, t, static_cast<int>(rest), yp, yp, count), "activation");
    };
    for (int v : {n.inputs[0], n.inputs[1]})
      if (device_[v]) s->reads.push_back(v);
    s->writes = {y};
    return Status::Ok();
  }

  // A 2-D pooling window as cuDNN takes it (symmetric pads).
  struct PoolWindow {
    cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
    int kh = 1, kw = 1, ph = 0, pw = 0, sh = 1, sw = 1;
    int act = 0;  // applied after (spec pooling's fused activation)
  };

  // Spec pool_max / pool_avg (the average counts padded positions).
  static PoolWindow SpecWindow(const Node& n) {
    const auto& pr = n.params;
    const bool same = pr[ops::kPoolPadding] == static_cast<int64_t>(specs::Padding::kSame);
    PoolWindow w;
    w.mode =
        Is(n, OpKind::kPoolMax) ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    w.kh = static_cast<int>(pr[ops::kPoolKernelH]);
    w.kw = static_cast<int>(pr[ops::kPoolKernelW]);
    w.ph = same ? (w.kh - 1) / 2 : 0;
    w.pw = same ? (w.kw - 1) / 2 : 0;
    w.sh = static_cast<int>(pr[ops::kPoolStrideH]);
    w.sw = static_cast<int>(pr[ops::kPoolStrideW]);
    w.act = static_cast<int>(pr[ops::kPoolActivation]);
    return w;
  }

  // ONNX MaxPool / AveragePool / GlobalAveragePool over NCHW, where cuDNN computes the same:
  // explicit symmetric pads, no dilation, floor rounding, no indices output.
  StatusOr<PoolWindow> OnnxWindow(const Node& n) const {
    const auto& xd = graph_->value(n.inputs[0]).dims;
    PoolWindow w;
    if (n.op_type == "GlobalAveragePool") {
      w.mode = CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
      w.kh = static_cast<int>(xd[2]);
      w.kw = static_cast<int>(xd[3]);
      return w;
    }
    KernelContext ctx(*n.onnx, graph_->OpsetFor(n.domain), {});
    const auto kernel = ctx.AttrInts("kernel_shape");
    auto strides = ctx.AttrInts("strides"), pads = ctx.AttrInts("pads");
    const auto dilations = ctx.AttrInts("dilations");
    const std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
    if (kernel.size() != 2 || ctx.AttrInt("ceil_mode", 0) != 0 ||
        (auto_pad != "NOTSET" && auto_pad != "VALID") || n.outputs.size() > 1)
      return Unimplemented("pool: attributes");
    for (int64_t d : dilations)
      if (d != 1) return Unimplemented("pool: dilation");
    if (strides.empty()) strides = {1, 1};
    if (pads.empty() || auto_pad == "VALID") pads = {0, 0, 0, 0};
    if (strides.size() != 2 || pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3])
      return Unimplemented("pool: asymmetric pads");
    w.mode = n.op_type == "MaxPool" ? CUDNN_POOLING_MAX
             : ctx.AttrInt("count_include_pad", 0) != 0
                 ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                 : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    w.kh = static_cast<int>(kernel[0]);
    w.kw = static_cast<int>(kernel[1]);
    w.ph = static_cast<int>(pads[0]);
    w.pw = static_cast<int>(pads[1]);
    w.sh = static_cast<int>(strides[0]);
    w.sw = static_cast<int>(strides[1]);
    return w;
  }

  Status BuildPool(const Node& n, const PoolWindow& win, Step* s) {
    const Graph& g = *graph_;
    const auto& xd = g.value(n.inputs[0]).dims;
    const auto& yd = g.value(n.outputs[0]).dims;
    if (xd.size() != 4 || yd.size() != 4 || !device_[n.inputs[0]])
      return Unimplemented("pool: rank");
    const DType t = OutType(n);
    VERISUB_RETURN_IF_ERROR(SameType(n, t));
    auto st = std::make_unique<PoolState>();
    VERISUB_RETURN_IF_ERROR(
        Check(cudnnSetPooling2dDescriptor(st->pool.d, win.mode, CUDNN_PROPAGATE_NAN, win.kh, win.kw,
                                          win.ph, win.pw, win.sh, win.sw),
              "cudnnSetPooling2dDescriptor"));
    VERISUB_RETURN_IF_ERROR(st->x.Set(xd, {}, CudnnType(t)));
    VERISUB_RETURN_IF_ERROR(st->y.Set(yd, {}, CudnnType(t)));
    int on, oc, oh, ow;
    VERISUB_RETURN_IF_ERROR(Check(
        cudnnGetPooling2dForwardOutputDim(st->pool.d, st->x.d, &on, &oc, &oh, &ow), "pool shape"));
    if (std::vector<int64_t>{on, oc, oh, ow} != yd) return Unimplemented("pool: output shape");
    PoolState* c = st.get();
    state_.push_back(std::move(st));
    const int x = n.inputs[0], y = n.outputs[0];
    const int act = win.act;
    const int64_t count = CountElements(yd);
    s->enqueue = [this, c, x, y, act, count, t]() -> Status {
      VERISUB_RETURN_IF_ERROR(
          Check(cudnnPoolingForward(dnn_, c->pool.d, &kOne, c->x.d, Ptr(x), &kZero, c->y.d, Ptr(y)),
                "cudnnPoolingForward"));
      if (act == 0) return Status::Ok();
      return Check(LaunchUnary(stream_, t, act, Ptr(y), Ptr(y), count), "activation");
    };
    s->reads = {x};
    s->writes = {y};
    return Status::Ok();
  }

  // A channel affine map (channel_scale / bias_add / batchnorm, a bias after a scale, an
  // activation) as one pass.
  Status BuildAffine(const GroupPlan& p, Step* s) {
    const Graph& g = *graph_;
    const Node& n = g.node(p.kernel);
    const int x = n.inputs[0];
    const auto& xd = g.value(x).dims;
    if (!device_[x]) return Unimplemented("affine: input not on the device");
    const DType t = type_[p.output];
    if (type_[x] != t) return Unimplemented("affine: mixed storage types");
    int64_t axis = 1;
    if (Is(n, OpKind::kChannelScale)) axis = n.params[ops::kChannelScaleAxis];
    if (Is(n, OpKind::kBiasAdd)) axis = n.params[ops::kBiasAxis];
    if (axis < 0 || axis >= static_cast<int64_t>(xd.size())) return Unimplemented("affine: axis");
    Affine a;
    a.channels = xd[axis];
    a.inner = CountElements(std::vector<int64_t>(xd.begin() + axis + 1, xd.end()));
    a.act = static_cast<int>(p.act);
    std::function<float*()> scale, shift;
    if (Is(n, OpKind::kBatchnorm)) {
      for (int k = 1; k <= 4; ++k)
        if (!ConstantVector(n.inputs[k], a.channels)) return Unimplemented("batchnorm: run-time");
      const double eps = specs::DecodeFloat(n.params[ops::kBatchnormEpsilon]);
      std::vector<float> sc(a.channels), sh(a.channels);
      for (int64_t c = 0; c < a.channels; ++c) {
        const double k = g.value(n.inputs[1]).constant->f32[c] /
                         std::sqrt(g.value(n.inputs[4]).constant->f32[c] + eps);
        sc[c] = static_cast<float>(k);
        sh[c] = static_cast<float>(g.value(n.inputs[2]).constant->f32[c] -
                                   g.value(n.inputs[3]).constant->f32[c] * k);
      }
      VERISUB_ASSIGN_OR_RETURN(void* ps, Upload(sc));
      VERISUB_ASSIGN_OR_RETURN(void* pb, Upload(sh));
      scale = [ps] { return static_cast<float*>(ps); };
      shift = [pb] { return static_cast<float*>(pb); };
    } else {
      for (int m : p.members) {
        const Node& mn = g.node(m);
        if (Is(mn, OpKind::kChannelScale)) {
          VERISUB_ASSIGN_OR_RETURN(scale, FloatOperand(mn.inputs[1]));
          s->reads.push_back(mn.inputs[1]);
        } else if (Is(mn, OpKind::kBiasAdd)) {
          VERISUB_ASSIGN_OR_RETURN(shift, FloatOperand(mn.inputs[1]));
          s->reads.push_back(mn.inputs[1]);
        }
      }
    }
    const int y = p.output;
    const int64_t count = CountElements(xd);
    s->enqueue = [this, a, scale, shift, x, y, count, t]() mutable -> Status {
      a.scale = scale ? scale() : nullptr;
      a.shift = shift ? shift() : nullptr;
      return Check(LaunchAffine(stream_, t, a, Ptr(x), Ptr(y), count), "channel affine");
    };
    s->reads.push_back(x);
    s->writes = {y};
    return Status::Ok();
  }

  // Copies `parts` (value, extent along the axis) into or out of `whole` along an axis:
  // concat when `into`, split or slice otherwise (`first`: the offset along the axis).
  Status BuildBlocks(int whole, const std::vector<std::pair<int, int64_t>>& parts, int axis,
                     bool into, int64_t first, Step* s) {
    const auto& wd = graph_->value(whole).dims;
    if (axis < 0 || axis >= static_cast<int>(wd.size())) return Unimplemented("axis");
    const int64_t outer = CountElements(std::vector<int64_t>(wd.begin(), wd.begin() + axis));
    const int64_t inner = CountElements(std::vector<int64_t>(wd.begin() + axis + 1, wd.end()));
    if (!device_[whole]) return Unimplemented("blocks: not on the device");
    const DType t = type_[whole];
    const size_t es = DTypeSize(t);
    std::vector<std::function<void*()>> ptrs;
    for (const auto& [v, extent] : parts) {
      VERISUB_ASSIGN_OR_RETURN(auto f, Operand(v, t));
      ptrs.push_back(f);
      if (device_[v]) (into ? s->reads : s->writes).push_back(v);
    }
    (into ? s->writes : s->reads).push_back(whole);
    const int64_t total = wd[axis];
    s->enqueue = [this, whole, parts, ptrs, outer, inner, into, first, total, es]() -> Status {
      int64_t at = first;
      for (size_t i = 0; i < parts.size(); ++i) {
        const int64_t e = parts[i].second;
        char* w = static_cast<char*>(Ptr(whole)) + at * inner * es;
        void* part = ptrs[i]();
        const size_t width = e * inner * es, pitch = total * inner * es;
        cudaError_t err = into ? cudaMemcpy2DAsync(w, pitch, part, width, width, outer,
                                                   cudaMemcpyDeviceToDevice, stream_)
                               : cudaMemcpy2DAsync(part, width, w, pitch, width, outer,
                                                   cudaMemcpyDeviceToDevice, stream_);
        VERISUB_RETURN_IF_ERROR(Check(err, "cudaMemcpy2DAsync"));
        at += e;
      }
      return Status::Ok();
    };
    return Status::Ok();
  }

  // The GPU kernel of a node that runs alone, Unimplemented where there is none.
  Status BuildSingle(int i, Step* s) {
    const Graph& g = *graph_;
    const Node& n = g.node(i);
    for (int v : n.outputs)
      if (v == kNoValue || !device_[v]) return Unimplemented("an output not on the device");
    const int y = n.outputs[0];
    const auto& yd = g.value(y).dims;
    const int64_t count = CountElements(yd);
    if (n.op) {
      const OpKind k = *n.op;
      // A group of one: the node with its own fused activation.
      auto alone = [&](int64_t act) {
        GroupPlan p;
        p.kernel = i;
        p.members = {i};
        p.output = y;
        p.act = static_cast<Activation>(act);
        return p;
      };
      if (k == OpKind::kConv2d || k == OpKind::kConv2dBias)
        return BuildConv(alone(n.params[ops::kConvActivation]), s);
      if (k == OpKind::kMatmul) return BuildMatmul(alone(n.params[ops::kMatmulActivation]), s);
      if (k == OpKind::kPoolMax || k == OpKind::kPoolAvg) return BuildPool(n, SpecWindow(n), s);
      if (k == OpKind::kChannelScale || k == OpKind::kBiasAdd || k == OpKind::kBatchnorm)
        return BuildAffine(alone(0), s);
      if (auto act = ops::UnaryActivation(k)) {
        const int x = n.inputs[0];
        if (!device_[x] || type_[x] != type_[y]) return Unimplemented("unary: input");
        const int a = static_cast<int>(*act);
        const DType t = type_[y];
        s->enqueue = [this, a, x, y, count, t] {
          return Check(LaunchUnary(stream_, t, a, Ptr(x), Ptr(y), count), "unary");
        };
        s->reads = {x};
        s->writes = {y};
        return Status::Ok();
      }
      if (k == OpKind::kEwAdd || k == OpKind::kEwSub || k == OpKind::kEwMul)
        return BuildBinary(n,
                           k == OpKind::kEwAdd   ? kBinaryAdd
                           : k == OpKind::kEwSub ? kBinarySub
                                                 : kBinaryMul,
                           s);
      if (k == OpKind::kSmul) {
        const DType t = type_[y];
        VERISUB_ASSIGN_OR_RETURN(auto x, Operand(n.inputs[0], t));
        VERISUB_ASSIGN_OR_RETURN(auto sc, FloatOperand(n.inputs[1]));
        s->enqueue = [this, x, sc, y, count, t] {
          return Check(LaunchScalarMul(stream_, t, x(), sc(), Ptr(y), count), "smul");
        };
        for (int v : n.inputs)
          if (device_[v]) s->reads.push_back(v);
        s->writes = {y};
        return Status::Ok();
      }
      if (k == OpKind::kSoftmax) {
        const int x = n.inputs[0];
        if (!device_[x] || type_[x] != type_[y]) return Unimplemented("softmax: input");
        const DType t = type_[y];
        const int axis = static_cast<int>(n.params[ops::kSoftmaxAxis]);
        if (axis < 0 || axis >= static_cast<int>(yd.size())) return Unimplemented("axis");
        const int64_t outer = CountElements(std::vector<int64_t>(yd.begin(), yd.begin() + axis));
        const int64_t inner = CountElements(std::vector<int64_t>(yd.begin() + axis + 1, yd.end()));
        const int64_t dim = yd[axis];
        s->enqueue = [this, x, y, outer, dim, inner, t] {
          return Check(LaunchSoftmax(stream_, t, Ptr(x), Ptr(y), outer, dim, inner), "softmax");
        };
        s->reads = {x};
        s->writes = {y};
        return Status::Ok();
      }
      if (k == OpKind::kLayerNorm) {
        const int x = n.inputs[0];
        if (!device_[x] || type_[x] != type_[y]) return Unimplemented("layer_norm: input");
        const DType t = type_[y];
        const int axis = static_cast<int>(n.params[ops::kLayerNormAxis]);
        if (axis < 0 || axis >= static_cast<int>(yd.size())) return Unimplemented("axis");
        const int64_t len = CountElements(std::vector<int64_t>(yd.begin() + axis, yd.end()));
        VERISUB_ASSIGN_OR_RETURN(auto sc, FloatOperand(n.inputs[1]));
        VERISUB_ASSIGN_OR_RETURN(auto bi, FloatOperand(n.inputs[2]));
        const float eps = static_cast<float>(specs::DecodeFloat(n.params[ops::kLayerNormEpsilon]));
        s->enqueue = [this, x, y, sc, bi, len, count, eps, t] {
          return Check(
              LaunchLayerNorm(stream_, t, Ptr(x), sc(), bi(), Ptr(y), count / len, len, eps),
              "layer_norm");
        };
        for (int v : n.inputs)
          if (device_[v]) s->reads.push_back(v);
        s->writes = {y};
        return Status::Ok();
      }
      if (k == OpKind::kTranspose) {
        const int x = n.inputs[0];
        const auto& xd = g.value(x).dims;
        if (!device_[x] || xd.size() > kMaxKernelRank) return Unimplemented("transpose");
        const std::vector<int> perm = specs::DecodePerm(n.params[ops::kTransposePerm]);
        if (perm.size() != xd.size()) return Unimplemented("transpose: perm");
        const auto xs = RowMajorStrides(xd);
        Gather ga;
        ga.rank = static_cast<int>(yd.size());
        for (int d = 0; d < ga.rank; ++d) {
          ga.dims[d] = yd[d];
          ga.x_strides[d] = xs[perm[d]];
        }
        return BuildGather(x, y, ga, count, s);
      }
      if (k == OpKind::kSlice) {
        const int x = n.inputs[0];
        const auto& xd = g.value(x).dims;
        const int axis = static_cast<int>(n.params[ops::kSliceAxis]);
        if (!device_[x] || axis < 0 || axis >= static_cast<int>(xd.size()))
          return Unimplemented("slice");
        const int64_t inner = CountElements(std::vector<int64_t>(xd.begin() + axis + 1, xd.end()));
        Gather ga;
        ga.rank = 3;
        ga.dims[0] = CountElements(std::vector<int64_t>(xd.begin(), xd.begin() + axis));
        ga.dims[1] = yd[axis];
        ga.dims[2] = inner;
        ga.x_strides[0] = xd[axis] * inner;
        ga.x_strides[1] = inner;
        ga.x_strides[2] = 1;
        ga.x_offset = n.params[ops::kSliceStart] * inner;
        return BuildGather(x, y, ga, count, s);
      }
      if (k == OpKind::kConcat && n.inputs.size() == 2) {
        const int axis = static_cast<int>(n.params[ops::kConcatAxis]);
        std::vector<std::pair<int, int64_t>> parts;
        for (int v : n.inputs) parts.push_back({v, g.value(v).dims.at(axis)});
        return BuildBlocks(y, parts, axis, true, 0, s);
      }
      if (k == OpKind::kSplit && n.outputs.size() == 2) {
        const int axis = static_cast<int>(n.params[ops::kSplitAxis]);
        std::vector<std::pair<int, int64_t>> parts;
        for (int v : n.outputs) parts.push_back({v, g.value(v).dims.at(axis)});
        return BuildBlocks(n.inputs[0], parts, axis, false, 0, s);
      }
      if (k == OpKind::kReduceMean) return BuildReduceMean(n, s);
      return Unimplemented("no GPU kernel");
    }
    if (!n.domain.empty()) return Unimplemented("no GPU kernel");
    if (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div")
      return BuildBinary(n,
                         n.op_type == "Add"   ? kBinaryAdd
                         : n.op_type == "Sub" ? kBinarySub
                         : n.op_type == "Mul" ? kBinaryMul
                                              : kBinaryDiv,
                         s);
    if ((n.op_type == "MaxPool" || n.op_type == "AveragePool" ||
         n.op_type == "GlobalAveragePool") &&
        g.value(n.inputs[0]).dims.size() == 4) {
      VERISUB_ASSIGN_OR_RETURN(PoolWindow w, OnnxWindow(n));
      return BuildPool(n, w, s);
    }
    if (n.op_type == "Split") {  // the sizes are the outputs' extents along the axis
      KernelContext ctx(*n.onnx, graph_->OpsetFor(n.domain), {});
      const auto& xd = g.value(n.inputs[0]).dims;
      int64_t axis = ctx.AttrInt("axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(xd.size());
      if (axis < 0 || axis >= static_cast<int64_t>(xd.size())) return Unimplemented("split");
      std::vector<std::pair<int, int64_t>> parts;
      for (int v : n.outputs) {
        if (g.value(v).dims.size() != xd.size()) return Unimplemented("split");
        parts.push_back({v, g.value(v).dims[axis]});
      }
      return BuildBlocks(n.inputs[0], parts, static_cast<int>(axis), false, 0, s);
    }
    if (n.op_type == "Concat") {
      KernelContext ctx(*n.onnx, graph_->OpsetFor(n.domain), {});
      int64_t axis = ctx.AttrInt("axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(yd.size());
      std::vector<std::pair<int, int64_t>> parts;
      for (int v : n.inputs) {
        if (v == kNoValue || g.value(v).dims.size() != yd.size()) return Unimplemented("concat");
        parts.push_back({v, g.value(v).dims[axis]});
      }
      return BuildBlocks(y, parts, static_cast<int>(axis), true, 0, s);
    }
    return Unimplemented("no GPU kernel");
  }

  Status BuildGather(int x, int y, const Gather& ga, int64_t count, Step* s) {
    if (type_[x] != type_[y]) return Unimplemented("gather: mixed storage types");
    const DType t = type_[y];
    s->enqueue = [this, x, y, ga, count, t] {
      return Check(LaunchGather(stream_, t, Ptr(x), Ptr(y), ga, count), "gather");
    };
    s->reads = {x};
    s->writes = {y};
    return Status::Ok();
  }

  Status BuildBinary(const Node& n, int op, Step* s) {
    const Graph& g = *graph_;
    if (n.inputs.size() != 2) return Unimplemented("binary: arity");
    const int y = n.outputs[0];
    const auto& yd = g.value(y).dims;
    if (yd.size() > kMaxKernelRank) return Unimplemented("binary: rank");
    Broadcast b;
    b.rank = static_cast<int>(yd.size());
    for (int d = 0; d < b.rank; ++d) b.dims[d] = yd[d];
    int64_t* strides[2] = {b.a_strides, b.b_strides};
    std::function<void*()> operand[2];
    const DType t = type_[y];
    for (int k = 0; k < 2; ++k) {
      const int v = n.inputs[k];
      if (v == kNoValue) return Unimplemented("binary: input");
      const auto& d = g.value(v).dims;
      if (!g.value(v).rank_known || d.size() > yd.size()) return Unimplemented("binary: shape");
      const auto st = RowMajorStrides(d);
      const int shift = b.rank - static_cast<int>(d.size());
      for (size_t a = 0; a < d.size(); ++a) {
        if (d[a] != 1 && d[a] != yd[a + shift]) return Unimplemented("binary: broadcast");
        strides[k][a + shift] = d[a] == 1 ? 0 : st[a];
      }
      VERISUB_ASSIGN_OR_RETURN(operand[k], Operand(v, t));
      if (device_[v]) s->reads.push_back(v);
    }
    const int64_t count = CountElements(yd);
    auto a = operand[0], c = operand[1];
    s->enqueue = [this, op, a, c, y, b, count, t] {
      return Check(LaunchBinary(stream_, t, op, a(), c(), Ptr(y), b, count), "binary");
    };
    s->writes = {y};
    return Status::Ok();
  }

  Status BuildReduceMean(const Node& n, Step* s) {
    const Graph& g = *graph_;
    const int x = n.inputs[0], y = n.outputs[0];
    const auto& xd = g.value(x).dims;
    if (!device_[x] || xd.size() > kMaxKernelRank || type_[x] != type_[y])
      return Unimplemented("reduce_mean");
    const DType t = type_[y];
    const auto xs = RowMajorStrides(xd);
    Reduction r;
    for (int d = 0; d < static_cast<int>(xd.size()); ++d) {
      if (ops::ReducesAxis(n.params, d)) {
        r.red_dims[r.red_rank] = xd[d];
        r.red_strides[r.red_rank++] = xs[d];
        r.count *= xd[d];
      } else {
        r.outer.dims[r.outer.rank] = xd[d];
        r.outer.x_strides[r.outer.rank++] = xs[d];
      }
    }
    const int64_t count = CountElements(g.value(y).dims);
    s->enqueue = [this, x, y, r, count, t] {
      return Check(LaunchReduceMean(stream_, t, Ptr(x), Ptr(y), r, count), "reduce_mean");
    };
    s->reads = {x};
    s->writes = {y};
    return Status::Ok();
  }

  // A device value's elements as float32 on the host (synchronous).
  StatusOr<std::vector<float>> Download(int v) {
    const int64_t n = CountElements(graph_->value(v).dims);
    if (type_[v] == DType::kF32) {
      std::vector<float> out(n);
      VERISUB_RETURN_IF_ERROR(
          Check(cudaMemcpy(out.data(), Ptr(v), n * sizeof(float), cudaMemcpyDeviceToHost),
                "copying to the CPU"));
      return out;
    }
    std::vector<uint16_t> raw(n);
    VERISUB_RETURN_IF_ERROR(
        Check(cudaMemcpy(raw.data(), Ptr(v), n * 2, cudaMemcpyDeviceToHost), "copying to the CPU"));
    return Widen(raw, type_[v]);
  }
  // Host float32 values into a device value, in its storage type (synchronous).
  Status UploadTo(int v, const std::vector<float>& data) {
    if (type_[v] == DType::kF32)
      return Check(
          cudaMemcpy(Ptr(v), data.data(), data.size() * sizeof(float), cudaMemcpyHostToDevice),
          "copying to the GPU");
    const std::vector<uint16_t> raw = Narrow(data, type_[v]);
    return Check(cudaMemcpy(Ptr(v), raw.data(), raw.size() * 2, cudaMemcpyHostToDevice),
                 "copying to the GPU");
  }

  // A node on the CPU: its device inputs copied down, the reference kernel, its outputs up.
  void BuildHost(int i, Step* s) {
    const Graph& g = *graph_;
    const Node& n = g.node(i);
    s->host = true;
    for (int v : n.inputs)
      if (v != kNoValue && device_[v]) s->reads.push_back(v);
    for (int v : n.outputs)
      if (v != kNoValue && device_[v]) s->writes.push_back(v);
    capturable_ = false;
    ++stats_.fallback_nodes;
    ++stats_.fallback_kinds[n.KindName()];
    s->enqueue = [this, i]() -> Status {
      const Graph& g = *graph_;
      const Node& n = g.node(i);
      VERISUB_RETURN_IF_ERROR(Check(cudaStreamSynchronize(stream_), "before a CPU node"));
      std::vector<HostTensor> down;
      down.reserve(n.inputs.size());
      std::vector<const HostTensor*> in;
      for (int v : n.inputs) {
        if (v == kNoValue) {
          in.push_back(nullptr);
        } else if (g.value(v).constant) {
          in.push_back(g.value(v).constant.get());
        } else if (device_[v]) {
          HostTensor t;
          t.dims = g.value(v).dims;
          VERISUB_ASSIGN_OR_RETURN(t.f32, Download(v));
          down.push_back(std::move(t));
          in.push_back(&down.back());
        } else if (auto it = host_.find(v); it != host_.end()) {
          in.push_back(&it->second);
        } else {
          return InternalError("input '" + g.value(v).name + "' was not computed");
        }
      }
      auto out = RunNode(g, n, in);
      if (!out.ok()) return out.status();
      for (size_t k = 0; k < n.outputs.size() && k < out->size(); ++k) {
        const int v = n.outputs[k];
        if (v == kNoValue) continue;
        HostTensor& t = (*out)[k];
        if (!device_[v]) {
          host_[v] = std::move(t);
          continue;
        }
        if (t.elem_type != kFloat || t.dims != g.value(v).dims)
          return InternalError("output '" + g.value(v).name + "' is " + DimsToString(t.dims) +
                               ", its shape at prepare " + DimsToString(g.value(v).dims));
        VERISUB_RETURN_IF_ERROR(UploadTo(v, t.f32));
      }
      return Status::Ok();
    };
  }

  // A float32 copy of graph input or output `v` stored in 16 bits, and the step converting it.
  Status StageCast(int v, bool input) {
    const Graph& g = *graph_;
    auto& stage = stage_[v];
    const int64_t n = CountElements(g.value(v).dims);
    if (!stage) {
      stage = std::make_unique<DeviceBuffer>();
      VERISUB_RETURN_IF_ERROR(stage->Allocate(n * sizeof(float), false));
    }
    Step s;
    s.name = (input ? "input " : "output ") + g.value(v).name;
    s.kind = "cast";
    (input ? s.writes : s.reads).push_back(v);
    void* f = stage->get();
    const DType t = type_[v];
    s.enqueue = [this, v, f, t, n, input] {
      return Check(input ? LaunchCast(stream_, DType::kF32, f, t, Ptr(v), n)
                         : LaunchCast(stream_, t, Ptr(v), DType::kF32, f, n),
                   "converting");
    };
    steps_.push_back(std::move(s));
    return Status::Ok();
  }

  Status BuildSteps() {
    const Graph& g = *graph_;
    for (int v : g.inputs())
      if (device_[v] && type_[v] != DType::kF32) VERISUB_RETURN_IF_ERROR(StageCast(v, true));
    for (int i = 0; i < g.num_nodes(); ++i) {
      if (view_[i]) continue;
      const int gi = group_of_[i];
      if (gi >= 0 && groups_[gi].LastNode() != i) continue;
      Step s;
      Status st = Unimplemented("");
      if (gi >= 0) {
        const GroupPlan& p = groups_[gi];
        const Node& k = g.node(p.kernel);
        s.name = k.name;
        s.kind = k.KindName();
        s.node = p.kernel;
        s.members = p.members;
        if (Is(k, OpKind::kConv2d) || Is(k, OpKind::kConv2dBias))
          st = BuildConv(p, &s);
        else if (Is(k, OpKind::kMatmul))
          st = BuildMatmul(p, &s);
        else
          st = BuildAffine(p, &s);
        if (st.ok()) {
          stats_.fused_nodes += static_cast<int>(p.members.size()) - 1;
          steps_.push_back(std::move(s));
          continue;
        }
        for (int m : p.members) VERISUB_RETURN_IF_ERROR(BuildAlone(m));  // members one by one
        continue;
      }
      VERISUB_RETURN_IF_ERROR(BuildAlone(i));
    }
    for (int v : g.outputs())
      if (device_[v] && type_[v] != DType::kF32) VERISUB_RETURN_IF_ERROR(StageCast(v, false));
    return Status::Ok();
  }

  Status BuildAlone(int i) {
    const Node& n = graph_->node(i);
    Step s;
    s.name = n.name;
    s.kind = n.KindName();
    s.node = i;
    s.members = {i};
    if (Status st = BuildSingle(i, &s); !st.ok()) {
      if (st.code() != StatusCode::kUnimplemented)
        return st.WithContext("node '" + n.name + "' (" + n.KindName() + ")");
      if (!HasKernel(n))
        return Unimplemented("node '" + n.name + "': no kernel for " + n.KindName());
      s = Step();
      s.name = n.name;
      s.kind = n.KindName();
      s.node = i;
      s.members = {i};
      BuildHost(i, &s);
    }
    steps_.push_back(std::move(s));
    return Status::Ok();
  }

  // ---- phase 4: memory ----
  Status PlanMemory() {
    const Graph& g = *graph_;
    const int nsteps = static_cast<int>(steps_.size());
    std::vector<int> first(g.num_values(), INT32_MAX), last(g.num_values(), -1);
    auto touch = [&](int v, int s) {
      const int r = root_[v];
      first[r] = std::min(first[r], s);
      last[r] = std::max(last[r], s);
    };
    for (int v : g.inputs())
      if (device_[v]) touch(v, 0);
    for (int s = 0; s < nsteps; ++s) {
      for (int v : steps_[s].reads)
        if (device_[v]) touch(v, s);
      for (int v : steps_[s].writes)
        if (device_[v]) touch(v, s);
    }
    for (int v : g.outputs())
      if (device_[v]) touch(v, nsteps);
    std::vector<ArenaBuffer> buffers;
    std::vector<int> owner;
    for (int v = 0; v < g.num_values(); ++v) {
      if (root_[v] != v || last[v] < 0) continue;
      ArenaBuffer b;
      b.bytes = std::max<int64_t>(CountElements(g.value(v).dims), 1) * DTypeSize(type_[v]);
      b.first = first[v];
      b.last = last[v];
      buffers.push_back(b);
      owner.push_back(v);
    }
    const ArenaPlan plan = PlanArena(buffers);
    VERISUB_RETURN_IF_ERROR(arena_.Allocate(std::max<int64_t>(plan.bytes, 256), true));
    stats_.activation_bytes = plan.bytes;
    ptrs_.assign(g.num_values(), nullptr);
    for (size_t k = 0; k < owner.size(); ++k)
      ptrs_[owner[k]] = static_cast<char*>(arena_.get()) + plan.offsets[k];
    scratch_ = DeviceBuffer();
    return workspace_.Allocate(std::max(conv_workspace_, kMatmulWorkspace), false);
  }

  // ---- running ----
  void Capture() {
    cudaGraph_t graph = nullptr;
    if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      capturable_ = false;
      cudaGetLastError();
      return;
    }
    bool ok = true;
    for (Step& s : steps_) ok = ok && s.enqueue().ok();
    ok = cudaStreamEndCapture(stream_, &graph) == cudaSuccess && ok;
    if (ok) ok = cudaGraphInstantiate(&exec_, graph, 0) == cudaSuccess;
    if (graph) cudaGraphDestroy(graph);
    if (!ok) {
      exec_ = nullptr;
      capturable_ = false;
      cudaGetLastError();
    }
  }

  StatusOr<double> TimeStep(Step& s, int runs) {
    TimingOptions t;
    t.warmup = 1;
    t.batches = std::max(runs, 1);
    return MedianLaunchSeconds(stream_, s.enqueue, t);
  }

  std::unique_ptr<Graph> graph_;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  std::vector<char> device_, view_;
  std::vector<int> root_, group_of_;
  std::vector<GroupPlan> groups_;
  std::vector<Step> steps_;
  std::vector<std::unique_ptr<KernelState>> state_;
  std::map<std::pair<int, DType>, void*> constants_;  // constants on the device, by type
  std::vector<std::unique_ptr<DeviceBuffer>> uploads_;
  std::vector<void*> ptrs_;
  std::vector<DType> type_;  // per value: the storage type on the device
  // Graph inputs and outputs stored in 16 bits: their float32 copies, exchanged with the host.
  std::map<int, std::unique_ptr<DeviceBuffer>> stage_;
  DeviceBuffer arena_, workspace_, scratch_;
  size_t conv_workspace_ = 0;
  std::map<int, HostTensor> host_;
  cudaGraphExec_t exec_ = nullptr;
  bool capturable_ = true;
  int runs_ = 0;
  PrepareStats stats_;
};

bool HasGpuKernel(const Node& n) {
  if (n.op) {
    switch (*n.op) {
      case OpKind::kConv2d:
      case OpKind::kConv2dBias:
      case OpKind::kMatmul:
      case OpKind::kPoolMax:
      case OpKind::kPoolAvg:
      case OpKind::kChannelScale:
      case OpKind::kBiasAdd:
      case OpKind::kBatchnorm:
      case OpKind::kEwAdd:
      case OpKind::kEwSub:
      case OpKind::kEwMul:
      case OpKind::kSmul:
      case OpKind::kSoftmax:
      case OpKind::kLayerNorm:
      case OpKind::kTranspose:
      case OpKind::kSlice:
      case OpKind::kConcat:
      case OpKind::kSplit:
      case OpKind::kReduceMean:
      case OpKind::kReshape:
        return true;
      default:
        return ops::UnaryActivation(*n.op).has_value();
    }
  }
  return n.domain.empty() &&
         (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div" ||
          n.op_type == "Concat" || n.op_type == "Split" || n.op_type == "MaxPool" ||
          n.op_type == "AveragePool" || n.op_type == "GlobalAveragePool" ||
          n.op_type == "Reshape" || n.op_type == "Flatten" || n.op_type == "Squeeze" ||
          n.op_type == "Unsqueeze");
}

class CudaBackend : public Backend {
 public:
  std::string Name() const override { return "cuda"; }
  bool CanRun(const Graph&, const Node& n) const override { return HasGpuKernel(n); }
  StatusOr<std::unique_ptr<PreparedModel>> Prepare(const Graph& g,
                                                   const PrepareOptions& options) const override {
    VERISUB_RETURN_IF_ERROR(CheckGraph(g));
    if (!options.storage_types.empty()) {
      if (static_cast<int>(options.storage_types.size()) != g.num_values())
        return InvalidArgument("storage types: " + std::to_string(options.storage_types.size()) +
                               " given for " + std::to_string(g.num_values()) + " values");
      for (int v = 0; v < g.num_values(); ++v) {
        const int32_t t = options.storage_types[v];
        const bool narrow = t == kFloat16 || t == kBfloat16;
        if (t != 0 && t != g.value(v).elem_type && !(narrow && g.value(v).elem_type == kFloat))
          return InvalidArgument("storage types: value '" + g.value(v).name + "' of type " +
                                 ElemTypeName(g.value(v).elem_type) + " cannot be stored as " +
                                 ElemTypeName(t));
      }
    }
    auto m = std::make_unique<CudaPrepared>();
    VERISUB_RETURN_IF_ERROR(m->Init(g, options.storage_types));
    return std::unique_ptr<PreparedModel>(std::move(m));
  }
};

}  // namespace
}  // namespace cuda_backend

Status CudaDeviceStatus() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return FailedPrecondition(std::string("no CUDA device: ") + cudaGetErrorString(e));
  }
  if (count == 0) return FailedPrecondition("no CUDA device: the driver reports none");
  return Status::Ok();
}

std::unique_ptr<Backend> MakeCudaBackend() { return std::make_unique<cuda_backend::CudaBackend>(); }

}  // namespace verisub::runtime
