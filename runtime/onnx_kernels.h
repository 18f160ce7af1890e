// Reference kernels for ONNX operators kept opaque (and for constant folding before mapping):
// the kernel table and the context a kernel sees.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/host_tensor.h"

namespace onnx {
class NodeProto;
class AttributeProto;
}  // namespace onnx

namespace verisub::runtime {

// What one kernel invocation sees: the node's attributes, the model's opset for the node's
// domain, and its inputs (nullptr for omitted optional inputs).
class KernelContext {
 public:
  KernelContext(const onnx::NodeProto& node, int64_t opset, std::vector<const HostTensor*> inputs)
      : node_(node), opset_(opset), inputs_(std::move(inputs)) {}

  int64_t opset() const { return opset_; }
  const onnx::NodeProto& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // Input i, or nullptr when omitted or beyond the inputs given.
  const HostTensor* input(int i) const { return i < num_inputs() ? inputs_[i] : nullptr; }
  const std::string& op_type() const;

  const onnx::AttributeProto* FindAttr(std::string_view name) const;
  int64_t AttrInt(std::string_view name, int64_t dflt) const;
  float AttrFloat(std::string_view name, float dflt) const;
  std::string AttrString(std::string_view name, const std::string& dflt) const;
  std::vector<int64_t> AttrInts(std::string_view name) const;
  std::vector<float> AttrFloats(std::string_view name) const;

 private:
  const onnx::NodeProto& node_;
  int64_t opset_;
  std::vector<const HostTensor*> inputs_;
};

// A kernel fills `outputs` (sized by the caller to the node's output count; optional outputs
// it does not produce may stay empty). Errors describe the offending input or attribute.
using OnnxKernel = Status (*)(const KernelContext& ctx, std::vector<HostTensor>* outputs);
using KernelTable = std::map<std::string, OnnxKernel, std::less<>>;

// ONNX Runtime's contrib domain; its operators verisub runs are in the table as
// "com.microsoft.<op type>" (DynamicQuantizeMatMul, which the import makes of ONNX Runtime's
// dynamically quantized matmul pattern).
inline constexpr std::string_view kMicrosoftDomain = "com.microsoft";

// Kernels by op type for the default ONNX domain; built once, immutable.
const KernelTable& OnnxKernels();
const OnnxKernel* FindOnnxKernel(std::string_view domain, std::string_view op_type);

// ONNX Pad's parameters: pads (every axis' begin, then every axis' end), the constant value and
// the mode (constant, reflect or edge), from the attributes before opset 11 ("paddings" at opset
// 1) or from the inputs. Shared by the reference kernel and the backends' own.
struct PadParams {
  std::vector<int64_t> pads;
  double value = 0;
  std::string mode;
};
StatusOr<PadParams> ParsePad(const KernelContext& ctx, int64_t rank);
// The input index that output index `o` of an axis of `len` padded by `begin` reads under
// `mode` (reflect without repeating the edge element), or -1 where it reads the constant.
int64_t PadSource(const std::string& mode, int64_t o, int64_t begin, int64_t len);

// Registration of each kernel family (one file each).
void AddElementwiseKernels(KernelTable* table);
void AddShapeKernels(KernelTable* table);
void AddNnKernels(KernelTable* table);
void AddLayoutKernels(KernelTable* table);
void AddGenerateKernels(KernelTable* table);
void AddIndexKernels(KernelTable* table);   // ScatterND, Einsum
void AddResizeKernels(KernelTable* table);  // Resize, Upsample
void AddConvTransposeKernels(KernelTable* table);
void AddQuantKernels(KernelTable* table);        // the integer operators of quantized models
void AddSelectKernels(KernelTable* table);       // TopK, GatherND, QuantizeLinear, DequantizeLinear
void AddRecurrentKernels(KernelTable* table);    // RNN, GRU, LSTM
void AddDetectionKernels(KernelTable* table);    // NonZero, NonMaxSuppression, RoiAlign
void AddControlFlowKernels(KernelTable* table);  // If, Loop, Scan (control_flow.cc)
// HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix, DFT, STFT
void AddSignalKernels(KernelTable* table);

// A ConvTranspose node's geometry from its attributes and operand dims (input [N, C, ...],
// weight [C, M/group, k...]): output y[o] gathers x[i] * w[k] wherever o = i * stride +
// k * dilation - pad_begin, per spatial axis. Errors name the attribute at fault.
struct ConvTransposeGeometry {
  int64_t group = 1, out_channels = 0;
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;  // spatial axes
};
StatusOr<ConvTransposeGeometry> PlanConvTranspose(const KernelContext& ctx,
                                                  const std::vector<int64_t>& x_dims,
                                                  const std::vector<int64_t>& w_dims);

// How a Resize (or Upsample) node maps its input: the mode and coordinate transformation (with
// the legacy operators' implied ones), the output dims, the per-axis scales of the transform,
// and for every axis and output index the input taps it reads (index and weight; index -1: the
// extrapolation value of tf_crop_and_resize). Interpolation is separable: axis by axis. `ctx`
// holds the node's roi, scales and sizes inputs (input 0 may be absent); `in_dims` the input's
// dims. Errors name the attribute or input at fault.
struct ResizePlan {
  struct Tap {
    int64_t index;
    double weight;
  };
  std::string mode, coordinate_mode, nearest_mode;
  std::vector<int64_t> out_dims;
  std::vector<double> scales;
  std::vector<std::vector<std::vector<Tap>>> taps;  // [axis][output index]
  double extrapolation = 0;
};
StatusOr<ResizePlan> PlanResize(const KernelContext& ctx, const std::vector<int64_t>& in_dims);

// A DFT node's geometry (opset 17: input [batch, signal..., 1 or 2], dft_length as input 1 of
// `ctx` where given, the axis attribute; DFT-20's axis input is lowered to it at import): the
// signal axis, the samples along it, the transform's points (the samples truncated or padded with
// zeros to dft_length), the bins kept (points / 2 + 1 when onesided), forward or inverse, and the
// output dims. Shared by the reference kernel and the import's rewrite into a matrix product
// (canonicalize.cc). Errors name the attribute or input at fault.
struct DftPlan {
  int64_t axis = 0, length = 0, points = 0, bins = 0;
  bool complex_input = false, inverse = false;
  std::vector<int64_t> out_dims;
};
StatusOr<DftPlan> PlanDft(const KernelContext& ctx, const std::vector<int64_t>& x_dims);

// An STFT node's geometry (signal [batch, length] or [batch, length, 1 or 2]; frame_step, the
// window and frame_length as inputs 1 to 3 of `ctx`): frames of `frame` samples every `step`,
// each the DFT of its samples times the window (nullptr: none), its first `bins` outputs kept
// (frame / 2 + 1 when onesided, the default); output [batch, frames, bins, 2]. Errors name the
// input at fault.
struct StftPlan {
  int64_t frame = 0, step = 0, frames = 0, bins = 0;
  bool complex_input = false;
  const HostTensor* window = nullptr;
  std::vector<int64_t> out_dims;
};
StatusOr<StftPlan> PlanStft(const KernelContext& ctx, const std::vector<int64_t>& signal_dims);

// Kernels refuse to create tensors with more elements than this (a corrupt or adversarial shape
// must give an error, not exhaust memory).
inline constexpr int64_t kMaxKernelElements = int64_t{1} << 27;

// Helpers shared by the kernel files.
Status RequireInputs(const KernelContext& ctx, int n);
// Error unless dims are valid and hold at most kMaxKernelElements elements.
Status CheckSize(const std::vector<int64_t>& dims, const std::string& what);
// Normalizes a possibly negative axis against a rank; error if out of range.
StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const std::string& what);
// Numpy broadcast of two shapes.
StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a,
                                             const std::vector<int64_t>& b);
