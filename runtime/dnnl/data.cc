// Data movement: concat (merged nested concats), reshape-like operators (free: the output
// shares the input's row-major buffer), transpose (a strided reorder), split (reorders of
// sub-tensors).
#include <algorithm>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/dnnl/fusion.h"
#include "runtime/onnx_kernels.h"
#include "specs/layout.h"
#include "specs/ops/pad.h"
#include "specs/ops/slice.h"
#include "specs/ops/split.h"
#include "specs/ops/transpose.h"

namespace verisub::runtime::dnnl_backend {
namespace {

// A channel concat of one image in a layout that cuts along channels (plain, or blocked by B
// with every input's channel count a multiple of B): every input is a contiguous piece of the
// output, so the producers write into the output's buffer and no copy runs; an input stored in
// another layout is converted straight into its piece. The layout is the one assigned to the
// output, else the first input's. When the inputs begin with exactly the inputs of an earlier
// such concat (DenseNet: every layer concatenates all the features before it), that concat
// becomes the prefix of this one's buffer: each feature map is written once, where every later
// concat reads it. fusion.cc's MarkConcatsInPlace predicts this on the graph for the layout DP.
bool ConcatInPlace(KernelBuilder& b, const std::vector<int>& inputs, int axis, int y) {
  const auto& yd = b.dims(y);
  if (axis != 1 || yd.size() != 4 || yd[0] != 1 || inputs.empty()) return false;
  std::optional<specs::Layout> layout;
  if (auto a = b.AssignedLayout(y);
      a && CutsAlongChannels(*a) && b.OutputType(y) == memory::data_type::f32) {
    layout = *a;
  } else {
    for (specs::Layout l : kChannelCutLayouts)
      if (b.slot(inputs[0]).desc == *LayoutDesc(b.dims(inputs[0]), l)) layout = l;
  }
  if (!layout) return false;
  const int64_t block = specs::LayoutChannelBlock(*layout);
  std::vector<Desc> want;  // per input: its piece's descriptor
  for (int v : inputs) {
    if (v == kNoValue || b.dims(v).size() != 4 || b.dims(v)[1] % block != 0) return false;
    want.push_back(*LayoutDesc(b.dims(v), *layout));
  }
  // Input k as a piece of the output: itself when stored in the layout, else its converted copy
  // (one an earlier kernel made, or -1: one to make here).
  auto piece = [&](size_t k) {
    const int v = inputs[k];
    return b.slot(v).desc == want[k] ? v : b.FindConverted(v, want[k]);
  };
  // An earlier in-place concat over a prefix of the inputs, holding the first input.
  int prefix = -1;
  size_t skip = 0;
  const int first = piece(0);
  const int root = first < 0 ? -1 : b.RootOf(first);
  if (const std::vector<int>* earlier = root < 0 ? nullptr : b.PlacedConcat(root);
      earlier && root != y && earlier->size() < inputs.size() &&
      std::equal(earlier->begin(), earlier->end(), inputs.begin())) {
    const Slot& r = b.slot(root);
    if (!r.graph_input && !r.graph_output && r.dims.size() == 4 &&
        r.desc == *LayoutDesc(r.dims, *layout)) {
      prefix = root;
      skip = earlier->size();
    }
  }
  // An input whose buffer cannot move into the output's (a graph input or output, a value that
  // shares its buffer: a piece of a split, a reshape's) is copied into its piece.
  auto copied = [&](int v) {
    const Slot& s = b.slot(v);
    return s.graph_input || s.graph_output || b.Shared(v);
  };
  size_t total = prefix >= 0 ? b.slot(prefix).desc.get_size() : 0;
  for (size_t k = skip; k < inputs.size(); ++k) {
    const int v = inputs[k], p = piece(k);
    const Slot& s = b.slot(v);
    if (s.constant || s.host ||
        std::find(inputs.begin(), inputs.begin() + k, v) != inputs.begin() + k)
      return false;
    if (p >= 0 && p != v && b.Shared(p)) return false;
    total += want[k].get_size();
  }
  Desc out = *LayoutDesc(yd, *layout);
  if (total != out.get_size()) return false;
  size_t offset = 0;
  if (prefix >= 0) {
    b.Place(prefix, y, 0);
    offset = b.slot(prefix).desc.get_size();
  }
  for (size_t k = skip; k < inputs.size(); ++k) {
    const int v = inputs[k];
    // (Converted copies even where the descriptors agree.) A copy another concat placed in its
    // buffer stays there: this concat gets a copy of its own (RAFT's ConvGRU concatenates its
    // input features to the hidden state and again to the reset hidden state).
    int p = b.slot(v).desc == want[k] && !copied(v) ? v : b.Converted(v, want[k]);
    if (p != v && b.Shared(p)) p = b.Converted(v, want[k], /*fresh=*/true);
    b.Place(p, y, offset);
    offset += b.slot(p).desc.get_size();
  }
  b.mutable_slot(y).desc = out;
  b.mutable_slot(y).alias_of = -1;
  b.RecordPlacedConcat(y, inputs);
  return true;
}

Status ConcatKernel(KernelBuilder& b) {
  const Group& grp = b.group();
  const Node& n = b.node();
  std::vector<int> inputs = grp.concat_inputs.empty() ? n.inputs : grp.concat_inputs;
  int axis = ConcatAxis(b.graph(), n);
  if (!b.AllDnnl() || axis < 0 || n.outputs.size() != 1) return Unimplemented("concat: inputs");
  for (int v : inputs)
    if (v == kNoValue || b.slot(v).host) return Unimplemented("concat: host input");
  int y = grp.output;
  if (ConcatInPlace(b, inputs, axis, y)) return Status::Ok();
  std::vector<Desc> srcs;
  for (int v : inputs) srcs.push_back(b.StoredDesc(v));
  Desc dst(b.dims(y), memory::data_type::f32, memory::format_tag::any);
  dnnl::concat::primitive_desc pd(dst, axis, srcs, b.engine());
  for (size_t k = 0; k < inputs.size(); ++k)
    b.Read(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(k), inputs[k],
           pd.src_desc(static_cast<int>(k)));
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());
  b.Emit(dnnl::concat(pd));
  return Status::Ok();
}

// Reshape, Flatten, Squeeze, Unsqueeze: the output dims are known, the data is the input's.
Status ReshapeKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (n.inputs.empty() || n.outputs.size() != 1 || !b.Dnnl(n.inputs[0]) || !b.Dnnl(n.outputs[0]))
    return Unimplemented("reshape: inputs");
  int x = n.inputs[0], y = n.outputs[0];
  if (CountElements(b.dims(x)) != CountElements(b.dims(y))) return Unimplemented("reshape");
  if (b.constant(x)) return Unimplemented("reshape of a weight");
  // A plain tensor (of either type) is aliased; anything else is made plain float32 first.
  const Desc& stored = b.slot(x).desc;
  const memory::data_type type = stored.data_type();
  if (type == memory::data_type::bf16 && stored == PlainDesc(b.dims(x), type)) {
    b.Alias(y, x, PlainDesc(b.dims(y), type));
    return Status::Ok();
  }
  b.Alias(y, b.PlainFloat(x), PlainDesc(b.dims(y)));
  return Status::Ok();
}

