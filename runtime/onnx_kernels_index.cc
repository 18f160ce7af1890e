// Reference kernels of the ONNX operators that address elements by computed indices: ScatterND
// (vision transformers build their shifted-window masks with it) and Einsum (any equation, in
// double; MaxViT's attention is written as two).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>

#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

// out[i] = in[j] for tensors of one element type (the storage follows the element class).
void CopyElement(const HostTensor& in, int64_t j, HostTensor* out, int64_t i) {
  if (!in.f32.empty())
    out->f32[i] = in.f32[j];
  else if (!in.f64.empty())
    out->f64[i] = in.f64[j];
  else
    out->ints[i] = in.ints[j];
}

// Element j of `upd` into element i of `y`: written (reduction "none") or combined with it by
// add, mul, max or min (ScatterND's and ScatterElements' reductions).
void Scatter(const std::string& reduction, const HostTensor& upd, int64_t j, HostTensor* y,
             int64_t i) {
  if (reduction == "none") return CopyElement(upd, j, y, i);
  const double a = y->DoubleAt(i), b = upd.DoubleAt(j);
  const double v = reduction == "add"   ? a + b
                   : reduction == "mul" ? a * b
                   : reduction == "max" ? std::max(a, b)
                                        : std::min(a, b);
  CopyElement(HostTensor::FromDoubles(y->elem_type, {1}, {v}), 0, y, i);
}

Status ScatterND(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
  const HostTensor &data = *ctx.input(0), &ind = *ctx.input(1), &upd = *ctx.input(2);
  const std::string reduction = ctx.AttrString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
      reduction != "min")
    return InvalidArgument("ScatterND: unknown reduction '" + reduction + "'");
  if (upd.elem_type != data.elem_type)
    return InvalidArgument("ScatterND: updates of another type than the data");
  if (ind.dims.empty()) return InvalidArgument("ScatterND: indices of rank 0");
  const int64_t r = static_cast<int64_t>(data.dims.size());
  const int64_t k = ind.dims.back();
  if (k < 1 || k > r) return InvalidArgument("ScatterND: index length outside 1..rank");
  // updates' shape is indices.shape[:-1] + data.shape[k:].
  std::vector<int64_t> want(ind.dims.begin(), ind.dims.end() - 1);
  want.insert(want.end(), data.dims.begin() + k, data.dims.end());
  if (upd.dims != want)
    return InvalidArgument("ScatterND: updates " + DimsToString(upd.dims) + ", expected " +
                           DimsToString(want));
  int64_t slice = 1;
  for (int64_t d = k; d < r; ++d) slice *= data.dims[d];
  const std::vector<int64_t> strides = RowMajorStrides(data.dims);
  const std::vector<int64_t> idx = ind.ToInts();
  const int64_t tuples = k ? static_cast<int64_t>(idx.size()) / k : 0;
  HostTensor y = data;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t base = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t p = idx[t * k + d];
      if (p < 0) p += data.dims[d];
      if (p < 0 || p >= data.dims[d]) return InvalidArgument("ScatterND: index out of range");
      base += p * strides[d];
    }
    for (int64_t e = 0; e < slice; ++e) Scatter(reduction, upd, t * slice + e, &y, base + e);
  }
  (*out)[0] = std::move(y);
  return Status::Ok();
}

// ScatterElements (and its opset-9 name Scatter): data with updates[i] written at data's index i
// with axis `axis` replaced by indices[i] (negative counted from the end), combined by the
// reduction (opset 16: add, mul; opset 18 also max, min). GNN message passing and index_put.
Status ScatterElements(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
  const HostTensor &data = *ctx.input(0), &ind = *ctx.input(1), &upd = *ctx.input(2);
  const std::string op = ctx.op_type();
  const std::string reduction = ctx.AttrString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
      reduction != "min")
    return InvalidArgument(op + ": unknown reduction '" + reduction + "'");
  if (upd.elem_type != data.elem_type)
    return InvalidArgument(op + ": updates of another type than the data");
  const int64_t r = static_cast<int64_t>(data.dims.size());
  if (ind.dims != upd.dims || static_cast<int64_t>(ind.dims.size()) != r)
    return InvalidArgument(op + ": indices " + DimsToString(ind.dims) + " and updates " +
                           DimsToString(upd.dims) + " must have one shape of the data's rank");
  VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrInt("axis", 0), r, op));
  for (int64_t d = 0; d < r; ++d)
    if (d != axis && ind.dims[d] > data.dims[d])
      return InvalidArgument(op + ": indices reach past the data on axis " + std::to_string(d));
  const std::vector<int64_t> strides = RowMajorStrides(data.dims);
  const std::vector<int64_t> idx = ind.ToInts();
  std::vector<int64_t> pos(r, 0);
  HostTensor y = data;
  // Float elements written in place (Faster R-CNN scatters millions of pooled features).
  float* fy = reduction == "none" && y.elem_type == kFloat ? y.f32.data() : nullptr;
  int64_t base = 0;  // the offset of `pos` with the axis' coordinate left out
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t p = idx[i];
    if (p < 0) p += data.dims[axis];
    if (p < 0 || p >= data.dims[axis])
      return InvalidArgument(op + ": index " + std::to_string(idx[i]) + " out of range for a " +
                             "dimension of " + std::to_string(data.dims[axis]));
    const int64_t at = base + p * strides[axis];
    if (fy)
      fy[at] = upd.f32[i];
    else
      Scatter(reduction, upd, static_cast<int64_t>(i), &y, at);
    for (int64_t d = r - 1; d >= 0; --d) {  // the next index of `indices`
      const int64_t step = d == axis ? 0 : strides[d];
      if (++pos[d] < ind.dims[d]) {
        base += step;
        break;
      }
      base -= step * (pos[d] - 1);
      pos[d] = 0;
    }
  }
  (*out)[0] = std::move(y);
  return Status::Ok();
}

