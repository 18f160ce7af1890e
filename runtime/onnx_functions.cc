// Model-local functions inlined at import (onnx_functions.h).
#include "runtime/onnx_functions.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "google/protobuf/unknown_field_set.h"
#include "runtime/onnx_node_emitter.h"

namespace verisub::runtime {
namespace {

// How deep functions may call functions before the call is taken for a recursion.
constexpr int kMaxDepth = 64;
// The most nodes inlining may write (functions calling others twice, a few dozen deep, would
// otherwise make billions).
constexpr int64_t kMaxInlinedNodes = 4 << 20;

// FunctionProto.attribute_proto (field 11, IR version 9: attributes with default values), which
// the linked ONNX 1.12 does not know: read from the message's unknown fields.
std::map<std::string, onnx::AttributeProto> AttributeDefaults(const onnx::FunctionProto& f) {
  std::map<std::string, onnx::AttributeProto> defaults;
  const google::protobuf::UnknownFieldSet& unknown = f.GetReflection()->GetUnknownFields(f);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& field = unknown.field(i);
    if (field.number() != 11 ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::AttributeProto a;
    if (a.ParseFromString(field.length_delimited()) && !a.name().empty()) defaults[a.name()] = a;
  }
  return defaults;
}

class Inliner : NodeEmitter {
 public:
  explicit Inliner(onnx::ModelProto* model) : model_(model) {
    TakeNames(model->graph());
    for (const auto& f : model->functions()) {
      functions_[{f.domain(), f.name()}] = &f;
      for (const auto& n : f.node())
        for (const auto& s : n.output()) Take(s);
    }
  }

  StatusOr<int> Run() {
    VERISUB_RETURN_IF_ERROR(InlineIn(model_->mutable_graph()->mutable_node(), 0, ""));
    model_->clear_functions();
    return inlined_;
  }

 private:
  // The nodes a call of f becomes, its calls inlined (saturating past the budget; a recursion
  // counts as over it).
  int64_t ExpandedSize(const onnx::FunctionProto& f, int depth) {
    if (depth >= kMaxDepth) {
      too_deep_ = true;
      return kMaxInlinedNodes + 1;
    }
    auto it = sizes_.find(&f);
    if (it != sizes_.end()) return it->second;
    int64_t total = 0;
    for (const auto& n : f.node()) {
      const onnx::FunctionProto* g = Callee(n);
      total += g ? ExpandedSize(*g, depth + 1) : 1;
      if (total > kMaxInlinedNodes) break;
    }
    sizes_[&f] = total;
    return total;
  }

  const onnx::FunctionProto* Callee(const onnx::NodeProto& n) const {
    auto it = functions_.find({n.domain(), n.op_type()});
    return it == functions_.end() ? nullptr : it->second;
  }

  // Inlines the calls among `nodes`, `depth` functions deep inside the model's call `root`
  // (the one errors name; empty at the model's own level).
  Status InlineIn(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes, int depth,
                  const std::string& root) {
    bool any = false;
    for (auto& n : *nodes) {
      if (Callee(n)) any = true;
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g())
          VERISUB_RETURN_IF_ERROR(InlineIn(a.mutable_g()->mutable_node(), depth, root));
        for (auto& g : *a.mutable_graphs())
          VERISUB_RETURN_IF_ERROR(InlineIn(g.mutable_node(), depth, root));
      }
    }
    if (!any) return Status::Ok();
    std::vector<onnx::NodeProto> out;
    for (const auto& n : *nodes) {
      const onnx::FunctionProto* f = Callee(n);
      if (!f) {
        out.push_back(n);
        continue;
      }
      const std::string where =
          root.empty() ? "node '" + n.name() + "' (" + n.domain() + "." + n.op_type() + ")" : root;
      if (n.input_size() > f->input_size() || n.output_size() > f->output_size())
        return InvalidArgument(where + ": " + std::to_string(n.input_size()) + " inputs and " +
                               std::to_string(n.output_size()) + " outputs, the function takes " +
                               std::to_string(f->input_size()) + " and gives " +
                               std::to_string(f->output_size()));
      std::map<std::string, std::string> rename;  // the body's names -> the model's
      for (int i = 0; i < f->input_size(); ++i)
        rename[f->input(i)] = i < n.input_size() ? n.input(i) : "";
      if (depth == 0) inlined_nodes_ += ExpandedSize(*f, 0);
      if (depth >= kMaxDepth || too_deep_)
        return InvalidArgument(where + ": functions call each other more than " +
                               std::to_string(kMaxDepth) + " deep (a recursion?)");
      if (inlined_nodes_ > kMaxInlinedNodes)
        return InvalidArgument(where + ": inlining the model's functions would write more than " +
                               std::to_string(kMaxInlinedNodes) + " nodes");
      const std::string prefix =
          (n.name().empty() ? (n.output_size() > 0 ? n.output(0) : f->name()) : n.name()) + "/";
      for (int i = 0; i < f->output_size(); ++i)  // an output the call leaves out: internal
        rename[f->output(i)] = i < n.output_size() && !n.output(i).empty()
                                   ? n.output(i)
                                   : Fresh(prefix + f->output(i));
      std::map<std::string, const onnx::AttributeProto*> given;
      for (const auto& a : n.attribute()) given[a.name()] = &a;
      const std::map<std::string, onnx::AttributeProto> defaults = AttributeDefaults(*f);
      google::protobuf::RepeatedPtrField<onnx::NodeProto> body;
      for (const auto& b : f->node()) {
        onnx::NodeProto c = b;
        for (const auto& s : b.output())
          if (!s.empty() && !rename.count(s)) rename[s] = Fresh(prefix + s);
        if (!c.name().empty()) c.set_name(Fresh(prefix + c.name()));
        Bind(&c, rename, given, defaults);
        *body.Add() = std::move(c);
      }
      VERISUB_RETURN_IF_ERROR(InlineIn(&body, depth + 1, where));
      for (auto& c : body) out.push_back(std::move(c));
      ++inlined_;
    }
    nodes->Clear();
    for (auto& c : out) *nodes->Add() = std::move(c);
    return Status::Ok();
  }