// The layout without blocks (plain, nhwc, col_major) whose descriptor `id` is stored in, if any.
std::optional<specs::Layout> StridedLayoutOf(KernelBuilder& b, int id) {
  const Desc& stored = b.slot(id).desc;
  for (specs::Layout l : {specs::Layout::kPlain, specs::Layout::kNHWC, specs::Layout::kColMajor})
    if (auto d = LayoutDesc(b.dims(id), l, stored.data_type()); d && *d == stored) return l;
  return std::nullopt;
}

// Whether every reader of `y` is a matrix product (which reads a strided operand in place,
// MatmulKernel) and `y` is no graph output.
bool ReadOnlyByMatmuls(KernelBuilder& b, int y) {
  const auto& readers = b.ReadersOf(y);
  return !b.slot(y).graph_output && !readers.empty() &&
         std::all_of(readers.begin(), readers.end(), [&](const std::pair<int, int>& r) {
           const Node& n = b.graph().node(r.first);
           return n.op == specs::OpKind::kMatmul ||
                  (n.opaque() && n.domain.empty() && n.op_type == "MatMul");
         });
}

// Whether `perm` keeps every axis but the last two, which it swaps.
bool SwapsTheLastTwoAxes(const std::vector<int>& perm) {
  const int r = static_cast<int>(perm.size());
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2) return false;
  for (int d = 0; d + 2 < r; ++d)
    if (perm[d] != d) return false;
  return true;
}