// OneHot(indices, depth, values [off, on]): a new axis of `depth` at `axis`, `on` where the
// index (negative counted from depth) is, `off` elsewhere; an index outside gives all `off`.
Status OneHot(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
  const HostTensor &ind = *ctx.input(0), &depth_t = *ctx.input(1), &values = *ctx.input(2);
  if (depth_t.NumElements() != 1 || values.NumElements() != 2)
    return InvalidArgument("OneHot: depth must be one number and values two");
  const double dd = depth_t.DoubleAt(0);
  if (!(dd >= 1 && dd <= 1e9)) return InvalidArgument("OneHot: depth must be in 1..1e9");
  const int64_t depth = static_cast<int64_t>(dd);
  const int64_t r = static_cast<int64_t>(ind.dims.size());
  VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrInt("axis", -1), r + 1, "OneHot"));
  std::vector<int64_t> dims = ind.dims;
  dims.insert(dims.begin() + axis, depth);
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "OneHot"));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= ind.dims[d];
  for (int64_t d = axis; d < r; ++d) inner *= ind.dims[d];
  const std::vector<double> iv = ind.ToDoubles();
  std::vector<int64_t> pick(CountElements(dims), 0);  // 0: off, 1: on
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const double e = iv[o * inner + i];
      if (!(std::fabs(e) < 1e18)) continue;  // NaN or far outside: all off
      int64_t k = static_cast<int64_t>(e);
      if (k < 0) k += depth;
      if (k >= 0 && k < depth) pick[(o * depth + k) * inner + i] = 1;
    }
  (*out)[0] = values.Gather(dims, pick);
  return Status::Ok();
}

// An Einsum equation with its ellipses expanded into letters of their own: one subscript string
// per operand and the output's.
struct EinsumTerms {
  std::vector<std::string> inputs;
  std::string output;
};

StatusOr<EinsumTerms> ParseEinsum(std::string eq, const std::vector<const HostTensor*>& ops) {
  eq.erase(std::remove_if(eq.begin(), eq.end(), [](char c) { return std::isspace(c); }), eq.end());
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ops.size())
    return InvalidArgument("Einsum: " + std::to_string(terms.size()) + " terms for " +
                           std::to_string(ops.size()) + " inputs");
  // Ellipsis dimensions are named by characters no equation uses (right-aligned, broadcast).
  const std::string kEllipsis = "0123456789";
  size_t ellipsis_rank = 0;
  EinsumTerms out;
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string t = terms[i];
    const size_t dots = t.find("...");
    const size_t rank = ops[i]->dims.size();
    if (dots != std::string::npos) {
      const size_t letters = t.size() - 3;
      if (letters > rank) return InvalidArgument("Einsum: term '" + t + "' above the rank");
      const size_t n = rank - letters;
      ellipsis_rank = std::max(ellipsis_rank, n);
      if (n > kEllipsis.size()) return InvalidArgument("Einsum: ellipsis of too many dimensions");
      t = t.substr(0, dots) + kEllipsis.substr(kEllipsis.size() - n) + t.substr(dots + 3);
    }
    for (char c : t)
      if (!std::isalpha(static_cast<unsigned char>(c)) && !std::isdigit(c))
        return InvalidArgument("Einsum: bad subscript '" + std::string(1, c) + "'");
    if (t.size() != rank)
      return InvalidArgument("Einsum: term '" + terms[i] + "' for an input of rank " +
                             std::to_string(rank));
    out.inputs.push_back(t);
  }
  const std::string ell = kEllipsis.substr(kEllipsis.size() - ellipsis_rank);
  if (arrow != std::string::npos) {
    std::string o = eq.substr(arrow + 2);
    if (size_t dots = o.find("..."); dots != std::string::npos)
      o = o.substr(0, dots) + ell + o.substr(dots + 3);
    out.output = o;
  } else {  // implicit form: the ellipsis, then the letters used once, in alphabetical order
    std::map<char, int> count;
    for (const std::string& t : out.inputs)
      for (char c : t)
        if (std::isalpha(static_cast<unsigned char>(c))) ++count[c];
    out.output = ell;
    for (auto [c, n] : count)
      if (n == 1) out.output += c;
  }
  return out;
}

