// Newer default-domain opsets lowered into opset 17 (onnx_newer_opsets.h).
#include "runtime/onnx_newer_opsets.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "runtime/onnx_node_emitter.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime {
namespace {

// Operators with a version in 18..kNewestReadOpset (ONNX's changelog). Those not handled by
// name in Lower() only gained types there, so their opset-17 form is the same node.
const std::set<std::string>& ChangedOps() {
  static const std::set<std::string> ops = {
      // 18
      "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "CenterCropPad", "Col2Im",
      "GroupNormalization", "LpPool", "Mish", "OptionalGetElement", "OptionalHasElement", "Pad",
      "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
      "ReduceMin", "ReduceProd", "ReduceSumSquare", "Resize", "ScatterElements", "ScatterND",
      "Split",
      // 19
      "AveragePool", "Cast", "CastLike", "Constant", "DeformConv", "DequantizeLinear", "Equal",
      "Identity", "If", "Loop", "QuantizeLinear", "Reshape", "Scan", "Shape", "Size",
      // 20
      "AffineGrid", "ConstantOfShape", "DFT", "Gelu", "GridSample", "ImageDecoder", "IsInf",
      "IsNaN", "RegexFullMatch", "StringConcat", "StringSplit",
      // 21
      "Flatten", "QLinearMatMul", "Squeeze", "Transpose", "Unsqueeze",
      // 22
      "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Bernoulli", "Conv", "ConvTranspose",
      "Cos", "Cosh", "Det", "Dropout", "Elu", "EyeLike", "GRU", "GlobalAveragePool", "GlobalLpPool",
      "GlobalMaxPool", "HardSigmoid", "HardSwish", "InstanceNormalization", "LSTM",
      "LpNormalization", "MaxPool", "MaxRoiPool", "MaxUnpool", "Multinomial",
      "NegativeLogLikelihoodLoss", "RNN", "RandomNormal", "RandomNormalLike", "RandomUniform",
      "RandomUniformLike", "RoiAlign", "Round", "Selu", "Sin", "Sinh", "Softplus", "Softsign",
      "Tan", "ThresholdedRelu",
      // 23
      "Attention", "RMSNormalization", "RotaryEmbedding",
      // 24
      "SplitToSequence", "Swish", "TensorScatter", "TopK"};
  return ops;
}

// Operators new in 18..25 (or changed past an opset-17 reading) that have no form here.
const std::set<std::string>& RefusedOps() {
  static const std::set<std::string> ops = {
      "BitwiseAnd",   "BitwiseNot",  "BitwiseOr",    "BitwiseXor",   "CenterCropPad",
      "Col2Im",       "DeformConv",  "AffineGrid",   "ImageDecoder", "RegexFullMatch",
      "StringConcat", "StringSplit", "TensorScatter"};
  return ops;
}

const std::set<std::string>& ReduceOps() {
  static const std::set<std::string> ops = {"ReduceL1",        "ReduceL2",   "ReduceLogSum",
                                            "ReduceLogSumExp", "ReduceMax",  "ReduceMean",
                                            "ReduceMin",       "ReduceProd", "ReduceSumSquare"};
  return ops;
}

// Element types past IR version 8 (float8, uint4/int4, float4, float8e8m0, uint2/int2).
bool NewerType(int32_t t) { return t >= 17; }

class OpsetLowering : NodeEmitter {
 public:
  OpsetLowering(onnx::ModelProto* model, int64_t from) : model_(model), from_(from) {
    TakeNames(model->graph());
    for (const auto& f : model->functions())
      for (const auto& n : f.node()) {
        Take(n.name());
        for (const auto& s : n.input()) Take(s);
        for (const auto& s : n.output()) Take(s);
      }
    CollectConstants(model->graph());
  }

  StatusOr<int> Run() {
    VERISUB_RETURN_IF_ERROR(CheckTypes(model_->graph()));
    VERISUB_RETURN_IF_ERROR(LowerNodes(model_->mutable_graph()->mutable_node()));
    if (pending_ > 0) {
      // Nodes whose lowering needs a type or dims nothing declared (an attention mask's type,
      // head counts): ONNX's shape inference at opset 17 infers them through everything lowered
      // (it skips the nodes still waiting), then those are lowered or refused.
      for (auto& op : *model_->mutable_opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") op.set_version(kLoweredOpset);
      try {
        onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                            /*data_prop=*/true);
        onnx::shape_inference::InferShapes(*model_, onnx::OpSchemaRegistry::Instance(), options);
      } catch (const std::exception&) {
        // the declared shapes stay; what still needs one is refused below
      }
      final_pass_ = true;
      VERISUB_RETURN_IF_ERROR(LowerNodes(model_->mutable_graph()->mutable_node()));
    }
    for (auto& f : *model_->mutable_functions()) {
      bool default_domain = false;
      for (auto& op : *f.mutable_opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") {
          default_domain = op.version() > kLoweredOpset;
          if (default_domain) op.set_version(kLoweredOpset);
        }
      if (default_domain) {
        const Status st = LowerNodes(f.mutable_node());
        if (!st.ok()) return st.WithContext("function '" + f.name() + "'");
      }
    }
    for (auto& op : *model_->mutable_opset_import())
      if (op.domain().empty() || op.domain() == "ai.onnx") op.set_version(kLoweredOpset);
    if (model_->ir_version() > 8) model_->set_ir_version(8);
    return rewritten_;
  }

