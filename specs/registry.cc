// The operator set.
#include "specs/registry.h"

#include <xxhash.h>

#include <cstdio>

#include "specs/ops/all_ops.h"

namespace verisub::specs {
namespace {

std::vector<OpSpec> BuildOps() {
  std::vector<OpSpec> all = {
#define VERISUB_OP_SPEC(name, file) ops::name##Spec(),
      VERISUB_FOR_EACH_OP(VERISUB_OP_SPEC)
#undef VERISUB_OP_SPEC
  };
  VERISUB_CHECK(all.size() == static_cast<size_t>(kNumOpKinds));
  for (int i = 0; i < kNumOpKinds; ++i) VERISUB_CHECK(static_cast<int>(all[i].kind) == i);
  return all;
}

}  // namespace

const std::vector<OpSpec>& AllOps() {
  static const std::vector<OpSpec> ops = BuildOps();
  return ops;
}

const OpSpec& GetOp(OpKind kind) { return AllOps()[static_cast<int>(kind)]; }

const OpSpec* FindOp(std::string_view name) {
  for (const OpSpec& op : AllOps())
    if (op.name == name) return &op;
  return nullptr;
}

const ParamDesc* OpSpec::FindParam(std::string_view pname) const {
  for (const ParamDesc& d : params)
    if (d.name == pname) return &d;
  return nullptr;
}

Params OpSpec::DefaultParams() const {
  Params p;
  for (const ParamDesc& d : params)
    if (!d.domain.empty()) p[d.slot] = d.domain[0];
  return p;
}

std::string DescribeOp(const OpSpec& op) {
  std::string s = op.name + " inputs=" + std::to_string(op.num_inputs) +
                  " outputs=" + std::to_string(op.num_outputs);
  if (op.commutative) s += " commutative";
  if (op.idempotent) s += " idempotent";
  if (op.is_constant) s += " constant";
  for (const ParamDesc& d : op.params) {
    s += "\n  param " + d.name + " {";
    for (size_t i = 0; i < d.domain.size(); ++i) {
      Params p;
      p[d.slot] = d.domain[i];
      s += (i ? "," : "") + FormatParamValue(d, p);
    }
    s += "}";
    for (const auto& [value, name] : d.names) s += " " + name + "=" + std::to_string(value);
  }
  s += "\n  axioms" + op.axioms;
  return s;
}

uint64_t OpSetFingerprint() {
  XXH3_state_t* st = XXH3_createState();
  VERISUB_CHECK(st != nullptr);
  XXH3_64bits_reset(st);
  for (const OpSpec& op : AllOps()) {
    std::string d = DescribeOp(op);
    XXH3_64bits_update(st, d.data(), d.size() + 1);
  }
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

std::string OpSetFingerprintHex() {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(OpSetFingerprint()));
  return buf;
}

}  // namespace verisub::specs