Status Einsum(const KernelContext& ctx, std::vector<HostTensor>* out) {
  if (ctx.num_inputs() < 1) return InvalidArgument("Einsum: no inputs");
  std::vector<const HostTensor*> ops;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.input(i)) return InvalidArgument("Einsum: missing input");
    ops.push_back(ctx.input(i));
  }
  VERISUB_ASSIGN_OR_RETURN(EinsumTerms terms, ParseEinsum(ctx.AttrString("equation", ""), ops));
  // Every letter's extent; 1 broadcasts (ellipsis dimensions) against any other.
  std::map<char, int64_t> extent;
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t d = 0; d < terms.inputs[i].size(); ++d) {
      const char c = terms.inputs[i][d];
      const int64_t n = ops[i]->dims[d];
      auto [it, fresh] = extent.insert({c, n});
      if (!fresh && it->second != n) {
        if (it->second == 1)
          it->second = n;
        else if (n != 1)
          return InvalidArgument(std::string("Einsum: subscript '") + c + "' has extents " +
                                 std::to_string(it->second) + " and " + std::to_string(n));
      }
    }
  std::string letters = terms.output;
  for (char c : terms.output)
    if (!extent.count(c))
      return InvalidArgument(std::string("Einsum: output subscript '") + c + "' is no input's");
  for (auto [c, n] : extent)
    if (letters.find(c) == std::string::npos) letters += c;  // summed over
  const size_t nl = letters.size();
  std::vector<int64_t> size(nl);
  for (size_t l = 0; l < nl; ++l) size[l] = extent[letters[l]];
  // Per operand, the stride of each letter in its data (0 where absent or broadcast).
  std::vector<std::vector<int64_t>> stride(ops.size(), std::vector<int64_t>(nl, 0));
  std::vector<std::vector<double>> data(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::vector<int64_t> s = RowMajorStrides(ops[i]->dims);
    for (size_t d = 0; d < terms.inputs[i].size(); ++d)
      if (ops[i]->dims[d] != 1) stride[i][letters.find(terms.inputs[i][d])] += s[d];
    data[i] = ops[i]->ToDoubles();
  }
  std::vector<int64_t> out_dims(size.begin(), size.begin() + terms.output.size());
  const int64_t out_count = CountElements(out_dims);
  int64_t inner = 1;
  for (size_t l = terms.output.size(); l < nl; ++l) inner *= size[l];
  if (out_count < 0 || inner < 0) return InvalidArgument("Einsum: too many elements");
  std::vector<double> y(out_count, 0.0);
  std::vector<int64_t> pos(nl, 0), off(ops.size(), 0);
  for (int64_t o = 0; o < out_count; ++o) {
    double acc = 0;
    for (int64_t s = 0; s < inner; ++s) {
      double p = 1;
      for (size_t i = 0; i < ops.size(); ++i) p *= data[i][off[i]];
      acc += p;
      // Next index, last letter fastest (output letters first, so o follows row-major order).
      for (size_t l = nl; l-- > 0;) {
        for (size_t i = 0; i < ops.size(); ++i) off[i] += stride[i][l];
        if (++pos[l] < size[l]) break;
        for (size_t i = 0; i < ops.size(); ++i) off[i] -= stride[i][l] * size[l];
        pos[l] = 0;
      }
    }
    y[o] = acc;
  }
  (*out)[0] = HostTensor::FromDoubles(ops[0]->elem_type, out_dims, y);
  return Status::Ok();
}

}  // namespace

void AddIndexKernels(KernelTable* t) {
  KernelTable& k = *t;
  k["ScatterND"] = ScatterND;
  k["ScatterElements"] = ScatterElements;
  k["Scatter"] = ScatterElements;
  k["OneHot"] = OneHot;
  k["Einsum"] = Einsum;
}

}  // namespace verisub::runtime
