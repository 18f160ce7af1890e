// pad: parameters, shape rule and axioms.
#include "specs/ops/pad.h"

namespace verisub::specs::ops {
namespace {

Status PadShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectRank(x, 0, 4));
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(x, 0));
  out[0] = x;
  out[0].shape[2] = x.shape[2] + p[kPadTop] + p[kPadBottom];
  out[0].shape[3] = x.shape[3] + p[kPadLeft] + p[kPadRight];
  out[0].trees[2] = out[0].trees[3] = nullptr;  // no concat to undo along a padded axis
  return Status::Ok();
}

ParamDesc PadAmount(const char* name, int slot) {
  ParamDesc d = IntParam(name, slot, {1});
  d.min_value = 0;
  return d;
}

}  // namespace

OpSpec PadSpec() {
  OpSpec op;
  op.kind = OpKind::kPad;
  op.name = "pad";
  op.summary = "x with top/left/bottom/right rows and columns added, zeros or copies of its edge";
  op.num_inputs = 1;
  ParamDesc mode;
  mode.name = "mode";
  mode.type = ParamType::kEnum;
  mode.slot = kPadMode;
  mode.names = {{static_cast<int64_t>(PadMode::kZero), "zero"},
                {static_cast<int64_t>(PadMode::kEdge), "edge"}};
  mode.domain = {static_cast<int64_t>(PadMode::kZero), static_cast<int64_t>(PadMode::kEdge)};
  op.params = {PadAmount("top", kPadTop), PadAmount("left", kPadLeft),
               PadAmount("bottom", kPadBottom), PadAmount("right", kPadRight), mode};
  op.shape_rule = PadShape;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  // Either mode commutes with the element-wise operators that keep 0 (0 + 0, 0 * y, relu(0)):
  // an edge copy is an element, a zero is the operator's image of zeros. relu(0) = 0 holds in
  // the reals only: the fingerprints' relu is a polynomial.
  op.axioms = R"(
pad_relu (x) (pad (relu x)) = (relu (pad x))
pad_ewadd (x y) (pad (ewadd x y)) = (ewadd (pad x) (pad y))
pad_ewmul (x y) (pad (ewmul x y)) = (ewmul (pad x) (pad y))
pad_smul (x s:0) (pad (smul x s)) = (smul (pad x) s)
)";
  op.real_only_axioms = {"pad_relu"};
  return op;
}

}  // namespace verisub::specs::ops
