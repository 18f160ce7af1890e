// Prover: one query per rule, tracked axiom assertions for the unsat core, dumps of non-proofs.
#include "verify/prover.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "base/process_stats.h"
#include "base/progress.h"
#include "ruledb/database.h"
#include "ruledb/pattern_ranks.h"
#include "specs/registry.h"
#include "verify/index_level.h"
#include "verify/watchdog.h"

namespace verisub::verify {

using ruledb::ProofRecord;
using ruledb::ProofStatus;

StatusOr<std::shared_ptr<const AxiomBase>> MakeAxiomBase(std::vector<specs::Axiom> axioms) {
  auto base = std::make_shared<AxiomBase>();
  auto inst = InstantiateAxioms(axioms, &base->functions);
  if (!inst.ok()) return inst.status();
  base->axioms = std::move(axioms);
  base->instances = std::move(*inst);
  return std::shared_ptr<const AxiomBase>(std::move(base));
}

Prover::Prover(std::shared_ptr<const AxiomBase> base, ProverOptions options)
    : base_(std::move(base)), options_(std::move(options)) {
  formulas_.resize(base_->instances.size());
  tracks_.resize(base_->instances.size());
}

void Prover::ResetContext() {
  for (auto& f : formulas_) f.reset();
  for (auto& t : tracks_) t.reset();
  encoder_.reset();
  ctx_.reset();
  context_spent_ = false;
}

Encoder& Prover::encoder() {
  if (!encoder_) {
    ctx_ = std::make_unique<z3::context>();
    encoder_ = std::make_unique<Encoder>(*ctx_);
  }
  return *encoder_;
}

const z3::expr& Prover::Formula(int instance) {
  if (!formulas_[instance]) {
    const AxiomInstance& inst = base_->instances[instance];
    formulas_[instance] =
        std::make_unique<z3::expr>(encoder().AxiomFormula(base_->axioms[inst.axiom], inst));
  }
  return *formulas_[instance];
}

const z3::expr& Prover::Track(int instance) {
  if (!tracks_[instance]) {
    int ax = base_->instances[instance].axiom;
    std::string name = "axiom!" + base_->axioms[ax].name + "!" + std::to_string(instance);
    tracks_[instance] = std::make_unique<z3::expr>(ctx().bool_const(name.c_str()));
  }
  return *tracks_[instance];
}

std::vector<int> Prover::Relevant(const std::vector<std::string>& functions, int excluded_axiom,
                                  bool include_guarded) const {
  std::pair<std::vector<std::string>, bool> key(functions, include_guarded);
  std::sort(key.first.begin(), key.first.end());
  key.first.erase(std::unique(key.first.begin(), key.first.end()), key.first.end());
  std::vector<int> all;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(base_->relevant_mu);
    auto it = base_->relevant.find(key);
    if (it != base_->relevant.end()) {
      all = it->second;
      cached = true;
    }
  }
  if (!cached) {
    all = RelevantInstances(base_->instances, key.first, include_guarded);
    std::lock_guard<std::mutex> lock(base_->relevant_mu);
    base_->relevant.emplace(std::move(key), all);
  }
  std::vector<int> relevant;
  for (int i : all)
    if (base_->instances[i].axiom != excluded_axiom) relevant.push_back(i);
  return relevant;
}

std::vector<z3::expr> Prover::RankFacts(const Query& query, const std::vector<int>& instances) {
  std::set<std::string> names(query.functions.begin(), query.functions.end());
  for (int i : instances) {
    const AxiomInstance& in = base_->instances[i];
    names.insert(in.lhs_functions.begin(), in.lhs_functions.end());
    names.insert(in.rhs_functions.begin(), in.rhs_functions.end());
  }
  std::vector<const FunctionRanks::Entry*> entries;
  for (const std::string& name : names) {
    const FunctionRanks::Entry* e = base_->functions.Find(name);
    if (!e && query.signatures) e = query.signatures->Find(name);
    if (e) entries.push_back(e);  // one never probed gets no fact: no guard on it ever holds
  }
  // Only ranks a term of this query can have matter: those assumed, closed under the
  // functions' cases. Cases with other input ranks could never fire.
  uint32_t reachable = 0;
  for (const auto& [term, ranks] : query.ranks)
    for (int r : ranks) reachable |= 1u << r;
  for (bool changed = true; changed;) {
    changed = false;
    for (const FunctionRanks::Entry* e : entries)
      for (const specs::RankCase& c : e->cases) {
        uint32_t out = 1u << c.outputs[e->sig.output];
        if ((reachable & out) || !RanksWithin(c.inputs, reachable)) continue;
        reachable |= out;
        changed = true;
      }
  }
  std::vector<z3::expr> facts;
  for (const FunctionRanks::Entry* e : entries) {
    z3::func_decl f = encoder().Function(e->sig.op, e->sig.params, e->sig.output);
    if (auto fact = encoder().ranks().Facts(f, e->sig, e->cases, reachable)) facts.push_back(*fact);
  }
  return facts;
}

