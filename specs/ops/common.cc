// Helpers shared by the operator files.
#include "specs/ops/common.h"

namespace verisub::specs::ops {

std::string InputName(int i) { return "input " + std::to_string(i); }

Status ExpectRank(const TensorType& t, int i, int rank) {
  if (t.shape.rank != rank)
    return InvalidArgument(InputName(i) + " must have rank " + std::to_string(rank) + ", got " +
                           t.shape.ToString());
  return ExpectPositiveDims(t, i);
}

Status ExpectRankAtLeast(const TensorType& t, int i, int rank) {
  if (t.shape.rank < rank)
    return InvalidArgument(InputName(i) + " must have rank >= " + std::to_string(rank) + ", got " +
                           t.shape.ToString());
  return ExpectPositiveDims(t, i);
}

Status ExpectPositiveDims(const TensorType& t, int i) {
  for (int d = 0; d < t.shape.rank; ++d)
    if (t.shape[d] < 1)
      return InvalidArgument(InputName(i) + " has a non-positive dimension: " + t.shape.ToString());
  return Status::Ok();
}

Status BroadcastTypes(const TensorType& a, const TensorType& b, TensorType* out) {
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(a, 0));
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(b, 1));
  int rank = std::max(a.shape.rank, b.shape.rank);
  *out = TensorType();
  out->shape.rank = rank;
  for (int j = 0; j < rank; ++j) {
    int ia = j - (rank - a.shape.rank), ib = j - (rank - b.shape.rank);
    int64_t da = ia >= 0 ? a.shape[ia] : 1, db = ib >= 0 ? b.shape[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return InvalidArgument("shapes " + a.shape.ToString() + " and " + b.shape.ToString() +
                             " do not broadcast (dimension " + std::to_string(j) + ")");
    out->shape[j] = std::max(da, db);
    SplitTree ta = (ia >= 0 && da == out->shape[j]) ? a.trees[ia] : nullptr;
    SplitTree tb = (ib >= 0 && db == out->shape[j]) ? b.trees[ib] : nullptr;
    out->trees[j] = MergeTrees(ta, tb);
  }
  return Status::Ok();
}

Status WindowGeometry(const char* dim, int64_t in, int64_t k, int64_t stride, Padding padding,
                      int64_t* out, int64_t* pad) {
  if (k < 1 || stride < 1)
    return InvalidArgument(std::string("window ") + dim + " must be positive");
  if (padding == Padding::kSame) {
    if (k % 2 == 0)
      return InvalidArgument(std::string("padding=same needs an odd window along ") + dim +
                             ", got " + std::to_string(k));
    *pad = (k - 1) / 2;
  } else {
    *pad = 0;
    if (k > in)
      return InvalidArgument(std::string("window ") + std::to_string(k) +
                             " is larger than the input (" + std::to_string(in) + ") along " + dim +
                             " with padding=valid");
  }
  *out = (in + 2 * *pad - k) / stride + 1;
  return Status::Ok();
}

ParamDesc ActivationParam(int slot) {
  ParamDesc d;
  d.name = "activation";
  d.type = ParamType::kEnum;
  d.slot = slot;
  d.names = {{0, "none"}, {1, "relu"}, {2, "sigmoid"}, {3, "tanh"}};
  d.domain = {0, 1, 2, 3};
  return d;
}

ParamDesc PaddingParam(int slot) {
  ParamDesc d;
  d.name = "padding";
  d.type = ParamType::kEnum;
  d.slot = slot;
  d.names = {{0, "same"}, {1, "valid"}};
  d.domain = {0, 1};
  return d;
}

ParamDesc IntParam(const char* name, int slot, std::vector<int64_t> domain) {
  ParamDesc d;
  d.name = name;
  d.type = ParamType::kInt;
  d.slot = slot;
  d.domain = std::move(domain);
  return d;
}

ParamDesc AxisParam(int slot) {
  ParamDesc d = IntParam("axis", slot, {0, 1, 2, 3});
  d.min_value = 0;
  return d;
}

}  // namespace verisub::specs::ops