 private:
  // Initializers and Constant outputs, for the inputs that became attributes.
  void CollectConstants(const onnx::GraphProto& g) {
    for (const auto& t : g.initializer()) KeepIfAxes(t.name(), t);
    for (const auto& n : g.node()) {
      if (n.op_type() == "Constant" && n.output_size() == 1)
        for (const auto& a : n.attribute()) {
          if (a.name() == "value" && a.has_t()) KeepIfAxes(n.output(0), a.t());
          if (a.name() == "value_ints" || a.name() == "value_int") {
            onnx::TensorProto t;
            t.set_data_type(onnx::TensorProto::INT64);
            if (a.name() == "value_ints") {
              t.add_dims(a.ints_size());
              for (int64_t v : a.ints()) t.add_int64_data(v);
            } else {
              t.add_int64_data(a.i());
            }
            constants_[n.output(0)] = t;
          }
        }
      for (const auto& a : n.attribute()) {
        if (a.has_g()) CollectConstants(a.g());
        for (const auto& sub : a.graphs()) CollectConstants(sub);
      }
    }
    for (const auto& t : g.initializer())
      if (t.data_type() == onnx::TensorProto::FLOAT16 ||
          t.data_type() == onnx::TensorProto::BFLOAT16 ||
          t.data_type() == onnx::TensorProto::DOUBLE)
        other_floats_ = true;
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& v : *list) {
        const int32_t t = v.type().tensor_type().elem_type();
        if (t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::BFLOAT16 ||
            t == onnx::TensorProto::DOUBLE)
          other_floats_ = true;
      }
  }

  // Keeps small integer tensors: what may be an operator's axes.
  void KeepIfAxes(const std::string& name, const onnx::TensorProto& t) {
    if (t.data_type() != onnx::TensorProto::INT64 && t.data_type() != onnx::TensorProto::INT32)
      return;
    int64_t elements = 1;
    for (int64_t d : t.dims()) elements *= d;
    if (elements <= 64) constants_[name] = t;
  }

  // The int64 values of a constant input, or nullopt when it is computed at run time.
  std::optional<std::vector<int64_t>> ConstInts(const std::string& name) const {
    auto it = constants_.find(name);
    if (it == constants_.end()) return std::nullopt;
    auto t = FromTensorProto(it->second);
    if (!t.ok()) return std::nullopt;
    return t->ToInts();
  }

  static Status TypeError(const std::string& what, int32_t t) {
    return Unimplemented(what + " has element type " + std::to_string(t) +
                         " (float8, int4, float4 or newer: ONNX IR version 9 and up), which this "
                         "build cannot compute");
  }
  static Status CheckValueTypes(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& l) {
    for (const auto& v : l)
      if (NewerType(v.type().tensor_type().elem_type()))
        return TypeError("value '" + v.name() + "'", v.type().tensor_type().elem_type());
    return Status::Ok();
  }
  Status CheckTypes(const onnx::GraphProto& g) const {
    for (const auto& t : g.initializer())
      if (NewerType(t.data_type()))
        return TypeError("initializer '" + t.name() + "'", t.data_type());
    VERISUB_RETURN_IF_ERROR(CheckValueTypes(g.input()));
    VERISUB_RETURN_IF_ERROR(CheckValueTypes(g.output()));
    VERISUB_RETURN_IF_ERROR(CheckValueTypes(g.value_info()));
    for (const auto& n : g.node())
      for (const auto& a : n.attribute()) {
        const std::string what =
            "node '" + n.name() + "' (" + n.op_type() + ") attribute '" + a.name() + "'";
        if (a.has_t() && NewerType(a.t().data_type())) return TypeError(what, a.t().data_type());
        if ((a.name() == "to" || a.name() == "output_dtype" || a.name() == "dtype") &&
            a.type() == onnx::AttributeProto::INT && NewerType(static_cast<int32_t>(a.i())))
          return TypeError(what, static_cast<int32_t>(a.i()));
        if (a.has_g()) VERISUB_RETURN_IF_ERROR(CheckTypes(a.g()));
        for (const auto& sub : a.graphs()) VERISUB_RETURN_IF_ERROR(CheckTypes(sub));
      }
    return Status::Ok();
  }

