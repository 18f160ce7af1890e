// Prover: one query per rule, tracked axiom assertions for the unsat core, dumps of non-proofs.
#include "verify/prover.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

namespace verisub::verify {

using ruledb::ProofRecord;
using ruledb::ProofStatus;

StatusOr<std::shared_ptr<const AxiomBase>> MakeAxiomBase(std::vector<specs::Axiom> axioms) {
  auto base = std::make_shared<AxiomBase>();
  auto inst = InstantiateAxioms(axioms);
  if (!inst.ok()) return inst.status();
  base->axioms = std::move(axioms);
  base->instances = std::move(*inst);
  return std::shared_ptr<const AxiomBase>(std::move(base));
}

Prover::Prover(std::shared_ptr<const AxiomBase> base, ProverOptions options)
    : base_(std::move(base)), options_(std::move(options)) {
  formulas_.resize(base_->instances.size());
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

std::vector<int> Prover::Relevant(const std::vector<std::string>& functions,
                                  int excluded_axiom) const {
  std::vector<int> relevant;
  for (int i : RelevantInstances(base_->instances, functions))
    if (base_->instances[i].axiom != excluded_axiom) relevant.push_back(i);
  return relevant;
}

ProofRecord Prover::ProveRule(const ruledb::Rule& rule, const std::string& dump_name) {
  auto start = std::chrono::steady_clock::now();
  // A rule whose sides differ at some shapes is false, whatever the axioms let Z3 derive.
  Refutation refutation = RefuteByEvaluation(rule, options_.refute);
  ProofRecord refuted;
  if (refutation.refuted) {
    refuted.status = ProofStatus::kNotProved;
    refuted.reason = refutation.reason;
    refuted.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options_.smt2_dir.empty()) return refuted;
  }
  try {
    Encoder& enc = encoder();
    std::vector<z3::expr> inputs;
    for (int i = 0; i < rule.num_inputs; ++i) {
      std::string name = ruledb::InputName(i).substr(1);  // `?a` -> `a`
      inputs.push_back(ctx().constant(name.c_str(), enc.tensor_sort()));
    }
    std::vector<std::string> functions;
    std::vector<z3::expr> src = enc.EncodePattern(rule.src, inputs, &functions);
    std::vector<z3::expr> dst = enc.EncodePattern(rule.dst, inputs, &functions);
    if (src.size() != dst.size() || src.empty()) {
      ProofRecord r;
      r.status = ProofStatus::kError;
      r.reason = "source and target have different numbers of outputs";
      return r;
    }
    std::vector<std::pair<z3::expr, z3::expr>> goals;
    for (size_t i = 0; i < src.size(); ++i) goals.emplace_back(src[i], dst[i]);
    if (!refutation.refuted) {
      ProofRecord proof = Prove(goals, functions, -1, dump_name, "rule: " + rule.ToText());
      if (proof.status != ProofStatus::kProved) return proof;
      // A proof is what gets shipped: look harder for a counterexample first.
      Refutation late = RefuteByEvaluation(rule, options_.refute, options_.refute.max_cases,
                                           options_.refute.proof_cases);
      if (!late.refuted) return proof;
      refuted.status = ProofStatus::kNotProved;
      refuted.reason = late.reason + " (z3 proved it: the encoding ignores ranks and types)";
      refuted.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (options_.smt2_dir.empty()) return refuted;
    }
    // Dump the query anyway, so that everything not proved can be replayed.
    z3::expr_vector differ(ctx());
    for (const auto& [l, r] : goals) differ.push_back(l != r);
    Dump(Relevant(functions, -1), z3::mk_or(differ), dump_name,
         "rule: " + rule.ToText() + "\n; refuted by evaluation" +
             (refutation.refuted ? " (not sent to z3)" : " (z3: unsat)"),
         refuted);
    return refuted;
  } catch (const z3::exception& e) {
    ProofRecord r;
    r.status = ProofStatus::kError;
    r.reason = std::string("z3: ") + e.msg();
    return r;
  }
}

ProofRecord Prover::Prove(const std::vector<std::pair<z3::expr, z3::expr>>& goals,
                          const std::vector<std::string>& functions, int excluded_axiom,
                          const std::string& dump_name, const std::string& comment) {
  auto start = std::chrono::steady_clock::now();
  ProofRecord record;
  std::vector<int> relevant;
  if (goals.empty()) {  // an empty disjunction is false: "proved" without saying anything
    record.status = ProofStatus::kError;
    record.reason = "no equality to prove";
    return record;
  }
  try {
    relevant = Relevant(functions, excluded_axiom);
    // The plain SMT core: the default solver wraps it with a tactic front end that a query with
    // tracked assertions never uses, but that costs milliseconds to set up per query.
    z3::solver solver(ctx(), z3::solver::simple());
    z3::params p(ctx());
    p.set("timeout", static_cast<unsigned>(std::max(1, options_.timeout_ms)));
    p.set("mbqi", options_.model_based_instantiation);
    p.set("qi.lazy_threshold", options_.lazy_threshold);
    if (options_.resource_limit > 0) p.set("rlimit", options_.resource_limit);
    solver.set(p);
    // One tracking literal per axiom instance, `axiom!<name>!<instance>`: the core names axioms.
    for (int i : relevant) {
      int ax = base_->instances[i].axiom;
      std::string track = "axiom!" + base_->axioms[ax].name + "!" + std::to_string(i);
      solver.add(Formula(i), ctx().bool_const(track.c_str()));
    }
    z3::expr_vector differ(ctx());
    for (const auto& [l, r] : goals) differ.push_back(l != r);
    z3::expr negated_goal = z3::mk_or(differ);
    solver.add(negated_goal);
    z3::check_result result = solver.check();
    if (result == z3::unsat) {
      record.status = ProofStatus::kProved;
      std::set<std::string> used;
      z3::expr_vector core = solver.unsat_core();
      for (unsigned i = 0; i < core.size(); ++i) {
        std::string name = core[i].decl().name().str();
        size_t a = name.find('!'), b = name.rfind('!');
        used.insert(name.substr(a + 1, b - a - 1));
      }
      record.axioms_used.assign(used.begin(), used.end());
    } else if (result == z3::sat) {
      record.status = ProofStatus::kNotProved;
      record.reason = "countermodel: the axioms hold but the outputs differ";
    } else {
      std::string why = solver.reason_unknown();
      // Z3 reports an exhausted rlimit as "canceled", "timeout" or plain "unknown" depending on
      // where it stops; before the wall-clock budget is spent, that can only be the rlimit.
      double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      bool saturated = why.find("incomplete quantifiers") != std::string::npos;
      bool out_of_resources =
          options_.resource_limit > 0 && !saturated &&
          (why.find("resource") != std::string::npos || elapsed * 1e3 < 0.9 * options_.timeout_ms);
      bool timed_out = out_of_resources || why.find("timeout") != std::string::npos ||
                       why.find("canceled") != std::string::npos;
      record.status = timed_out ? ProofStatus::kTimeout : ProofStatus::kUnknown;
      if (out_of_resources)
        record.reason = "resource limit " + std::to_string(options_.resource_limit) + " exceeded";
      else if (timed_out)
        record.reason = "timeout after " + std::to_string(options_.timeout_ms) + " ms";
      else if (saturated)
        record.reason = "no proof: axiom instantiation saturated (z3: " + why + ")";
      else
        record.reason = "solver answered unknown: " + why;
    }
    record.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (record.status != ProofStatus::kProved && !options_.smt2_dir.empty())
      Dump(relevant, negated_goal, dump_name, comment, record);
  } catch (const z3::exception& e) {
    record.status = ProofStatus::kError;
    record.reason = std::string("z3: ") + e.msg();
    record.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return record;
}

void Prover::Dump(const std::vector<int>& instances, const z3::expr& negated_goal,
                  const std::string& dump_name, const std::string& comment,
                  const ProofRecord& record) {
  // An untracked copy of the query, so that `z3 file.smt2` replays exactly what was asked.
  z3::solver plain(ctx(), z3::solver::simple());
  for (int i : instances) plain.add(Formula(i));
  plain.add(negated_goal);
  std::filesystem::path path = std::filesystem::path(options_.smt2_dir) / (dump_name + ".smt2");
  std::error_code ec;
  std::filesystem::create_directories(options_.smt2_dir, ec);
  std::ofstream out(path);
  if (!out) {
    std::fprintf(stderr, "verify: cannot write %s\n", path.string().c_str());
    return;
  }
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
}

std::string VerifyReport::Summary() const {
  char buf[400];
  std::snprintf(
      buf, sizeof(buf),
      "%d candidates: %d proved, %d not proved (%d refuted by evaluation, %d countermodel, "
      "%d unknown, %d timeout, %d error) in %.2f s on %d threads; proofs: median %.1f "
      "ms, max %.1f ms",
      total, proved, total - proved, refuted, not_proved - refuted, unknown, timeout, error,
      seconds, threads, proof_median_seconds * 1e3, proof_max_seconds * 1e3);
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

  int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  tbb::task_arena arena(threads);
  std::atomic<int> done{0}, proved{0};
  std::mutex progress_mu;
  auto last_progress = start;
  const int n = static_cast<int>(rules.size());
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int>(0, n, 1), [&](const tbb::blocked_range<int>& r) {
      for (int i = r.begin(); i < r.end(); ++i) {
        char name[32];
        std::snprintf(name, sizeof(name), "rule-%05d", i);
        // A fresh context per rule: Z3's search (and so its resource count) depends on the terms
        // a context has seen, so a shared one would make outcomes near the limit depend on which
        // rules a thread happened to decide before.
        Prover prover(*base, options.prover);
        rules[i].proof = prover.ProveRule(rules[i], name);
        if (rules[i].proof.status == ProofStatus::kProved) ++proved;
        int d = ++done;
        if (!options.progress) continue;
        auto now = std::chrono::steady_clock::now();
        std::lock_guard<std::mutex> lock(progress_mu);
        if (d == n || now - last_progress > std::chrono::seconds(2)) {
          last_progress = now;
          double el = std::chrono::duration<double>(now - start).count();
          std::fprintf(stderr, "verify: %d/%d decided, %d proved, %.1f rules/s\n", d, n,
                       proved.load(), el > 0 ? d / el : 0.0);
        }
      }
    });
  });

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