  // Renames c's inputs and outputs (and the outer values its subgraphs read), and binds its
  // attribute references; an attribute referring to one neither given nor defaulted is dropped
  // (the operator's own default applies).
  void Bind(onnx::NodeProto* c, const std::map<std::string, std::string>& rename,
            const std::map<std::string, const onnx::AttributeProto*>& given,
            const std::map<std::string, onnx::AttributeProto>& defaults) {
    for (auto& s : *c->mutable_input()) {
      auto it = rename.find(s);
      if (it != rename.end()) s = it->second;
    }
    for (auto& s : *c->mutable_output()) {
      auto it = rename.find(s);
      if (it != rename.end()) s = it->second;
    }
    auto* attrs = c->mutable_attribute();
    for (int i = 0; i < attrs->size();) {
      onnx::AttributeProto* a = attrs->Mutable(i);
      if (!a->ref_attr_name().empty()) {
        const std::string name = a->name();
        auto g = given.find(a->ref_attr_name());
        auto d = defaults.find(a->ref_attr_name());
        if (g != given.end()) {
          *a = *g->second;
        } else if (d != defaults.end()) {
          *a = d->second;
        } else {
          attrs->DeleteSubrange(i, 1);
          continue;
        }
        a->set_name(name);
        a->clear_ref_attr_name();
      }
      if (a->has_g()) RenameIn(a->mutable_g(), rename);
      for (auto& sub : *a->mutable_graphs()) RenameIn(&sub, rename);
      ++i;
    }
  }

  // Outer-scope values a subgraph of a body node reads, renamed (not those it defines itself).
  void RenameIn(onnx::GraphProto* g, const std::map<std::string, std::string>& rename) {
    std::set<std::string> own;
    for (const auto& v : g->input()) own.insert(v.name());
    for (const auto& t : g->initializer()) own.insert(t.name());
    for (const auto& n : g->node())
      for (const auto& s : n.output()) own.insert(s);
    auto outer = [&](std::string* s) {
      if (own.count(*s)) return;
      auto it = rename.find(*s);
      if (it != rename.end()) *s = it->second;
    };
    for (auto& n : *g->mutable_node()) {
      for (auto& s : *n.mutable_input()) outer(&s);
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) RenameIn(a.mutable_g(), rename);
        for (auto& sub : *a.mutable_graphs()) RenameIn(&sub, rename);
      }
    }
    for (auto& o : *g->mutable_output()) outer(o.mutable_name());
  }

  onnx::ModelProto* model_;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions_;
  int inlined_ = 0;
  int64_t inlined_nodes_ = 0;
  std::map<const onnx::FunctionProto*, int64_t> sizes_;
  bool too_deep_ = false;
};

}  // namespace

StatusOr<int> InlineLocalFunctions(onnx::ModelProto* model) {
  if (model->functions_size() == 0) return 0;
  Inliner inliner(model);
  return inliner.Run();
}

}  // namespace verisub::runtime