// For every element of `out` (row-major), the flat index into a tensor of dims `in` broadcast
// to `out`.
std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& out,
                                    const std::vector<int64_t>& in);
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// y = a OP b for float a and b broadcast to `dims` (their numpy broadcast), OP one of Add, Sub,
// Mul, Div, in float by strides (the same floats as computed in double and rounded); `y` may be
// a's own data where a's dims are `dims` (each element is read before it is written). False for
// other operators or types.
bool FloatArithmeticInto(const std::string& op, const std::vector<int64_t>& dims,
                         const HostTensor& a, const HostTensor& b, float* y);

// One step of a row-major walk over idx->size() axes, axis d of size size(d), carrying two
// offsets that move by stride_a(d) and stride_b(d) along it (an input's and an output's): false
// once past the last index.
template <class Size, class StrideA, class StrideB>
bool NextOffsets(std::vector<int64_t>* idx, Size size, StrideA stride_a, StrideB stride_b,
                 int64_t* a, int64_t* b) {
  for (int d = static_cast<int>(idx->size()) - 1; d >= 0; --d) {
    if (++(*idx)[d] < size(d)) {
      *a += stride_a(d);
      *b += stride_b(d);
      return true;
    }
    *a -= stride_a(d) * (size(d) - 1);
    *b -= stride_b(d) * (size(d) - 1);
    (*idx)[d] = 0;
  }
  return false;
}
// The parts (one rank and type, equal outside `axis`, a normalized axis) joined along `axis`.
StatusOr<HostTensor> ConcatTensors(const std::vector<const HostTensor*>& parts, int64_t axis);
// Elements of x with index range [begin, begin+len) along `axis`.
HostTensor SliceAxis(const HostTensor& x, int64_t axis, int64_t begin, int64_t len);
// x with its axes permuted (output axis i is input axis perm[i]), elements in their own type.
HostTensor TransposeTensor(const HostTensor& x, const std::vector<int64_t>& perm);

}  // namespace verisub::runtime