Status TransposeKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!b.AllDnnl() || n.outputs.size() != 1) return Unimplemented("transpose: inputs");
  int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  std::vector<int> perm;
  if (n.op) {
    perm = specs::DecodePerm(n.params[specs::ops::kTransposePerm]);
  } else {
    KernelContext ctx(*n.onnx, b.Opset(), {});
    for (int64_t p : ctx.AttrInts("perm")) perm.push_back(static_cast<int>(p));
    if (perm.empty())
      for (int d = static_cast<int>(xd.size()) - 1; d >= 0; --d) perm.push_back(d);
  }
  if (perm.size() != xd.size()) return Unimplemented("transpose: perm");
  for (int p : perm)
    if (p < 0 || p >= static_cast<int>(xd.size())) return Unimplemented("transpose: perm");
  // y in the layout assigned to it (plain without an assignment or for a blocked one).
  specs::Layout y_layout = b.AssignedLayout(y).value_or(specs::Layout::kPlain);
  if (specs::LayoutChannelBlock(y_layout) > 1) y_layout = specs::Layout::kPlain;
  // Only a renaming of x's dimensions in memory (channels-last NCHW read as NHWC, and back): y
  // is x's buffer.
  // (A constant is read as plain: its stored descriptor is not where its data is.)
  const std::optional<specs::Layout> x_layout =
      b.constant(x) ? std::nullopt : StridedLayoutOf(b, x);
  if (x_layout && specs::TransposeIsRelabeling(xd, *x_layout, perm, y_layout)) {
    if (auto yd = LayoutDesc(b.dims(y), y_layout, b.slot(x).desc.data_type())) {
      b.Alias(y, x, *yd);
      return Status::Ok();
    }
  }
  // Otherwise a strided reorder: x read where it is stored when that layout has no blocks (else
  // converted to plain), y written in its layout.
  const specs::Layout read = x_layout.value_or(specs::Layout::kPlain);
  const auto x_strides = specs::LayoutStrides(xd, read);
  const auto src = LayoutDesc(xd, read);
  const auto dst = LayoutDesc(b.dims(y), y_layout);
  if (!x_strides || !src || !dst) return Unimplemented("transpose: layouts");
  memory::dims ydims, ystrides;
  for (int p : perm) {
    ydims.push_back(xd[p]);
    ystrides.push_back((*x_strides)[p]);
  }
  Desc view(ydims, memory::data_type::f32, ystrides);
  // The last two axes swapped, read only by matrix products (attention's k^T over whole
  // matrices, Swin's): y is x's buffer seen through the swapped strides, which the products read
  // as a transposed operand (oneDNN's brgemm matmul takes it), no copy. Not other permutations:
  // BERT's heads split out of [tokens, heads, 64] (matrices interleaved, a batch stride of 64)
  // read in place made its attention products slower than the copies they saved (7.1-7.5 ms
  // against 6.6-7.1 ms a run). A reader that cannot read it converts it then.
  if (x_layout.has_value() && read == specs::Layout::kPlain && SwapsTheLastTwoAxes(perm) &&
      b.slot(x).desc.data_type() == memory::data_type::f32 &&
      b.OutputType(y) == memory::data_type::f32 && y_layout == specs::Layout::kPlain &&
      ReadOnlyByMatmuls(b, y) && MatmulReadsStrided()) {
    b.Alias(y, x, view);
    b.CountVariant(kTransposeReadInPlace);
    return Status::Ok();
  }
  dnnl::reorder::primitive_desc pd(b.engine(), view, b.engine(), *dst);
  b.Read(DNNL_ARG_SRC, x, *src);
  b.View(DNNL_ARG_SRC, view);
  b.Write(DNNL_ARG_DST, y, *dst);
  b.Emit(dnnl::reorder(pd));
  return Status::Ok();
}

