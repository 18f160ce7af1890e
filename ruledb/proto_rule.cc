// Rules <-> protobuf messages.
#include "ruledb/proto_rule.h"

#include <algorithm>
#include <optional>
#include <string>

#include "ruledb/text_form.h"
#include "specs/registry.h"

namespace verisub::ruledb {
namespace {

void ValueToProto(ValueRef v, v2::Value* p) {
  p->set_node(v.node);
  p->set_index(static_cast<uint32_t>(v.index));
}

void GraphToProto(const PatternGraph& g, v2::Graph* p) {
  for (const PatternNode& n : g.nodes) {
    const specs::OpSpec& op = specs::GetOp(n.op);
    v2::Node* pn = p->add_nodes();
    pn->set_op(op.name);
    for (const specs::ParamDesc& d : op.params) {
      v2::Param* pp = pn->add_params();
      pp->set_name(d.name);
      pp->set_value(specs::FormatParamValue(d, n.params));
    }
    for (const ValueRef& v : n.inputs) ValueToProto(v, pn->add_inputs());
  }
  for (const ValueRef& v : g.outputs) ValueToProto(v, p->add_outputs());
}

StatusOr<ValueRef> ValueFromProto(const v2::Value& p) {
  // Bounds are checked by ValidateRule; here only what cannot be represented.
  if (p.node() < ValueRef::kInput) return DataLoss("negative node index");
  if (p.index() > 1000000) return DataLoss("output index out of range");
  return ValueRef{p.node(), static_cast<int>(p.index())};
}

StatusOr<PatternGraph> GraphFromProto(const v2::Graph& p) {
  PatternGraph g;
  g.nodes.reserve(p.nodes_size());
  for (int i = 0; i < p.nodes_size(); ++i) {
    const v2::Node& pn = p.nodes(i);
    const std::string where = "node " + std::to_string(i);
    const specs::OpSpec* op = specs::FindOp(pn.op());
    if (!op) return NotFound(where + ": unknown operator '" + pn.op() + "'");
    PatternNode n;
    n.op = op->kind;
    if (pn.params_size() != static_cast<int>(op->params.size()))
      return NotFound(where + ": '" + op->name + "' has " + std::to_string(op->params.size()) +
                      " parameters, the file gives " + std::to_string(pn.params_size()));
    for (const v2::Param& pp : pn.params()) {
      const specs::ParamDesc* d = op->FindParam(pp.name());
      if (!d) return NotFound(where + ": '" + op->name + "' has no parameter '" + pp.name() + "'");
      Status st = specs::ParseParamValue(*d, pp.value(), &n.params);
      if (!st.ok()) return NotFound(where + ": " + op->name + ": " + st.message());
    }
    if (pn.inputs_size() != op->num_inputs)
      return DataLoss(where + ": '" + op->name + "' takes " + std::to_string(op->num_inputs) +
                      " inputs, the file gives " + std::to_string(pn.inputs_size()));
    for (const v2::Value& pv : pn.inputs()) {
      VERISUB_ASSIGN_OR_RETURN(ValueRef v, ValueFromProto(pv));
      n.inputs.push_back(v);
    }
    g.nodes.push_back(std::move(n));
  }
  for (const v2::Value& pv : p.outputs()) {
    VERISUB_ASSIGN_OR_RETURN(ValueRef v, ValueFromProto(pv));
    g.outputs.push_back(v);
  }
  return g;
}

}  // namespace

v2::Rule RuleToProto(const Rule& r) {
  const Rule c = Canonicalize(r);
  v2::Rule p;
  p.set_id(c.Id());
  p.set_num_inputs(static_cast<uint32_t>(c.num_inputs));
  GraphToProto(c.src, p.mutable_src());
  GraphToProto(c.dst, p.mutable_dst());
  v2::ProofRecord* pr = p.mutable_proof();
  pr->set_status(ProofStatusToProto(c.proof.status));
  for (const std::string& a : c.proof.axioms_used) pr->add_axioms_used(a);
  pr->set_seconds(c.proof.seconds);
  pr->set_reason(c.proof.reason);
  for (int rank : c.input_ranks) p.add_input_ranks(static_cast<uint32_t>(rank));
  return p;
}

StatusOr<Rule> RuleFromProto(const v2::Rule& p, bool check_id) {
  Rule r;
  if (p.num_inputs() > 1000) return DataLoss("input count " + std::to_string(p.num_inputs()));
  r.num_inputs = static_cast<int>(p.num_inputs());
  // Formatting a DAG as a tree can blow up exponentially; a crafted file must not hang us.
  constexpr int64_t kMaxTree = 4096;
  for (const v2::Graph* g : {&p.src(), &p.dst()}) {
    int64_t size = TreeTextSize(*g, p.num_inputs(), kMaxTree);
    if (size < 0) return DataLoss("graph reference out of range");
    if (size > kMaxTree) return DataLoss("rule too large");
  }
  auto src = GraphFromProto(p.src());
  if (!src.ok()) return src.status().WithContext("source");
  auto dst = GraphFromProto(p.dst());
  if (!dst.ok()) return dst.status().WithContext("target");
  r.src = std::move(*src);
  r.dst = std::move(*dst);
  for (uint32_t rank : p.input_ranks())
    r.input_ranks.push_back(static_cast<int>(std::min<uint32_t>(rank, 1000)));
  Status valid = ValidateRule(r);
  if (!valid.ok()) return DataLoss(valid.message());
  std::optional<ProofStatus> status = ProofStatusFromProto(p.proof().status());
  if (!status)
    return DataLoss("unknown proof status " + std::to_string(static_cast<int>(p.proof().status())));
  r.proof.status = *status;
  r.proof.axioms_used.assign(p.proof().axioms_used().begin(), p.proof().axioms_used().end());
  r.proof.seconds = p.proof().seconds();
  r.proof.reason = p.proof().reason();
  if (!check_id) return r;
  Rule c = Canonicalize(r);
  std::string id = c.Id();
  if (id != p.id())
    return DataLoss("stored id '" + p.id() + "' does not match the rule's id " + id);
  return c;
}

}  // namespace verisub::ruledb
