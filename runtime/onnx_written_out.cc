// ONNX operators with no kernel here written in ones that have (onnx_written_out.h).
#include "runtime/onnx_written_out.h"

#include <string>
#include <vector>

#include "runtime/onnx_node_emitter.h"
#include "runtime/onnx_ops/export_context.h"

namespace verisub::runtime {
namespace {

class WriteOut : NodeEmitter {
 public:
  WriteOut(onnx::ModelProto* model, int64_t opset) : opset_(opset) { TakeNames(model->graph()); }

  int Rewrite(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes) {
    int rewritten = 0;
    std::vector<onnx::NodeProto> out;
    bool any = false;
    for (auto& n : *nodes) {
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) rewritten += Rewrite(a.mutable_g()->mutable_node());
        for (auto& g : *a.mutable_graphs()) rewritten += Rewrite(g.mutable_node());
      }
      const bool ours =
          (n.domain().empty() || n.domain() == "ai.onnx") &&
          (n.op_type() == "Compress" || n.op_type() == "LpPool" || n.op_type() == "GlobalLpPool");
      if (!ours || n.input_size() == 0 || n.input(0).empty() || n.output_size() != 1) {
        out.push_back(n);
        continue;
      }
      node_ = &n;
      out_ = &out;
      const size_t before = out.size();
      const bool done = n.op_type() == "Compress" ? Compress()
                        : n.op_type() == "LpPool" ? LpPool()
                                                  : GlobalLpPool();
      if (done) {
        ++rewritten;
        any = true;
      } else {
        out.resize(before);
        out.push_back(n);
      }
    }
    if (any) {
      nodes->Clear();
      for (auto& n : out) *nodes->Add() = std::move(n);
    }
    return rewritten;
  }

 private:
  bool Compress() {
    if (!Has(1)) return false;
    const std::string indices = Emit("NonZero", {In(1)});  // [1, k]
    const std::string flat = opset_ >= 13 ? Emit("Squeeze", {indices, Ints("axis", {1}, {0})})
                                          : Emit("Squeeze", {indices}, "", [](onnx::NodeProto* c) {
                                              ExportContext::AttrInts(c, "axes", {0});
                                            });
    std::string x = In(0);
    int64_t axis = 0;
    if (const auto* a = Attr("axis"))
      axis = a->i();
    else
      x = Emit("Reshape", {x, Ints("flat", {1}, {-1})});
    Emit("Gather", {x, flat}, node_->output(0),
         [axis](onnx::NodeProto* c) { ExportContext::AttrInt(c, "axis", axis); });
    return true;
  }

  // |x|^p.
  std::string PowerOf(const std::string& x, int64_t p) {
    return Emit("Pow", {Emit("Abs", {x}), Scalar("p", static_cast<double>(p))});
  }
  // y^(1/p) into the node's output.
  void Root(const std::string& y, int64_t p) {
    Emit("Pow", {y, Scalar("inv_p", 1.0 / static_cast<double>(p))}, node_->output(0));
  }

  bool LpPool() {
    const int64_t p = Int("p", 2);
    const auto* kernel = Attr("kernel_shape");
    if (p <= 0 || !kernel || kernel->ints_size() == 0) return false;
    for (const char* unsupported : {"dilations", "ceil_mode"})
      if (const auto* a = Attr(unsupported))
        for (int64_t v : a->ints().empty()
                             ? std::vector<int64_t>{a->i()}
                             : std::vector<int64_t>(a->ints().begin(), a->ints().end()))
          if (v != (std::string(unsupported) == "dilations" ? 1 : 0)) return false;
    double window = 1;
    for (int64_t k : kernel->ints()) window *= static_cast<double>(k);
    const onnx::NodeProto& original = *node_;
    const std::string mean =
        Emit("AveragePool", {PowerOf(In(0), p)}, "", [&original](onnx::NodeProto* c) {
          for (const auto& a : original.attribute())
            if (a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "pads" ||
                a.name() == "auto_pad")
              *c->add_attribute() = a;
          ExportContext::AttrInt(c, "count_include_pad", 1);
        });
    Root(Emit("Mul", {mean, Scalar("window", window)}), p);
    return true;
  }

  bool GlobalLpPool() {
    const int64_t p = Int("p", 2);
    if (p <= 0 || opset_ < 13) return false;  // ReduceSum's axes as an input
    const std::string powered = PowerOf(In(0), p);
    const std::string rank = Emit("Size", {Emit("Shape", {In(0)})});
    const std::string spatial = Emit("Range", {Ints("two", {}, {2}), rank, Ints("one", {}, {1})});
    Root(Emit("ReduceSum", {powered, spatial}, "",
              [](onnx::NodeProto* c) { ExportContext::AttrInt(c, "keepdims", 1); }),
         p);
    return true;
  }

  int64_t opset_;
};

}  // namespace

int WriteOutOperators(onnx::ModelProto* model, int64_t opset) {
  if (opset < 7) return 0;
  WriteOut pass(model, opset);
  return pass.Rewrite(model->mutable_graph()->mutable_node());
}

}  // namespace verisub::runtime
