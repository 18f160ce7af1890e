// Building the search space from a config.
#include "gen/search_space.h"

#include <map>

#include "specs/evaluate.h"
#include "specs/registry.h"
#include "specs/semantics.h"

namespace verisub::gen {
namespace {

// Counter-based random numbers: the value of input i in test t does not depend on the others.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix64(state_ += 0x9e3779b97f4a7c15ull); }

 private:
  uint64_t state_;
};

uint64_t OpKey(const OpInstance& inst) {
  uint64_t k = HashCombine(0x51ed27f3ull, static_cast<uint64_t>(inst.kind));
  for (int64_t v : inst.params.v) k = HashCombine(k, static_cast<uint64_t>(v));
  return k;
}

std::vector<uint8_t> AllowedArgs(const GenConfig& c, const std::vector<Consumer>& consumers) {
  std::vector<uint8_t> allowed(c.ops.size(), consumers.empty() ? 0xff : 0);
  for (size_t i = 0; i < c.ops.size(); ++i) {
    const specs::OpSpec& op = specs::GetOp(c.ops[i].kind);
    for (const Consumer& k : consumers) {
      if (k.kind != op.kind) continue;
      // Operands of a commutative operator are interchangeable: either position will do.
      allowed[i] |= (k.arg < 0 || op.commutative) ? 0xff : static_cast<uint8_t>(1u << k.arg);
    }
  }
  return allowed;
}

}  // namespace

uint64_t HashType(const specs::TensorType& t) {
  uint64_t h = HashCombine(0x7e45ull, static_cast<uint64_t>(t.shape.rank));
  for (int i = 0; i < t.shape.rank; ++i) {
    h = HashCombine(h, static_cast<uint64_t>(t.shape[i]));
    h = HashCombine(h, specs::HashTree(t.trees[i]));
  }
  return h;
}

StatusOr<SearchSpace> BuildSearchSpace(const GenConfig& config) {
  SearchSpace s;
  s.config = &config;
  std::map<std::string, int> group_ids;
  std::vector<int> group_size;
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    const InputDecl& in = config.inputs[i];
    auto [it, fresh] = group_ids.emplace(in.group, static_cast<int>(group_ids.size()));
    if (fresh) group_size.push_back(0);
    InitialTensor t;
    t.name = in.name;
    t.input = static_cast<int>(i);
    t.group = it->second;
    t.member = group_size[t.group]++;
    // Per input, not per group: a graph and its renamings are built alike, so a group only
    // filters the ungrouped enumeration (enumerator.cc) and keeps its order. Without groups the
    // input index is the group index, as before groups worked this way.
    t.key = HashCombine(0x1a7b5ull, static_cast<uint64_t>(i));
    t.type = specs::TensorType(in.shape);
    t.allowed_args = AllowedArgs(config, in.consumers);
    s.initial.push_back(std::move(t));
  }
  s.num_groups = static_cast<int>(group_ids.size());
  for (const OpInstance& inst : config.ops) {
    const specs::OpSpec& op = specs::GetOp(inst.kind);
    s.op_keys.push_back(OpKey(inst));
    s.num_outputs.push_back(op.num_outputs);
    s.ordered_operands.push_back(op.commutative && config.break_commutative);
  }

  const int num_tests = config.double_tests;
  s.doubles.resize(num_tests);
  specs::ModIntSemantics mi;
  specs::DoubleSemantics db;
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    const specs::TensorType& type = s.initial[i].type;
    int64_t n = type.shape.NumElements();
    Rng fr(HashCombine(config.seed, 2 * i));
    specs::Tensor<uint32_t> m{type, {}};
    for (int64_t e = 0; e < n; ++e)
      m.data.push_back(static_cast<uint32_t>(fr.Next() % specs::ModIntSemantics::kPrime));
    s.modint.push_back(std::move(m));
    for (int t = 0; t < num_tests; ++t) {
      Rng dr(HashCombine(HashCombine(config.seed, 2 * i + 1), static_cast<uint64_t>(t)));
      specs::Tensor<double> d{type, {}};
      for (int64_t e = 0; e < n; ++e)
        d.data.push_back(static_cast<double>(dr.Next() >> 11) * 0x1.0p-52 - 1.0);
      s.doubles[t].push_back(std::move(d));
    }
  }
  for (const ConstantDecl& c : config.constants) {
    const InitialTensor& src = s.initial[c.source()];
    InitialTensor t;
    t.name = specs::GetOp(c.op.kind).name + "(";
    for (size_t i = 0; i < c.sources.size(); ++i)
      t.name += (i ? ", " : "") + s.initial[c.sources[i]].name;
    t.name += ")";
    t.is_input = false;
    t.input = c.source();
    t.sources = c.sources;
    t.constant = c.op;
    t.group = src.group;
    t.member = src.member;
    // As an operator's key on its operands (enumerator.cc): a fold is that operator's term.
    t.key = OpKey(c.op);
    for (int source : c.sources) t.key = HashCombine(t.key, s.initial[source].key);
    t.allowed_args = AllowedArgs(config, c.consumers);
    const specs::Tensor<uint32_t>* min[specs::kMaxOpInputs];
    for (size_t i = 0; i < c.sources.size(); ++i) min[i] = &s.modint[c.sources[i]];
    specs::Tensor<uint32_t> mout[specs::kMaxOpOutputs];
    Status st = specs::Evaluate(mi, c.op.kind, c.op.params, min, mout);
    if (!st.ok())
      return InvalidArgument(config.source_name + ": constant " + t.name + ": " + st.message());
    t.type = mout[0].type;
    s.modint.push_back(std::move(mout[0]));
    for (int k = 0; k < num_tests; ++k) {
      const specs::Tensor<double>* din[specs::kMaxOpInputs];
      for (size_t i = 0; i < c.sources.size(); ++i) din[i] = &s.doubles[k][c.sources[i]];
      specs::Tensor<double> dout[specs::kMaxOpOutputs];
      VERISUB_CHECK(specs::Evaluate(db, c.op.kind, c.op.params, din, dout).ok());
      s.doubles[k].push_back(std::move(dout[0]));
    }
    s.initial.push_back(std::move(t));
  }
  for (size_t i = 0; i < s.initial.size(); ++i)
    s.term_keys.push_back(HashCombine(0x3c6ef372ull, static_cast<uint64_t>(i)));
  return s;
}

}  // namespace verisub::gen
