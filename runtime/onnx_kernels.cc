// The ONNX kernel table, attribute access and broadcasting helpers.
#include "runtime/onnx_kernels.h"

#include "onnx/onnx_pb.h"

namespace verisub::runtime {

const std::string& KernelContext::op_type() const { return node_.op_type(); }

const onnx::AttributeProto* KernelContext::FindAttr(std::string_view name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t KernelContext::AttrInt(std::string_view name, int64_t dflt) const {
  const auto* a = FindAttr(name);
  return a ? a->i() : dflt;
}

float KernelContext::AttrFloat(std::string_view name, float dflt) const {
  const auto* a = FindAttr(name);
  return a ? a->f() : dflt;
}

std::string KernelContext::AttrString(std::string_view name, const std::string& dflt) const {
  const auto* a = FindAttr(name);
  return a ? a->s() : dflt;
}

std::vector<int64_t> KernelContext::AttrInts(std::string_view name) const {
  const auto* a = FindAttr(name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> KernelContext::AttrFloats(std::string_view name) const {
  const auto* a = FindAttr(name);
  if (!a) return {};
  return {a->floats().begin(), a->floats().end()};
}

const KernelTable& OnnxKernels() {
  static const KernelTable* table = [] {
    auto* t = new KernelTable;
    AddElementwiseKernels(t);
    AddShapeKernels(t);
    AddNnKernels(t);
    AddLayoutKernels(t);
    AddGenerateKernels(t);
    AddIndexKernels(t);
    AddResizeKernels(t);
    AddConvTransposeKernels(t);
    AddSelectKernels(t);
    AddQuantKernels(t);
    AddRecurrentKernels(t);
    AddDetectionKernels(t);
    AddControlFlowKernels(t);
    AddSignalKernels(t);
    return t;
  }();
  return *table;
}

const OnnxKernel* FindOnnxKernel(std::string_view domain, std::string_view op_type) {
  const KernelTable& t = OnnxKernels();
  if (domain == kMicrosoftDomain) {  // ONNX Runtime's contrib operators that verisub runs
    auto it = t.find(std::string(domain) + "." + std::string(op_type));
    return it == t.end() ? nullptr : &it->second;
  }
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  auto it = t.find(op_type);
  return it == t.end() ? nullptr : &it->second;
}

Status RequireInputs(const KernelContext& ctx, int n) {
  for (int i = 0; i < n; ++i)
    if (!ctx.input(i)) return InvalidArgument(ctx.op_type() + " needs input " + std::to_string(i));
  return Status::Ok();
}

Status CheckSize(const std::vector<int64_t>& dims, const std::string& what) {
  int64_t n = CountElements(dims);
  if (n < 0 || n > kMaxKernelElements)
    return InvalidArgument(what + ": invalid or too large output shape " + DimsToString(dims));
  return Status::Ok();
}

StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const std::string& what) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return InvalidArgument(what + " axis " + std::to_string(axis) + " is out of range for rank " +
                           std::to_string(rank));
  return a;
}

StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a,
                                             const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t j = 0; j < r; ++j) {
    int64_t da = j + a.size() >= r ? a[j + a.size() - r] : 1;
    int64_t db = j + b.size() >= r ? b[j + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1)
      return InvalidArgument("shapes " + DimsToString(a) + " and " + DimsToString(b) +
                             " do not broadcast");
    out[j] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> st(dims.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= dims[i];
  }
  return st;
}

std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& out,
                                    const std::vector<int64_t>& in) {
  int64_t n = CountElements(out);
  std::vector<int64_t> index(std::max<int64_t>(n, 0));
  size_t r = out.size();
  std::vector<int64_t> in_st(r, 0);
  std::vector<int64_t> s = RowMajorStrides(in);
  for (size_t j = 0; j < in.size(); ++j)
    if (in[j] != 1) in_st[r - in.size() + j] = s[j];
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t flat = 0; flat < n; ++flat) {
    index[flat] = off;
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) {
        off += in_st[d];
        break;
      }
      off -= in_st[d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
  return index;
}

}  // namespace verisub::runtime