// A sub-tensor that is one contiguous piece of x's buffer (a channel split of one image stored
// plain, or blocked with the piece on whole blocks: an Inception-style merged convolution's
// outputs, ShuffleNet's halves): y is that piece of x's buffer, no copy. Not where y is a graph
// output or is wanted in another layout, nor for constants. The pieces share x's buffer, so a
// later kernel writes over one only when x and every other piece are dead (Overwritable).
bool SubTensorInPlace(KernelBuilder& b, int x, int y, const memory::dims& offsets) {
  const Slot& xs = b.slot(x);
  if (b.constant(x) || xs.host || b.slot(y).graph_output) return false;
  const std::vector<int64_t>& xd = b.dims(x);
  const std::vector<int64_t>& yd = b.dims(y);
  const std::optional<specs::Layout> l = LayoutOf(xs.desc, xd);
  if (!l || !CutsAlongChannels(*l) || xs.desc.data_type() != b.OutputType(y)) return false;
  if (auto want = b.AssignedLayout(y); want && *want != *l) return false;
  const std::optional<int64_t> at = specs::ContiguousPieceOffset(
      xd, yd, std::vector<int64_t>(offsets.begin(), offsets.end()), *l);
  const std::optional<Desc> piece = LayoutDesc(yd, *l, xs.desc.data_type());
  if (!at || !piece) return false;
  const size_t bytes = static_cast<size_t>(*at) * memory::data_type_size(xs.desc.data_type());
  b.Alias(y, x, *piece);
  b.Place(y, x, bytes);
  return true;
}

// y = the sub-tensor of x at `offsets` with y's dims: a reorder from a view of x's buffer into y.
// x is read in the layout it is stored in where the view fits it (channels-last anywhere; a
// blocked layout where the channel offset and count are whole blocks: YOLO's C2f halves), else
// as row-major; y is written in the layout assigned to it, else in x's. So a split between
// channels-last or blocked convolutions converts nothing.
void CopySubTensor(KernelBuilder& b, int x, int y, const memory::dims& offsets) {
  if (SubTensorInPlace(b, x, y, offsets)) return;
  const std::vector<int64_t>& xd = b.dims(x);
  const std::vector<int64_t>& yd = b.dims(y);
  specs::Layout read = specs::Layout::kPlain;
  if (!b.constant(x))
    if (std::optional<specs::Layout> l = LayoutOf(b.slot(x).desc, xd)) {
      const int64_t block = specs::LayoutChannelBlock(*l);
      if (block == 1 || (xd.size() > 1 && offsets[1] % block == 0 && yd[1] % block == 0)) read = *l;
    }
  const Desc whole = LayoutDesc(xd, read).value_or(PlainDesc(xd));
  const Desc part = whole.submemory_desc(yd, offsets);
  const specs::Layout write = b.AssignedLayout(y).value_or(read);
  const Desc dst = LayoutDesc(yd, write).value_or(PlainDesc(yd));
  dnnl::reorder::primitive_desc pd(b.engine(), part, b.engine(), dst);
  b.Read(DNNL_ARG_SRC, x, whole);
  b.View(DNNL_ARG_SRC, part);
  b.Write(DNNL_ARG_DST, y, dst);
  b.Emit(dnnl::reorder(pd));
}

// y = the view of x's row-major buffer with y's dims (or `view_dims`, y's element count),
// `strides` and an offset of `offset` elements: a strided reorder into y (row-major).
void CopyView(KernelBuilder& b, int x, int y, const memory::dims& view_dims,
              const memory::dims& strides, int64_t offset) {
  Desc view(view_dims, memory::data_type::f32, strides);
  view.data.offset0 = offset;
  const Desc dst = PlainDesc(b.dims(y));
  const Desc dst_as = dst.reshape(view_dims);
  dnnl::reorder::primitive_desc pd(b.engine(), view, b.engine(), dst_as);
  b.Read(DNNL_ARG_SRC, x, PlainDesc(b.dims(x)));
  b.View(DNNL_ARG_SRC, view);
  b.Write(DNNL_ARG_DST, y, dst);
  b.View(DNNL_ARG_DST, dst_as);
  b.Emit(dnnl::reorder(pd));
}

memory::dims RowMajor(const std::vector<int64_t>& dims) {
  memory::dims s(dims.size());
  int64_t acc = 1;
  for (size_t d = dims.size(); d-- > 0;) s[d] = acc, acc *= dims[d];
  return s;
}