namespace {

// The function names a rule applies; `signatures`, when given, receives those of the functions
// `known` has not probed.
std::vector<std::string> RuleFunctions(const ruledb::Rule& rule, const FunctionRanks& known,
                                       FunctionRanks* signatures) {
  std::vector<std::string> names;
  for (const ruledb::PatternGraph* g : {&rule.src, &rule.dst})
    for (const ruledb::PatternNode& n : g->nodes)
      for (int k = 0; k < specs::GetOp(n.op).num_outputs; ++k) {
        names.push_back(FunctionName(n.op, n.params, k));
        if (signatures && !known.Find(names.back()))
          signatures->Get(names.back(), {n.op, n.params, k});
      }
  return names;
}

std::string RanksComment(const std::vector<int>& ranks) {
  if (ranks.empty()) return "";
  return "\n; input ranks asserted:" + ruledb::InputRanksText(ranks).substr(6);
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::string> SortedUnique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// Whether the normal forms of `rule` agree at every tuple of `tuples` (none: no), appending the
// element definitions the proofs used to `used`.
bool HoldsAtEvery(const ruledb::Rule& rule, const std::vector<std::vector<int>>& tuples,
                  std::vector<std::string>* used) {
  if (tuples.empty()) return false;
  for (const std::vector<int>& t : tuples) {
    IndexLevelResult r = ProveAtIndexLevel(rule, t);
    if (!r.proved) return false;
    used->insert(used->end(), r.used.begin(), r.used.end());
  }
  return true;
}

}  // namespace

RuleVerdict Prover::ProveRule(const ruledb::Rule& rule, const std::string& dump_name) {
  RuleVerdict verdict = ProveFromAxioms(rule, dump_name);
  const ProofStatus s = verdict.proof.status;
  if (options_.index_level) {
    if (s == ProofStatus::kUnknown || s == ProofStatus::kTimeout)
      ProveByNormalForms(rule, &verdict);
    if (s == ProofStatus::kProved && !verdict.input_ranks.empty() && rule.input_ranks.empty())
      GeneralizeRanks(rule, &verdict);
  }
  const ProofStatus now = verdict.proof.status;
  if (now == ProofStatus::kUnknown || now == ProofStatus::kTimeout) RefuteUndecided(rule, &verdict);
  return verdict;
}

void Prover::RefuteUndecided(const ruledb::Rule& rule, RuleVerdict* verdict) {
  // Neither the axioms nor the normal forms decide it: evaluate it at more shapes, every other
  // case with wider values, before calling it unknown. Only ever refutes.
  auto start = std::chrono::steady_clock::now();
  const RefuteOptions& ro = options_.refute;
  ruledb::Rule claim = rule;
  if (!verdict->input_ranks.empty()) claim.input_ranks = verdict->input_ranks;
  Refutation late = RefuteByEvaluation(claim, ro, ro.max_cases, ro.undecided_cases);
  if (late.refuted) {
    verdict->proof.status = ProofStatus::kNotProved;
    verdict->proof.reason = late.reason + "; before it: " + verdict->proof.reason;
  }
  verdict->proof.seconds += Since(start);
}

void Prover::GeneralizeRanks(const ruledb::Rule& rule, RuleVerdict* verdict) {
  // The axioms proved it at the ranks they were declared for (matmul's concat axioms, the
  // identities at 2-D); equal normal forms at every rank tuple where both sides could
  // type-check prove it at all of them, batched products included.
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> used;
  const RefuteOptions& ro = options_.refute;
  if (HoldsAtEvery(rule, CandidateRankTuples(rule), &used) &&
      !RefuteByEvaluation(rule, ro, 0, ro.proof_cases).refuted) {
    verdict->proof.axioms_used = SortedUnique(std::move(used));
    verdict->input_ranks.clear();
  }
  verdict->proof.seconds += Since(start);
}

void Prover::ProveByNormalForms(const ruledb::Rule& rule, RuleVerdict* verdict) {
  auto start = std::chrono::steady_clock::now();
  // At every rank tuple where both sides could type-check, the rule needs no ranks; else at the
  // first tuple where it holds.
  std::vector<std::vector<int>> every;
  if (rule.input_ranks.empty()) every = CandidateRankTuples(rule);
  std::vector<std::string> used;
  std::optional<std::vector<int>> claim;
  if (HoldsAtEvery(rule, every, &used)) {
    claim.emplace();
  } else {
    used.clear();
    // The generator's tuples first (where the rule was found), then the others in order.
    std::vector<std::vector<int>> tuples = {rule.input_ranks};
    if (rule.input_ranks.empty()) {
      tuples = WellTypedRankTuples(rule, options_.refute, kMaxRankTuples);
      tuples.insert(tuples.end(), every.begin(), every.end());
    }
    for (const std::vector<int>& t : tuples)
      if (HoldsAtEvery(rule, {t}, &used)) {
        claim = t;
        break;
      }
  }
  const double before = verdict->proof.seconds;  // Z3's attempts
  if (!claim) {
    verdict->proof.seconds = before + Since(start);
    return;
  }
  // As for Z3's proofs: a proof is what gets shipped, so the evaluation goes on to more cases
  // at the ranks claimed (and a counterexample would be a bug of an element definition).
  ruledb::Rule checked = rule;
  if (!claim->empty() && !ruledb::RanksAreForced(rule, *claim)) checked.input_ranks = *claim;
  const RefuteOptions& ro = options_.refute;
  Refutation late = RefuteByEvaluation(checked, ro, 0, ro.proof_cases);
  if (late.refuted) {
    verdict->proof.seconds = before + Since(start);
    verdict->proof.reason += "; index-level normal forms agree but " + late.reason;
    return;
  }
  verdict->proof = ruledb::ProofRecord();
  verdict->proof.status = ProofStatus::kProved;
  verdict->proof.axioms_used = SortedUnique(std::move(used));
  verdict->proof.seconds = before + Since(start);
  verdict->input_ranks = checked.input_ranks;
}

RuleVerdict Prover::ProveFromAxioms(const ruledb::Rule& rule, const std::string& dump_name) {
  if (context_spent_) ResetContext();
  // Ranks matter when a relevant axiom instance is guarded (or the rule claims ranks): then Z3
  // is told the ranks of the rule's inputs at its well-typed base shapes, one tuple at a time.
  std::vector<std::vector<int>> tuples;
  if (!rule.input_ranks.empty()) {
    tuples.push_back(rule.input_ranks);
  } else {
    std::vector<int> relevant = Relevant(RuleFunctions(rule, base_->functions, nullptr), -1, true);
    if (std::any_of(relevant.begin(), relevant.end(),
                    [&](int i) { return base_->instances[i].guarded(); }))
      tuples = WellTypedRankTuples(rule, options_.refute, kMaxRankTuples);
  }
  RuleVerdict verdict;
  if (tuples.empty()) {
    bool used_ranks = false;
    verdict.proof = Decide(rule, {}, dump_name, &used_ranks);
    return verdict;
  }
  // Not proved at any tuple: the first refutation (the rule as stated is false), else the
  // outcome at the first tuple; its time is that of every attempt.
  std::optional<ruledb::ProofRecord> first, first_refuted;
  double seconds = 0;
  for (size_t t = 0; t < tuples.size(); ++t) {
    bool used_ranks = false;
    std::string name = t == 0 ? dump_name : dump_name + "-ranks" + std::to_string(t + 1);
    ruledb::ProofRecord record = Decide(rule, tuples[t], name, &used_ranks);
    seconds += record.seconds;
    if (record.status == ProofStatus::kProved) {
      verdict.proof = std::move(record);
      // Ranks the rule could not have anyway are not worth stating.
      if (!rule.input_ranks.empty() || (used_ranks && !ruledb::RanksAreForced(rule, tuples[t])))
        verdict.input_ranks = tuples[t];
      return verdict;
    }
    bool refuted = record.status == ProofStatus::kNotProved &&
                   record.reason.rfind(kRefutationReasonPrefix, 0) == 0;
    if (refuted && !first_refuted) first_refuted = record;
    if (!first) first = std::move(record);
  }
  verdict.proof = first_refuted ? *first_refuted : *first;
  verdict.proof.seconds = seconds;
  verdict.input_ranks = rule.input_ranks;
  return verdict;
}

bool Prover::RuleQuery(const ruledb::Rule& rule, const std::vector<int>& ranks,
                       const std::string& dump_name, Query* query, std::string* error) {
  Encoder& enc = encoder();
  std::vector<z3::expr> inputs;
  for (int i = 0; i < rule.num_inputs; ++i) {
    std::string name = ruledb::InputName(i).substr(1);  // `?a` -> `a`
    inputs.push_back(ctx().constant(name.c_str(), enc.tensor_sort()));
  }
  query->functions = RuleFunctions(rule, base_->functions, ranks.empty() ? nullptr : &signatures_);
  query->signatures = &signatures_;
  std::vector<z3::expr> src = enc.EncodePattern(rule.src, inputs, nullptr);
  std::vector<z3::expr> dst = enc.EncodePattern(rule.dst, inputs, nullptr);
  if (src.size() != dst.size() || src.empty()) {
    *error = "source and target have different numbers of outputs";
    return false;
  }
  for (size_t i = 0; i < src.size(); ++i) query->goals.emplace_back(src[i], dst[i]);
  for (size_t i = 0; i < ranks.size(); ++i) query->ranks.push_back({inputs[i], {ranks[i]}});
  query->dump_name = dump_name;
  query->comment = "rule: " + rule.ToText() + RanksComment(ranks);
  return true;
}

void Prover::DumpRule(const ruledb::Rule& rule, const std::vector<int>& ranks,
                      const std::string& dump_name, const std::string& note,
                      const ProofRecord& record) {
  if (options_.smt2_dir.empty()) return;
  // In a context of its own: encoding a query adds terms to a context, and what a context has
  // seen steers Z3's later searches in it, so dumping must not touch the batch's context.
  if (!dump_prover_) dump_prover_ = std::make_unique<Prover>(base_, options_);
  Prover& p = *dump_prover_;
  try {
    Query query;
    std::string error;
    if (!p.RuleQuery(rule, ranks, dump_name, &query, &error)) return;
    query.comment += note;
    std::vector<int> relevant = p.Relevant(query.functions, -1, !query.ranks.empty());
    std::vector<z3::expr> background;
    if (!query.ranks.empty()) background = p.RankFacts(query, relevant);
    for (const auto& [term, allowed] : query.ranks)
      background.push_back(p.encoder().ranks().RankIn(term, allowed));
    z3::expr_vector differ(p.ctx());
    for (const auto& [l, r] : query.goals) differ.push_back(l != r);
    p.Dump(relevant, background, z3::mk_or(differ), dump_name, query.comment, record);
  } catch (const z3::exception& e) {
    std::fprintf(stderr, "verify: cannot write the query of %s: z3: %s\n", dump_name.c_str(),
                 e.msg());
  }
}

ProofRecord Prover::Decide(const ruledb::Rule& rule, const std::vector<int>& ranks,
                           const std::string& dump_name, bool* used_ranks) {
  auto start = std::chrono::steady_clock::now();
  // The claim this attempt checks: the rule at `ranks` (or at every rank).
  ruledb::Rule claim = rule;
  if (!ranks.empty()) claim.input_ranks = ranks;
  // A rule whose sides differ at some shapes is false, whatever the axioms let Z3 derive.
  Refuter refuter(claim, options_.refute);
  Refutation refutation = refuter.Run(options_.refute.max_cases);
  ProofRecord refuted;
  refuted.status = ProofStatus::kNotProved;
  if (refutation.refuted) {
    refuted.reason = refutation.reason;
    refuted.seconds = Since(start);
    // Dumped anyway, so that everything not proved can be replayed.
    DumpRule(rule, ranks, dump_name, "\n; refuted by evaluation (not sent to z3)", refuted);
    return refuted;
  }
  try {
    Query query;
    std::string error;
    if (!RuleQuery(rule, ranks, "", &query, &error)) {  // no dump from Prove: DumpRule's below
      ProofRecord r;
      r.status = ProofStatus::kError;
      r.reason = error;
      return r;
    }
    bool used = false;
    ProofRecord proof = Prove(query, &used);
    if (proof.status != ProofStatus::kProved) {
      DumpRule(rule, ranks, dump_name, "", proof);
      return proof;
    }
    // A proof is what gets shipped: look harder for a counterexample first, at the ranks the
    // proof holds at (every rank when it needed none and the rule claims none).
    bool ranked = used || !rule.input_ranks.empty();
    const RefuteOptions& ro = options_.refute;
    // The claim checked before (the rule itself when no ranks were asserted) goes on where it
    // stopped; a proof that did not need the ranks asserted must hold at every rank.
    Refutation late = ranked || ranks.empty() ? refuter.Run(ro.proof_cases)
                                              : RefuteByEvaluation(rule, ro, 0, ro.proof_cases);
    if (!late.refuted) {
      *used_ranks = used;
      return proof;
    }
    refuted.reason = late.reason + " (z3 proved it: the encoding abstracts shapes away)";
    refuted.seconds = Since(start);
    DumpRule(rule, ranks, dump_name, "\n; refuted by evaluation (z3: unsat)", refuted);
    return refuted;
  } catch (const z3::exception& e) {
    ProofRecord r;
    r.status = ProofStatus::kError;
    r.reason = std::string("z3: ") + e.msg();
    return r;
  }
}

ProofRecord Prover::Prove(const Query& query, bool* used_ranks) {
  auto start = std::chrono::steady_clock::now();
  ProofRecord record;
  std::vector<int> relevant;
  if (query.goals.empty()) {  // an empty disjunction is false: "proved" without saying anything
    record.status = ProofStatus::kError;
    record.reason = "no equality to prove";
    return record;
  }
  try {
    const bool with_ranks = !query.ranks.empty();
    relevant = Relevant(query.functions, query.excluded_axiom, with_ranks);
    std::vector<z3::expr> background;
    if (with_ranks) background = RankFacts(query, relevant);
    // The plain SMT core: the default solver wraps it with a tactic front end that a query with
    // tracked assertions never uses, but that costs milliseconds to set up per query.
    z3::solver solver(ctx(), z3::solver::simple());
    z3::params p(ctx());
    p.set("mbqi", options_.model_based_instantiation);
    p.set("qi.lazy_threshold", options_.lazy_threshold);
    if (options_.resource_limit > 0) p.set("rlimit", options_.resource_limit);
    solver.set(p);
    // One tracking literal per axiom instance, `axiom!<name>!<instance>`: the core names axioms.
    for (int i : relevant) solver.add(Formula(i), Track(i));
    // Rank facts hold for every tensor (untracked); the ranks assumed are tracked, `rank!<k>`.
    for (const z3::expr& fact : background) solver.add(fact);
    std::vector<z3::expr> assumed;
    for (size_t k = 0; k < query.ranks.size(); ++k) {
      assumed.push_back(encoder().ranks().RankIn(query.ranks[k].first, query.ranks[k].second));
      std::string track = "rank!" + std::to_string(k);
      solver.add(assumed.back(), ctx().bool_const(track.c_str()));
    }
    z3::expr_vector differ(ctx());
    for (const auto& [l, r] : query.goals) differ.push_back(l != r);
    z3::expr negated_goal = z3::mk_or(differ);
    solver.add(negated_goal);
    // The wall-clock budget (the resource limit normally decides first); see watchdog.h.
    bool interrupted = false;
    z3::check_result result;
    {
      ScopedDeadline deadline(ctx(), std::chrono::milliseconds(std::max(1, options_.timeout_ms)));
      result = solver.check();
      interrupted = deadline.fired();
    }
    if (interrupted) context_spent_ = true;
    if (result == z3::unsat) {
      record.status = ProofStatus::kProved;
      std::set<std::string> used;
      bool ranks_in_core = false;
      z3::expr_vector core = solver.unsat_core();
      for (unsigned i = 0; i < core.size(); ++i) {
        std::string name = core[i].decl().name().str();
        if (name.rfind("rank!", 0) == 0) {
          ranks_in_core = true;
          continue;
        }
        size_t a = name.find('!'), b = name.rfind('!');
        used.insert(name.substr(a + 1, b - a - 1));
        ranks_in_core = ranks_in_core || base_->instances[std::stoi(name.substr(b + 1))].guarded();
      }
      record.axioms_used.assign(used.begin(), used.end());
      if (used_ranks) *used_ranks = ranks_in_core;
    } else if (result == z3::sat && !with_ranks &&
               Relevant(query.functions, query.excluded_axiom, true).size() != relevant.size()) {
      // Not a countermodel of the axioms: those guarded by ranks were left out.
      record.status = ProofStatus::kUnknown;
      record.reason = "no proof without rank-guarded axioms (no input ranks known)";
    } else if (result == z3::sat) {
      record.status = ProofStatus::kNotProved;
      record.reason = "countermodel: the axioms hold but the outputs differ";
    } else {
      std::string why = solver.reason_unknown();
      // Z3 reports an exhausted rlimit as "canceled", "timeout" or plain "unknown" depending on
      // where it stops; before the wall-clock budget is spent, that can only be the rlimit.
      double elapsed = Since(start);
      bool saturated = why.find("incomplete quantifiers") != std::string::npos;
      bool out_of_resources =
          options_.resource_limit > 0 && !saturated &&
          (why.find("resource") != std::string::npos || elapsed * 1e3 < 0.9 * options_.timeout_ms);
      bool timed_out = interrupted || out_of_resources ||
                       why.find("timeout") != std::string::npos ||
                       why.find("canceled") != std::string::npos;
      record.status = timed_out ? ProofStatus::kTimeout : ProofStatus::kUnknown;
      if (out_of_resources)
        record.reason = "resource limit " + std::to_string(options_.resource_limit) + " exceeded";
      else if (timed_out)  // interrupted at the deadline
        record.reason = "timeout after " + std::to_string(options_.timeout_ms) + " ms";
      else if (saturated)
        record.reason = "no proof: axiom instantiation saturated (z3: " + why + ")";
      else
        record.reason = "solver answered unknown: " + why;
    }
    record.seconds = Since(start);
    if (record.status != ProofStatus::kProved && !options_.smt2_dir.empty() &&
        !query.dump_name.empty()) {
      background.insert(background.end(), assumed.begin(), assumed.end());
      Dump(relevant, background, negated_goal, query.dump_name, query.comment, record);
    }
  } catch (const z3::exception& e) {
    record.status = ProofStatus::kError;
    record.reason = std::string("z3: ") + e.msg();
    record.seconds = Since(start);
  }
  return record;
}

void Prover::Dump(const std::vector<int>& instances, const std::vector<z3::expr>& background,
                  const z3::expr& negated_goal, const std::string& dump_name,
                  const std::string& comment, const ProofRecord& record) {
  // An untracked copy of the query, so that `z3 file.smt2` replays exactly what was asked.
  z3::solver plain(ctx(), z3::solver::simple());
  for (int i : instances) plain.add(Formula(i));
  for (const z3::expr& e : background) plain.add(e);
  plain.add(negated_goal);
  std::filesystem::path path = std::filesystem::path(options_.smt2_dir) / (dump_name + ".smt2");
  std::ostringstream out;
  out << "; verisub verify query (" << ruledb::ProofStatusName(record.status) << ": "
      << record.reason << ")\n; " << comment << "\n; axioms:";
  std::set<std::string> names;
  for (int i : instances) names.insert(base_->axioms[base_->instances[i].axiom].name);
  for (const std::string& n : names) out << " " << n;
  out << "\n; unsat would mean proved; replay with: z3 " << path.filename().string() << "\n";
  out << "(set-option :timeout " << options_.timeout_ms << ")\n";
  if (options_.resource_limit > 0)
    out << "(set-option :rlimit " << options_.resource_limit << ")\n";
  out << "(set-option :smt.mbqi " << (options_.model_based_instantiation ? "true" : "false")
      << ")\n";
  out << "(set-option :smt.qi.lazy_threshold " << options_.lazy_threshold << ")\n";
  out << plain.to_smt2();
  Status written = base::WriteFileAtomically(path.string(), out.str());
  if (!written.ok()) std::fprintf(stderr, "verify: %s\n", written.message().c_str());
}

std::string VerifyReport::Summary() const {
  char buf[400];
  std::snprintf(
      buf, sizeof(buf),
      "%d candidates: %d proved (%d at input ranks only), %d not proved (%d refuted by "
      "evaluation, %d countermodel, %d unknown, %d timeout, %d error) in %.2f s on %d threads; "
      "proofs: median %.1f ms, max %.1f ms",
      total, proved, proved_ranked, total - proved, refuted, not_proved - refuted, unknown, timeout,
      error, seconds, threads, proof_median_seconds * 1e3, proof_max_seconds * 1e3);
  return buf;
}

StatusOr<VerifyReport> VerifyRules(std::vector<ruledb::Rule>& rules, const VerifyOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::vector<specs::Axiom> axioms = options.axioms;
  if (axioms.empty()) {
    auto all = specs::AllAxioms();
    if (!all.ok()) return all.status();
    axioms = std::move(*all);
  }
  auto base = MakeAxiomBase(std::move(axioms));
  if (!base.ok()) return base.status();

  VERISUB_RETURN_IF_ERROR(
      base::CheckThreadCount(std::max(0, options.threads), "VerifyOptions::threads"));
  int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  tbb::task_arena arena(threads);
  std::atomic<int> done{0}, proved{0};
  const int n = static_cast<int>(rules.size());
  std::optional<base::Progress> progress;
  progress.emplace(
      "verify",
      [&](double seconds) {
        const int d = done.load();
        char rate[32];
        std::snprintf(rate, sizeof rate, "%.1f", seconds > 0 ? d / seconds : 0.0);
        return std::to_string(d) + "/" + std::to_string(n) + " decided, " +
               std::to_string(proved.load()) + " proved, " + rate + " rules/s";
      },
      base::ProgressOptions{.enabled = options.progress, .period = std::chrono::seconds(2)});
  // Z3's search (and so its resource count) depends on the terms a context has seen, so a
  // context shared by whatever rules a thread happened to take would make outcomes near the limit
  // vary between runs. Batches are fixed ranges of rule indices, each decided in order in a
  // context of its own: the same outcomes at any thread count, and a context costs ~1 ms to make
  // and free, as much as a typical proof.
  const int per_context = std::max(1, options.rules_per_context);
  const int batches = (n + per_context - 1) / per_context;
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, batches, 1), [&](const tbb::blocked_range<int>& r) {
          for (int b = r.begin(); b < r.end(); ++b) {
            Prover prover(*base, options.prover);
            for (int i = b * per_context; i < std::min(n, (b + 1) * per_context); ++i) {
              char name[32];
              std::snprintf(name, sizeof(name), "rule-%05d", i);
              RuleVerdict verdict = prover.ProveRule(rules[i], name);
              rules[i].proof = std::move(verdict.proof);
              if (rules[i].proof.status == ProofStatus::kProved)
                rules[i].input_ranks = std::move(verdict.input_ranks);
              if (rules[i].proof.status == ProofStatus::kProved) ++proved;
              ++done;
            }
          }
        });
  });
  progress.reset();  // its final line

  VerifyReport report;
  report.total = n;
  report.threads = threads;
  std::vector<QueryTime> times;
  std::vector<double> proof_times;
  for (int i = 0; i < n; ++i) {
    if (rules[i].proof.status == ProofStatus::kProved)
      proof_times.push_back(rules[i].proof.seconds);
    const ProofRecord& p = rules[i].proof;
    switch (p.status) {
      case ProofStatus::kProved:
        ++report.proved;
        report.proved_ranked += !rules[i].input_ranks.empty();
        break;
      case ProofStatus::kNotProved:
        ++report.not_proved;
        if (p.reason.rfind(kRefutationReasonPrefix, 0) == 0) ++report.refuted;
        break;
      case ProofStatus::kUnknown:
        ++report.unknown;
        break;
      case ProofStatus::kTimeout:
        ++report.timeout;
        break;
      default:
        ++report.error;
        break;
    }
    times.push_back({i, p.seconds, p.status});
  }
  if (!proof_times.empty()) {
    std::sort(proof_times.begin(), proof_times.end());
    report.proof_median_seconds = proof_times[proof_times.size() / 2];
    report.proof_max_seconds = proof_times.back();
  }
  std::stable_sort(times.begin(), times.end(),
                   [](const QueryTime& a, const QueryTime& b) { return a.seconds > b.seconds; });
  times.resize(std::min<size_t>(times.size(), std::max(0, options.num_slowest)));
  report.slowest = std::move(times);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.progress) std::fprintf(stderr, "verify: %s\n", report.Summary().c_str());
  return report;
}

}  // namespace verisub::verify