  Status LowerNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes) {
    std::vector<onnx::NodeProto> out;
    for (onnx::NodeProto& original : *nodes) {
      onnx::NodeProto n = original;
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) VERISUB_RETURN_IF_ERROR(LowerNodes(a.mutable_g()->mutable_node()));
        for (auto& sub : *a.mutable_graphs())
          VERISUB_RETURN_IF_ERROR(LowerNodes(sub.mutable_node()));
      }
      const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
      if (!default_domain || !ChangedOps().count(n.op_type()) || n.output_size() == 0 ||
          (final_pass_ && n.op_type() != "Attention" && n.op_type() != "RotaryEmbedding")) {
        out.push_back(std::move(n));
        continue;
      }
      node_ = &n;
      out_ = &out;
      const size_t before = out.size();
      auto done = Lower(&n);
      if (!done.ok())
        return done.status().WithContext("node '" + n.name() + "' (" + n.op_type() + ", opset " +
                                         std::to_string(from_) + ")");
      if (*done) {
        ++rewritten_;
      } else {
        out.resize(before);
        out.push_back(std::move(n));
      }
    }
    nodes->Clear();
    for (onnx::NodeProto& n : out) *nodes->Add() = std::move(n);
    return Status::Ok();
  }

  void Drop(onnx::NodeProto* n, const std::string& attr) {
    auto* attrs = n->mutable_attribute();
    for (int i = 0; i < attrs->size(); ++i)
      if (attrs->Get(i).name() == attr) {
        attrs->DeleteSubrange(i, 1);
        return;
      }
  }
  // Drops `attr` when it holds its default (an int or every int of a list equal to `value`).
  Status DropDefaultInt(onnx::NodeProto* n, const std::string& attr, int64_t value) {
    const auto* a = Attr(attr);
    if (!a) return Status::Ok();
    const bool list = a->type() == onnx::AttributeProto::INTS;
    const bool is_default = list ? std::all_of(a->ints().begin(), a->ints().end(),
                                               [value](int64_t v) { return v == value; })
                                 : a->i() == value;
    if (!is_default)
      return Unimplemented("attribute '" + attr + "' other than " + std::to_string(value) +
                           " has no opset-17 form");
    Drop(n, attr);
    return Status::Ok();
  }
  Status DropDefaultString(onnx::NodeProto* n, const std::string& attr, const std::string& value) {
    if (!Attr(attr)) return Status::Ok();
    if (String(attr, value) != value)
      return Unimplemented("attribute '" + attr + "' = '" + String(attr, value) +
                           "' has no opset-17 form (only '" + value + "')");
    Drop(n, attr);
    return Status::Ok();
  }

  // A float scalar of x's type (a CastLike where the model holds floats other than float32).
  std::string ScalarLike(const std::string& what, double v, const std::string& x) override {
    const std::string s = Scalar(what, v);
    return other_floats_ ? Emit("CastLike", {s, x}) : s;
  }
  // Node n again, its first `keep` inputs followed by `more`.
  void Reemit(const onnx::NodeProto& n, int keep, const std::vector<std::string>& more) {
    onnx::NodeProto c = n;
    while (c.input_size() > keep) c.mutable_input()->RemoveLast();
    for (const std::string& s : more) c.add_input(s);
    out_->push_back(std::move(c));
  }
  // Integer tensor t as floats of x's type (a Cast to float32 folds at import; a CastLike where
  // the model holds other floats).
  std::string FloatLike(const std::string& t, const std::string& x) {
    if (other_floats_) return Emit("CastLike", {t, x});
    return Emit("Cast", {t}, "", [](onnx::NodeProto* c) {
      ExportContext::AttrInt(c, "to", onnx::TensorProto::FLOAT);
    });
  }
  // The int64 [1] tensor of dim `axis` of x's shape.
  std::string DimOf(const std::string& x, int64_t axis) {
    return Emit("Shape", {x}, "", [axis](onnx::NodeProto* n) {
      ExportContext::AttrInt(n, "start", axis);
      if (axis != -1) ExportContext::AttrInt(n, "end", axis + 1);
    });
  }

  // True when the node was written out into out_ (false: kept, perhaps with attributes
  // dropped); an error when it has no opset-17 form.
  StatusOr<bool> Lower(onnx::NodeProto* n) {
    const std::string& op = n->op_type();
    if (RefusedOps().count(op))
      return Status(Unimplemented(
          "no opset-17 form that this build (ONNX 1.12) could lower it to; export the model at "
          "opset 17 or below"));
    if (ReduceOps().count(op)) return Reduce(n);
    if (op == "Split") return Split(n);
    if (op == "Pad") return Pad(n);
    if (op == "DFT") return Dft(n);
    if (op == "Cast" || op == "CastLike") {
      Drop(n, "saturate");    // float8 only, whose types are refused
      Drop(n, "round_mode");  // float8e8m0 only
      return false;
    }
    if (op == "Resize") {
      VERISUB_RETURN_IF_ERROR(DropDefaultInt(n, "antialias", 0));
      VERISUB_RETURN_IF_ERROR(DropDefaultString(n, "keep_aspect_ratio_policy", "stretch"));
      if (Attr("axes")) return Status(Unimplemented("attribute 'axes' has no opset-17 form"));
      if (String("coordinate_transformation_mode", "") == "half_pixel_symmetric")
        return Status(
            Unimplemented("coordinate_transformation_mode 'half_pixel_symmetric' has "
                          "no opset-17 form"));
      return false;
    }
    if (op == "AveragePool" || op == "LpPool") {
      VERISUB_RETURN_IF_ERROR(DropDefaultInt(n, "dilations", 1));
      if (op == "LpPool") VERISUB_RETURN_IF_ERROR(DropDefaultInt(n, "ceil_mode", 0));
      return false;
    }
    if (op == "ScatterElements" || op == "ScatterND") {
      const std::string r = String("reduction", "none");
      if (r == "max" || r == "min")
        return Status(Unimplemented("reduction '" + r + "' has no opset-17 form"));
      return false;
    }
    if (op == "GridSample") {
      const std::string mode = String("mode", "linear");
      Drop(n, "mode");
      ExportContext::AttrString(n, "mode",
                                mode == "linear"  ? "bilinear"
                                : mode == "cubic" ? "bicubic"
                                                  : mode);
      return false;
    }
    if (op == "DequantizeLinear") {
      VERISUB_RETURN_IF_ERROR(DropDefaultInt(n, "block_size", 0));
      if (Int("output_dtype", 0) != 0 && Int("output_dtype", 0) != onnx::TensorProto::FLOAT)
        return Status(Unimplemented("output_dtype other than float has no opset-17 form"));
      Drop(n, "output_dtype");
      return false;
    }
    if (op == "QuantizeLinear") return Quantize(n);
    if (op == "Gelu") {
      const std::string approximate = String("approximate", "none");
      if (approximate == "tanh") {
        TanhGeluOf(In(0), n->output(0));
      } else if (approximate == "none") {
        GeluOf(In(0), n->output(0));
      } else {
        return Status(Unimplemented("approximate '" + approximate + "' is no GELU"));
      }
      return true;
    }
    if (op == "Mish") {
      Emit("Mul", {In(0), Emit("Tanh", {Emit("Softplus", {In(0)})})}, n->output(0));
      return true;
    }
    if (op == "Swish") {
      const double alpha = Float("alpha", 1.f);
      const std::string arg =
          alpha == 1.0 ? In(0) : Emit("Mul", {In(0), ScalarLike("alpha", alpha, In(0))});
      Emit("Mul", {In(0), Emit("Sigmoid", {arg})}, n->output(0));
      return true;
    }
    if (op == "GroupNormalization") return GroupNorm(n);
    if (op == "RMSNormalization") return RmsNorm(n);
    if (op == "Attention") return Attention(n);
    if (op == "RotaryEmbedding") return Rotary(n);
    return false;  // a version that added types only
  }

  // Reduce*-18: axes from input 1 (constant) into the attribute.
  StatusOr<bool> Reduce(onnx::NodeProto* n) {
    std::vector<int64_t> axes;
    if (Has(1)) {
      std::optional<std::vector<int64_t>> c = ConstInts(In(1));
      if (!c)
        return Status(Unimplemented("axes '" + In(1) +
                                    "' computed at run time have no opset-17 form (an attribute)"));
      axes = *c;
    }
    const bool noop = Int("noop_with_empty_axes", 0) != 0;
    if (axes.empty() && noop) {  // reduces nothing: the non-reducing step alone
      const std::string& op = n->op_type();
      const std::string& x = In(0);
      const std::string& y = n->output(0);
      if (op == "ReduceL1" || op == "ReduceL2")
        Emit("Abs", {x}, y);
      else if (op == "ReduceLogSum")
        Emit("Log", {x}, y);
      else if (op == "ReduceSumSquare")
        Emit("Mul", {x, x}, y);
      else
        Emit("Identity", {x}, y);  // Mean, Max, Min, Prod, LogSumExp (log exp x)
      return true;
    }
    Drop(n, "noop_with_empty_axes");
    while (n->input_size() > 1) n->mutable_input()->RemoveLast();
    if (!axes.empty()) ExportContext::AttrInts(n, "axes", axes);
    return false;
  }

  // DFT-20: the axis from input 2 (constant; -2 when absent, the last signal axis) into the
  // attribute of DFT-17, whose default is 1.
  StatusOr<bool> Dft(onnx::NodeProto* n) {
    int64_t axis = -2;
    if (Has(2)) {
      std::optional<std::vector<int64_t>> c = ConstInts(In(2));
      if (!c || c->size() != 1)
        return Status(Unimplemented("axis '" + In(2) +
                                    "' computed at run time has no opset-17 form (an attribute)"));
      axis = (*c)[0];
    }
    while (n->input_size() > 2) n->mutable_input()->RemoveLast();
    ExportContext::AttrInt(n, "axis", axis);
    return false;
  }

  // Split-18 num_outputs: sizes ceil(d / k) for all but the last part, which takes the rest.
  StatusOr<bool> Split(onnx::NodeProto* n) {
    if (!Attr("num_outputs")) return false;
    const int64_t k = Int("num_outputs", 0);
    if (k != n->output_size())
      return Status(InvalidArgument("num_outputs " + std::to_string(k) + " but " +
                                    std::to_string(n->output_size()) + " outputs"));
    Drop(n, "num_outputs");
    if (Has(1)) return false;
    const int64_t axis = Int("axis", 0);
    const std::string d = DimOf(In(0), axis);
    const std::string part =
        Emit("Div", {Emit("Add", {d, Ints("k_minus_1", {1}, {k - 1})}), Ints("k", {1}, {k})});
    const std::string last = Emit("Sub", {d, Emit("Mul", {part, Ints("k_minus_1", {1}, {k - 1})})});
    std::vector<std::string> sizes(static_cast<size_t>(k - 1), part);
    sizes.push_back(last);
    const std::string split = Concat(sizes, 0);
    Reemit(*n, 1, {split});
    return true;
  }

  // Pad-18 axes: the pads of the axes named scattered into pads of every axis.
  StatusOr<bool> Pad(onnx::NodeProto* n) {
    const std::string mode = String("mode", "constant");
    if (mode == "wrap") return Status(Unimplemented("mode 'wrap' has no opset-17 form"));
    if (!Has(3)) {
      while (n->input_size() > 3) n->mutable_input()->RemoveLast();
      return false;
    }
    const std::string rank = Emit("Size", {Emit("Shape", {In(0)})});
    const std::string named = Emit("Cast", {In(3)}, "", [](onnx::NodeProto* c) {
      ExportContext::AttrInt(c, "to", onnx::TensorProto::INT64);
    });
    const std::string axes = Emit("Mod", {Emit("Add", {named, rank}), rank});
    const std::string both = Concat({axes, Emit("Add", {axes, rank})}, 0);
    const std::string two_r =
        Emit("Reshape", {Emit("Mul", {rank, Ints("two", {}, {2})}), Ints("one_dim", {1}, {1})});
    onnx::TensorProto zero;
    zero.set_data_type(onnx::TensorProto::INT64);
    zero.add_dims(1);
    zero.add_int64_data(0);
    const std::string zeros = Emit("ConstantOfShape", {two_r}, "", [zero](onnx::NodeProto* c) {
      auto* a = c->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      *a->mutable_t() = zero;
    });
    const std::string pads = Emit("ScatterElements", {zeros, both, In(1)});
    std::vector<std::string> rest = {pads};
    if (Has(2)) rest.push_back(In(2));
    Reemit(*n, 1, rest);
    return true;
  }

  // QuantizeLinear-19..25: saturate (float8 only), block_size 0, precision 0; output_dtype
  // becomes the zero point's type (a zero point of zeros when there is none).
  StatusOr<bool> Quantize(onnx::NodeProto* n) {
    Drop(n, "saturate");
    VERISUB_RETURN_IF_ERROR(DropDefaultInt(n, "block_size", 0));
    VERISUB_RETURN_IF_ERROR(DropDefaultInt(n, "precision", 0));
    const int64_t dtype = Int("output_dtype", 0);
    Drop(n, "output_dtype");
    if (dtype == 0 || Has(2)) return false;
    if (dtype != onnx::TensorProto::UINT8 && dtype != onnx::TensorProto::INT8)
      return Status(Unimplemented("output_dtype " + std::to_string(dtype) +
                                  " has no opset-17 form (uint8 and int8 only)"));
    const std::string zero =
        Emit("Cast", {Emit("Mul", {In(1), ScalarLike("zero", 0.0, In(1))})}, "",
             [dtype](onnx::NodeProto* c) { ExportContext::AttrInt(c, "to", dtype); });
    Reemit(*n, 2, {zero});
    return true;
  }

  // GroupNormalization as PyTorch's opset-17 export writes group_norm: an InstanceNormalization
  // of x viewed as [N, groups, -1], viewed back; from version 21 scale and bias per channel,
  // applied after (version 18: per group, InstanceNormalization's own).
  StatusOr<bool> GroupNorm(onnx::NodeProto* n) {
    if (!Has(1) || !Has(2)) return Status(InvalidArgument("needs scale and bias"));
    const int64_t groups = Int("num_groups", 0);
    if (groups <= 0 || groups > (1 << 20))
      return Status(InvalidArgument("num_groups " + std::to_string(groups) +
                                    " is not a positive count of at most 2^20"));
    const float epsilon = Float("epsilon", 1e-5f);
    const std::string& x = In(0);
    const std::string grouped = Emit("Reshape", {x, Ints("grouped", {3}, {0, groups, -1})});
    auto instance_norm = [&](const std::string& scale, const std::string& bias) {
      return Emit(
          "InstanceNormalization", {grouped, scale, bias}, "",
          [epsilon](onnx::NodeProto* c) { ExportContext::AttrFloat(c, "epsilon", epsilon); });
    };
    const std::string shape = Emit("Shape", {x});
    if (from_ < 21) {
      Emit("Reshape", {instance_norm(In(1), In(2)), shape}, n->output(0));
      return true;
    }
    std::string ones = Tensor("ones", {groups}, std::vector<float>(groups, 1.f));
    std::string zeros = Tensor("zeros", {groups}, std::vector<float>(groups, 0.f));
    if (other_floats_) {
      ones = Emit("CastLike", {ones, x});
      zeros = Emit("CastLike", {zeros, x});
    }
    const std::string back = Emit("Reshape", {instance_norm(ones, zeros), shape});
    // scale and bias [C] as [C, 1, ..., 1] against x's trailing spatial axes.
    const std::string rank = Emit("Size", {shape});
    const std::string axes = Emit(
        "Range",
        {Ints("one", {}, {1}), Emit("Sub", {rank, Ints("one", {}, {1})}), Ints("one", {}, {1})});
    const std::string scale = Emit("Unsqueeze", {In(1), axes});
    const std::string bias = Emit("Unsqueeze", {In(2), axes});
    Emit("Add", {Emit("Mul", {back, scale}), bias}, n->output(0));
    return true;
  }

  // RMSNormalization-23: x / sqrt(mean(x^2) + epsilon) * scale over the axes from `axis` on, as
  // T5's export writes it; a non-negative axis over x viewed as [d0 .. d(axis-1), -1].
  StatusOr<bool> RmsNorm(onnx::NodeProto* n) {
    if (!Has(1)) return Status(InvalidArgument("needs a scale"));
    if (n->output_size() > 1 && !n->output(1).empty())
      return Status(Unimplemented("the inverse deviation output has no opset-17 form here"));
    RmsNormOf(In(0), In(1), Int("axis", -1), Float("epsilon", 1e-5f), n->output(0));
    return true;
  }

  // Attention-23/24/25 as PyTorch's opset-17 export writes scaled dot-product attention: heads
  // split from 3-D inputs by q_num_heads / kv_num_heads, past keys and values concatenated
  // before the new ones (the present outputs), key and value heads repeated to the query's
  // (grouped-query attention), softmax(Q K^T scale [softcapped] + causal bias + mask) V, heads
  // merged back for 3-D inputs. A boolean mask adds -inf where false, a float mask is added; a
  // query row every key of which is masked (bias below -3e38) gives zeros (the operator's
  // errata). Not lowered:
  // the qk_matmul_output output, nonpad_kv_seqlen, attention windows (25).
  StatusOr<bool> Attention(onnx::NodeProto* n) {
    if (n->output_size() > 3 && !n->output(3).empty())
      return Status(Unimplemented("the qk_matmul_output output has no opset-17 form here"));
    if (Has(6)) return Status(Unimplemented("nonpad_kv_seqlen has no opset-17 form here"));
    if (Int("left_window_size", -1) != -1 || Int("right_window_size", -1) != -1)
      return Status(Unimplemented("attention windows have no opset-17 form here"));
    if (Has(4) != Has(5)) return Status(InvalidArgument("past_key and past_value go together"));
    const onnx::GraphProto& g = model_->graph();
    const bool three_d = Attr("q_num_heads") || Attr("kv_num_heads");
    const int64_t q_heads = Int("q_num_heads", 0), kv_heads = Int("kv_num_heads", 0);
    if (three_d && (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads != 0))
      return Status(
          InvalidArgument("q_num_heads and kv_num_heads must be positive, the first a "
                          "multiple of the second"));
    // Head counts of 4-D inputs from their declared or inferred dims.
    int64_t rep = three_d ? q_heads / kv_heads : 1;
    if (!three_d) {
      const auto qd = DeclaredDims(g, In(0)), kd = DeclaredDims(g, In(1));
      const bool known =
          qd && kd && qd->size() == 4 && kd->size() == 4 && (*qd)[1] > 0 && (*kd)[1] > 0;
      if (!known && !final_pass_) {
        ++pending_;
        return false;
      }
      if (known) {
        if ((*qd)[1] % (*kd)[1] != 0)
          return Status(InvalidArgument("query heads not a multiple of key heads"));
        rep = (*qd)[1] / (*kd)[1];
      }
      // else: heads equal, or one key head (broadcast by MatMul); others fail shape inference
    }
    int32_t mask_type = 0;
    if (Has(3)) {
      mask_type = DeclaredElemType(g, In(3));
      if (mask_type == 0) {
        if (!final_pass_) {
          ++pending_;
          return false;
        }
        return Status(Unimplemented("the type of attn_mask '" + In(3) +
                                    "' (boolean or additive) is not known"));
      }
    }
    auto heads = [&](const std::string& x, int64_t h) {  // [B, S, h*D] -> [B, h, S, D]
      if (!three_d) return x;
      const std::string split = Emit("Reshape", {x, Ints("heads", {4}, {0, 0, h, -1})});
      return Emit("Transpose", {split}, "", [](onnx::NodeProto* t) {
        ExportContext::AttrInts(t, "perm", {0, 2, 1, 3});
      });
    };
    const std::string q = heads(In(0), q_heads);
    std::string k = heads(In(1), kv_heads);
    std::string v = heads(In(2), kv_heads);
    const std::string k_new = k;
    auto concat2 = [&](const std::string& a, const std::string& b, const std::string& out) {
      return Concat({a, b}, 2, out);
    };
    auto output = [&](int i) { return n->output_size() > i ? n->output(i) : std::string(); };
    if (Has(4)) {
      k = concat2(In(4), k, output(1));
      v = concat2(In(5), v, output(2));
    } else {
      if (!output(1).empty()) k = Emit("Identity", {k}, output(1));
      if (!output(2).empty()) v = Emit("Identity", {v}, output(2));
    }
    auto repeat = [&](const std::string& x) {  // [B, Hkv, T, D] -> [B, Hkv * rep, T, D]
      if (rep == 1) return x;
      const std::string shape = Emit("Shape", {x});
      auto part = [&](int64_t start, int64_t end) {
        return Emit("Slice", {shape, Ints("start", {1}, {start}), Ints("end", {1}, {end})});
      };
      const std::string b_h = part(0, 2), t_d = part(2, 4);
      const std::string wide = Emit("Expand", {Emit("Unsqueeze", {x, Ints("axis", {1}, {2})}),
                                               Concat({b_h, Ints("rep", {1}, {rep}), t_d}, 0)});
      return Emit("Reshape", {wide, Concat({part(0, 1), Ints("all", {1}, {-1}), t_d}, 0)});
    };
    const std::string kt = Emit("Transpose", {repeat(k)}, "", [](onnx::NodeProto* t) {
      ExportContext::AttrInts(t, "perm", {0, 1, 3, 2});
    });
    std::string scores = Emit("MatMul", {q, kt});
    if (const auto* a = Attr("scale")) {
      scores = Emit("Mul", {scores, ScalarLike("scale", a->f(), In(0))});
    } else {  // 1 / sqrt(head size)
      const std::string d = Emit(
          "Shape", {q}, "", [](onnx::NodeProto* c) { ExportContext::AttrInt(c, "start", -1); });
      const std::string root = Emit("Sqrt", {FloatLike(d, In(0))});
      scores = Emit("Div", {scores, root});
    }
    if (const float cap = Float("softcap", 0.f); cap > 0.f) {
      const std::string c = ScalarLike("softcap", cap, In(0));
      scores = Emit("Mul", {Emit("Tanh", {Emit("Div", {scores, c})}), c});
    }
    const std::string minus_inf =
        ScalarLike("minus_inf", -std::numeric_limits<double>::infinity(), In(0));
    const std::string zero = ScalarLike("zero", 0.0, In(0));
    std::string bias;
    if (Int("is_causal", 0) != 0) {  // key j attends to query i iff j <= i + past length
      auto dim = [&](const std::string& x, int64_t axis) {
        return Emit("Squeeze", {DimOf(x, axis)});
      };
      const std::string zero_i = Ints("zero_i", {}, {0}), one_i = Ints("one_i", {}, {1});
      const std::string s = dim(q, 2), total = dim(k, 2),
                        past = Emit("Sub", {total, dim(k_new, 2)});
      const std::string rows =
          Emit("Unsqueeze", {Emit("Range", {zero_i, s, one_i}), Ints("axis", {1}, {1})});
      const std::string cols = Emit("Range", {zero_i, total, one_i});
      const std::string ahead = Emit("Greater", {Emit("Sub", {cols, rows}), past});
      bias = Emit("Where", {ahead, minus_inf, zero});
    }
    if (Has(3)) {
      const std::string m =
          mask_type == onnx::TensorProto::BOOL ? Emit("Where", {In(3), zero, minus_inf}) : In(3);
      bias = bias.empty() ? m : Emit("Add", {bias, m});
    }
    if (!bias.empty()) scores = Emit("Add", {scores, bias});
    std::string probs = Emit("Softmax", {scores}, "",
                             [](onnx::NodeProto* c) { ExportContext::AttrInt(c, "axis", -1); });
    if (Has(3)) {  // a row with every key masked: zeros, not NaN
      const std::string row_max = Emit("ReduceMax", {bias}, "", [](onnx::NodeProto* c) {
        ExportContext::AttrInts(c, "axes", {-1});
      });
      // (below -3e38: oneDNN's max pooling, which runs ReduceMax, starts from the lowest
      // float, so a row of -inf reduces to -3.4e38; a float mask of the lowest float, as
      // Hugging Face writes, masks as -inf does)
      probs =
          Emit("Where", {Emit("Less", {row_max, ScalarLike("masked", -3e38, In(0))}), zero, probs});
    }
    const std::string y = Emit("MatMul", {probs, repeat(v)}, three_d ? "" : n->output(0));
    if (three_d) {
      const std::string merged = Emit("Transpose", {y}, "", [](onnx::NodeProto* t) {
        ExportContext::AttrInts(t, "perm", {0, 2, 1, 3});
      });
      Emit("Reshape", {merged, Ints("merged", {3}, {0, 0, -1})}, n->output(0));
    }
    return true;
  }

  // RotaryEmbedding-23 by its definition: x as [B, S, heads, D] (3-D inputs split by
  // num_heads, 4-D ones transposed), its first rotary_embedding_dim values (all by default)
  // rotated as pairs (halves, or even and odd when interleaved) by the cos and sin caches
  // (gathered by position_ids when given), the rest kept, x's form restored.
  StatusOr<bool> Rotary(onnx::NodeProto* n) {
    const onnx::GraphProto& g = model_->graph();
    const int64_t heads = Int("num_heads", 0);
    const int64_t rotary = Int("rotary_embedding_dim", 0);
    const bool interleaved = Int("interleaved", 0) != 0;
    const auto declared = DeclaredDims(g, In(0));
    if (!declared && heads == 0 && !final_pass_) {
      ++pending_;
      return false;
    }
    const bool three_d = declared ? declared->size() == 3 : heads > 0;
    if (three_d && heads <= 0) return Status(InvalidArgument("a 3-D input needs num_heads"));
    auto perm = [](onnx::NodeProto* t) { ExportContext::AttrInts(t, "perm", {0, 2, 1, 3}); };
    const std::string x = three_d ? Emit("Reshape", {In(0), Ints("heads", {4}, {0, 0, heads, -1})})
                                  : Emit("Transpose", {In(0)}, "", perm);
    auto last = [&](const std::string& v, int64_t start, int64_t end, int64_t step) {
      return Emit("Slice", {v, Ints("start", {1}, {start}), Ints("end", {1}, {end}),
                            Ints("axes", {1}, {-1}), Ints("steps", {1}, {step})});
    };
    constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
    const std::string rotated_part = rotary > 0 ? last(x, 0, rotary, 1) : x;
    auto cache = [&](const std::string& c) {  // [B, S, R/2] -> [B, S, 1, R/2]
      const std::string rows = Has(3) ? Emit("Gather", {c, In(3)}) : c;
      return Emit("Unsqueeze", {rows, Ints("axis", {1}, {2})});
    };
    const std::string cos = cache(In(1)), sin = cache(In(2));
    std::string x1, x2;
    if (interleaved) {
      x1 = last(rotated_part, 0, kToEnd, 2);
      x2 = last(rotated_part, 1, kToEnd, 2);
    } else {
      x1 = Fresh(n->output(0) + "/x1");
      x2 = Fresh(n->output(0) + "/x2");
      onnx::NodeProto split;
      split.set_op_type("Split");
      split.set_name(Fresh(n->name() + "/Split"));
      split.add_input(rotated_part);
      split.add_output(x1);
      split.add_output(x2);
      ExportContext::AttrInt(&split, "axis", -1);
      out_->push_back(std::move(split));
    }
    const std::string real = Emit("Sub", {Emit("Mul", {cos, x1}), Emit("Mul", {sin, x2})});
    const std::string imag = Emit("Add", {Emit("Mul", {sin, x1}), Emit("Mul", {cos, x2})});
    std::string rotated;
    if (interleaved) {
      const std::string pairs = Concat({Emit("Unsqueeze", {real, Ints("axis", {1}, {-1})}),
                                        Emit("Unsqueeze", {imag, Ints("axis", {1}, {-1})})},
                                       -1);
      rotated = Emit("Reshape", {pairs, Emit("Shape", {rotated_part})});
    } else {
      rotated = Concat({real, imag}, -1);
    }
    if (rotary > 0) rotated = Concat({rotated, last(x, rotary, kToEnd, 1)}, -1);
    if (three_d)
      Emit("Reshape", {rotated, Emit("Shape", {In(0)})}, n->output(0));
    else
      Emit("Transpose", {rotated}, n->output(0), perm);
    return true;
  }

  onnx::ModelProto* model_;
  int64_t from_;
  bool final_pass_ = false;
  int pending_ = 0;
  std::map<std::string, onnx::TensorProto> constants_;
  bool other_floats_ = false;
  int rewritten_ = 0;
};

}  // namespace

StatusOr<int> LowerNewerOpset(onnx::ModelProto* model, int64_t from) {
  if (from <= kLoweredOpset || from > kNewestReadOpset)
    return InvalidArgument("opset " + std::to_string(from) + " is not one lowered to " +
                           std::to_string(kLoweredOpset));
  OpsetLowering lowering(model, from);
  return lowering.Run();
}

}  // namespace verisub::runtime