// ONNX Gather of one constant index along an axis (a transformer's q, k, v = qkv[0], qkv[1],
// qkv[2]): the sub-tensor at that index, a strided reorder.
Status GatherKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (n.inputs.size() != 2 || n.outputs.size() != 1 || !b.Dnnl(n.inputs[0]) ||
      !b.Dnnl(n.outputs[0]) || b.constant(n.inputs[0]))
    return Unimplemented("gather: inputs");
  const HostTensor* index = b.constant(n.inputs[1]);
  if (!index || !IsIntegerType(index->elem_type) || index->NumElements() != 1)
    return Unimplemented("gather: indices other than one constant");
  const int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  KernelContext ctx(*n.onnx, b.Opset(), {});
  auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), static_cast<int64_t>(xd.size()), "Gather");
  if (!axis.ok()) return Unimplemented("gather: axis");
  int64_t i = index->IntAt(0);
  if (i < 0) i += xd[*axis];
  if (i < 0 || i >= xd[*axis]) return Unimplemented("gather: index out of range");
  const memory::dims xs = RowMajor(xd);
  memory::dims dims(xd.begin(), xd.end()), strides = xs;
  dims[*axis] = 1;
  if (CountElements(b.dims(y)) != CountElements(std::vector<int64_t>(dims.begin(), dims.end())))
    return Unimplemented("gather: output");
  CopyView(b, x, y, dims, strides, i * xs[*axis]);
  return Status::Ok();
}

Status SplitKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (n.inputs.empty() || !b.Dnnl(n.inputs[0])) return Unimplemented("split: inputs");
  int x = n.inputs[0];
  const auto& xd = b.dims(x);
  int64_t axis;
  if (n.op) {
    axis = n.params[specs::ops::kSplitAxis];
  } else {
    KernelContext ctx(*n.onnx, b.Opset(), {});
    auto a = NormalizeAxis(ctx.AttrInt("axis", 0), static_cast<int64_t>(xd.size()), "Split");
    if (!a.ok()) return Unimplemented("split: axis");
    axis = *a;
  }
  int64_t offset = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    int y = n.outputs[k];
    if (!b.Dnnl(y)) return Unimplemented("split: omitted or host output");
    const auto& yd = b.dims(y);
    memory::dims offsets(xd.size(), 0);
    offsets[axis] = offset;
    offset += yd[axis];
    CopySubTensor(b, x, y, offsets);
  }
  if (offset != xd[axis]) return Unimplemented("split: sizes");
  return Status::Ok();
}

// ONNX Slice with positive steps (ShuffleNet's channel split, a transformer's q/k/v split, a
// patch merge's every other row): a reorder of the (strided) sub-tensor into the output. Starts,
// ends, axes and steps must be constants (opset >= 10 inputs, or opset 1 attributes).
Status SliceKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (n.inputs.empty() || n.outputs.size() != 1 || !b.Dnnl(n.inputs[0]) || !b.Dnnl(n.outputs[0]))
    return Unimplemented("slice: inputs");
  const int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  const auto& yd = b.dims(y);
  const int64_t rank = static_cast<int64_t>(xd.size());
  if (static_cast<int64_t>(yd.size()) != rank || b.constant(x)) return Unimplemented("slice");
  std::vector<int64_t> starts, axes, steps;
  if (b.Opset() < 10) {
    KernelContext ctx(*n.onnx, b.Opset(), {});
    starts = ctx.AttrInts("starts");
    axes = ctx.AttrInts("axes");
  } else {
    auto ints = [&](size_t k) -> std::optional<std::vector<int64_t>> {
      if (k >= n.inputs.size() || n.inputs[k] == kNoValue) return std::vector<int64_t>();
      const HostTensor* t = b.constant(n.inputs[k]);
      if (!t || !IsIntegerType(t->elem_type)) return std::nullopt;
      return t->ToInts();
    };
    auto s = ints(1), a = ints(3), st = ints(4);
    if (!s || !a || !st) return Unimplemented("slice: bounds are not constant");
    starts = *s, axes = *a, steps = *st;
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (axes.size() != starts.size() || (!steps.empty() && steps.size() != starts.size()))
    return Unimplemented("slice: bounds");
  memory::dims offsets(rank, 0), step(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    if (!steps.empty() && steps[i] < 1) return Unimplemented("slice: steps below 1");
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return Unimplemented("slice: axis");
    int64_t start = starts[i] < 0 ? starts[i] + xd[a] : starts[i];
    offsets[a] = std::clamp<int64_t>(start, 0, xd[a]);
    if (!steps.empty()) step[a] = steps[i];
  }
  for (int64_t a = 0; a < rank; ++a)
    if (yd[a] > 0 && offsets[a] + (yd[a] - 1) * step[a] >= xd[a])
      return Unimplemented("slice: output extent");
  if (std::all_of(step.begin(), step.end(), [](int64_t s) { return s == 1; })) {
    CopySubTensor(b, x, y, offsets);
    return Status::Ok();
  }
  // Steps above 1 (a patch merge's x[:, 0::2, 1::2, :]): a strided view.
  const memory::dims xs = RowMajor(xd);
  memory::dims strides(rank);
  int64_t offset = 0;
  for (int64_t a = 0; a < rank; ++a) {
    strides[a] = xs[a] * step[a];
    offset += offsets[a] * xs[a];
  }
  CopyView(b, x, y, yd, strides, offset);
  return Status::Ok();
}

// The slice spec operator: the same reorder, its offset a parameter.
Status SpecSliceKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (n.inputs.size() != 1 || n.outputs.size() != 1 || !b.Dnnl(n.inputs[0]) ||
      !b.Dnnl(n.outputs[0]) || b.constant(n.inputs[0]))
    return Unimplemented("slice: inputs");
  const int x = n.inputs[0], y = n.outputs[0];
  memory::dims offsets(b.dims(x).size(), 0);
  offsets[n.params[specs::ops::kSliceAxis]] = n.params[specs::ops::kSliceStart];
  CopySubTensor(b, x, y, offsets);
  return Status::Ok();
}

// y = x padded by `begin` and `end` per axis in `mode` (constant `value`, reflect or edge).
Status EmitPadLoop(KernelBuilder& b, int x, int y, const std::string& mode, float value,
                   const std::vector<int64_t>& begin, const std::vector<int64_t>& end) {
  const std::vector<int64_t> xd = b.dims(x), yd = b.dims(y);
  const int64_t rank = static_cast<int64_t>(xd.size());
  // Per axis, the input index each output index reads (-1: the constant).
  std::vector<std::vector<int64_t>> map(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (yd[d] != xd[d] + begin[d] + end[d] || xd[d] < 1) return Unimplemented("pad: extents");
    if (mode == "reflect" && (begin[d] >= xd[d] || end[d] >= xd[d]) && xd[d] > 1)
      return Unimplemented("pad: a reflection wider than its axis");
    for (int64_t o = 0; o < yd[d]; ++o) map[d].push_back(PadSource(mode, o, begin[d], xd[d]));
  }
  // The last axis: the run of output indices reading the input's row in order.
  const std::vector<int64_t>& last = map[rank - 1];
  int64_t lo = 0, hi = 0;
  for (int64_t o = 0; o < yd[rank - 1]; ++o)
    if (last[o] == o - begin[rank - 1] && last[o] >= 0 && last[o] < xd[rank - 1]) {
      if (hi == lo) lo = o;
      hi = o + 1;
    }
  std::vector<int64_t> in_stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * xd[d + 1];
  const int src = b.PlainFloat(x);
  b.Define(y, PlainDesc(yd));
  b.EmitHost(
      [map, in_stride, yd, lo, hi, value, src, y, shift = begin[rank - 1]](RunState& st) -> Status {
        const float* px = static_cast<const float*>(st.mem[src].get_data_handle());
        float* py = static_cast<float*>(st.mem[y].get_data_handle());
        const size_t outer = yd.size() - 1;
        const int64_t width = yd.back();
        int64_t rows = 1;
        for (size_t d = 0; d < outer; ++d) rows *= yd[d];
        std::vector<int64_t> idx(outer, 0);
        const std::vector<int64_t>& last = map.back();
        for (int64_t row = 0; row < rows; ++row) {
          float* out = py + row * width;
          int64_t offset = 0;
          bool inside = true;
          for (size_t d = 0; d < outer && inside; ++d) {
            const int64_t i = map[d][idx[d]];
            inside = i >= 0;
            offset += i * in_stride[d];
          }
          if (!inside) {
            std::fill(out, out + width, value);
          } else {
            const float* in = px + offset;
            for (int64_t o = 0; o < lo; ++o) out[o] = last[o] < 0 ? value : in[last[o]];
            if (hi > lo) std::copy(in + lo - shift, in + hi - shift, out + lo);
            for (int64_t o = hi; o < width; ++o) out[o] = last[o] < 0 ? value : in[last[o]];
          }
          for (size_t d = outer; d-- > 0;) {  // the next row
            if (++idx[d] < yd[d]) break;
            idx[d] = 0;
          }
        }
        return Status::Ok();
      },
      {src}, {y});
  return Status::Ok();
}

// ONNX Pad in every mode of the opsets we import (constant with any value, reflect, edge) and
// any rank, negative pads (crops) included: a host loop over the output's rows, each a copy of its
// source row's interior with the border elements mapped per axis. Style-transfer networks
// reflect-pad before every convolution (twelve in Johnson et al.'s, 114 of 177 ms on the reference
// kernel).
Status PadKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!n.onnx || n.inputs.empty() || n.outputs.size() != 1 || !b.Dnnl(n.inputs[0]) ||
      !b.Dnnl(n.outputs[0]) || b.OutputType(n.outputs[0]) != memory::data_type::f32)
    return Unimplemented("pad: inputs");
  const int x = n.inputs[0], y = n.outputs[0];
  const std::vector<int64_t> xd = b.dims(x), yd = b.dims(y);
  const int64_t rank = static_cast<int64_t>(xd.size());
  if (rank < 1 || static_cast<int64_t>(yd.size()) != rank) return Unimplemented("pad: rank");
  // The pads and the value as the reference kernel reads them, where they are constants.
  auto constant = [&](size_t k) {
    return k < n.inputs.size() && n.inputs[k] != kNoValue ? b.constant(n.inputs[k]) : nullptr;
  };
  if (b.Opset() >= 11 && (!constant(1) || !IsIntegerType(constant(1)->elem_type) ||
                          (n.inputs.size() > 2 && n.inputs[2] != kNoValue && !constant(2))))
    return Unimplemented("pad: pads or value are not constant");
  const HostTensor unread;  // the data: ParsePad reads the pads and the value only
  KernelContext ctx(*n.onnx, b.Opset(), {&unread, constant(1), constant(2)});
  StatusOr<PadParams> params = ParsePad(ctx, rank);
  if (!params.ok()) return Unimplemented(params.status().message());
  const std::vector<int64_t> begin(params->pads.begin(), params->pads.begin() + rank),
      end(params->pads.begin() + rank, params->pads.end());
  return EmitPadLoop(b, x, y, params->mode, static_cast<float>(params->value), begin, end);
}

// The spec's pad (zeros or edge copies around an image) on the same loop; a pad a window reads
// is folded into that window instead (fusion.cc).
Status SpecPadKernel(KernelBuilder& b) {
  namespace ops = specs::ops;
  const Node& n = b.node();
  if (n.inputs.size() != 1 || n.outputs.size() != 1 || !b.Dnnl(n.inputs[0]) ||
      !b.Dnnl(n.outputs[0]) || b.OutputType(n.outputs[0]) != memory::data_type::f32 ||
      b.dims(n.inputs[0]).size() != 4)
    return Unimplemented("pad: inputs");
  const std::vector<int64_t> a = ops::PadAmounts(n.params);
  const bool edge = ops::PadModeOf(n.params) == ops::PadMode::kEdge;
  return EmitPadLoop(b, n.inputs[0], n.outputs[0], edge ? "edge" : "constant", 0.f,
                     {0, 0, a[0], a[1]}, {0, 0, a[2], a[3]});
}

}  // namespace

void AddDataKernels(KernelRegistry* r) {
  r->Add("onnx:Pad", PadKernel);
  r->Add("pad", SpecPadKernel);
  r->Add("onnx:Slice", SliceKernel);
  r->Add("slice", SpecSliceKernel);
  r->Add("concat", ConcatKernel);
  r->Add("onnx:Concat", ConcatKernel);
  for (const char* k :
       {"reshape", "onnx:Reshape", "onnx:Flatten", "onnx:Squeeze", "onnx:Unsqueeze"})
    r->Add(k, ReshapeKernel);
  r->Add("transpose", TransposeKernel);
  r->Add("onnx:Transpose", TransposeKernel);
  r->Add("onnx:Gather", GatherKernel);
  r->Add("split", SplitKernel);
  r->Add("onnx:Split", SplitKernel);
}

}  // namespace verisub::runtime::dnnl_backend
