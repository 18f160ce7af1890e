// Proofs of candidate rules from the axioms with Z3: one Prover per thread (it owns its
// z3::context), and VerifyRules, which decides a list of rules in parallel.
#pragma once

#include <z3++.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ruledb/rule.h"
#include "specs/axiom.h"
#include "verify/encoding.h"
#include "verify/refute.h"

namespace verisub::verify {

// The default resource limit of a query. Every proof of taso.cfg's candidates takes at most
// 10,499 (median 2,200); the unprovable ones that do not saturate run on, at ~0.25 us per unit
// here, so the limit bounds their cost.
inline constexpr unsigned kDefaultResourceLimit = 30'000;

struct ProverOptions {
  // Per query; a query that runs out is a timeout, never a proof. A backstop only: the
  // resource limit ends queries in tens of milliseconds, and unlike the wall clock it does not
  // depend on the machine's load.
  int timeout_ms = 10'000;
  // Z3's deterministic resource limit per query (0: none), so that outcomes are reproducible
  // bit for bit.
  unsigned resource_limit = kDefaultResourceLimit;
  // E-matching instances whose cost (generation) exceeds this are dropped (Z3's
  // smt.qi.lazy_threshold, default 20): no proof of taso.cfg needs more than 10, and the
  // unprovable candidates whose instantiation feeds on itself (linearity with commutativity
  // and associativity) saturate sooner.
  double lazy_threshold = 10.0;
  // Model-based quantifier instantiation: finds countermodels for some false candidates, but
  // on most it runs until the timeout. Off, a false candidate usually ends quickly with
  // "unknown" once E-matching saturates. Proofs come from E-matching either way.
  bool model_based_instantiation = false;
  // Directory for `.smt2` dumps of every query that is not a proof (empty: no dumps).
  std::string smt2_dir;
  // What Z3 leaves unknown or times out on is decided by index-level normal forms
  // (index_level.h), and a proof at input ranks only is generalized by them where it can be.
  bool index_level = true;
  // ProveRule first evaluates the rule at other shapes; a rule whose sides differ there is
  // `not_proved` with the counterexample as its reason, and Z3 is not asked.
  RefuteOptions refute;
};

// How many of a rule's well-typed input-rank tuples (WellTypedRankTuples) the prover tries
// when its proof may need ranks.
inline constexpr int kMaxRankTuples = 3;

// Everything a query needs that is independent of the Z3 context: the axioms, their instances
// and the rank cases of the functions they apply. Build once, share read-only between threads.
struct AxiomBase {
  std::vector<specs::Axiom> axioms;
  std::vector<AxiomInstance> instances;
  FunctionRanks functions;
  // RelevantInstances by (sorted distinct functions, include_guarded), filled as provers ask.
  mutable std::mutex relevant_mu;
  mutable std::map<std::pair<std::vector<std::string>, bool>, std::vector<int>> relevant;
};

// One question to Z3: the axioms (all but `excluded_axiom`, if >= 0) entail every equality in
// `goals`.
struct Query {
  std::vector<std::pair<z3::expr, z3::expr>> goals;
  // The functions the goals apply (relevance filtering) and their signatures (rank facts).
  std::vector<std::string> functions;
  FunctionRanks* signatures = nullptr;  // for functions no axiom applies; may be null
  int excluded_axiom = -1;
  // Terms of the goals (a rule's inputs, an axiom's variables) with the ranks they may have.
  // With any, the query asserts them (tracked, `rank!<k>`) and the rank facts of every function
  // it applies, so that rank-guarded axiom instances can fire; without, guarded instances are
  // left out (nothing could discharge their guards).
  std::vector<std::pair<z3::expr, std::vector<int>>> ranks;
  std::string dump_name, comment;  // dump_name empty: no .smt2 dump of this query
};

// A rule's outcome: its proof record and the input ranks the proof holds at (empty: every
// rank). A rule with input ranks keeps its own; one without gets the ranks Z3 was given when
// the proof used a rank-guarded axiom instance (or a rank assertion).
struct RuleVerdict {
  ruledb::ProofRecord proof;
  std::vector<int> input_ranks;
};
StatusOr<std::shared_ptr<const AxiomBase>> MakeAxiomBase(std::vector<specs::Axiom> axioms);

class Prover {
 public:
  Prover(std::shared_ptr<const AxiomBase> base, ProverOptions options);
  Prover(const Prover&) = delete;
  Prover& operator=(const Prover&) = delete;

  // Decides whether the axioms entail equality of every mapped output of `rule` (after trying to
  // refute it by evaluation, see ProverOptions::refute). When relevant axiom instances are
  // rank-guarded (or the rule has input ranks), the query asserts the input ranks of the rule's
  // first well-typed base assignment, then of the next distinct ones (at most kMaxRankTuples),
  // until one is proved; evaluation then looks at shapes of those ranks. `dump_name` names the
  // .smt2 file written when it is not proved (inside options.smt2_dir).
  // What the axioms leave undecided (unknown, timeout) is then tried at the index level
  // (index_level.h): proved there at every rank tuple where both sides could type-check, the
  // rule needs no ranks; else it gets the first tuple where it holds. A proof from the axioms
  // at input ranks only loses them when the normal forms agree at every tuple.
  RuleVerdict ProveRule(const ruledb::Rule& rule, const std::string& dump_name);

  // The general query; `used_ranks`, when given, says whether a proof's unsat core holds a
  // rank-guarded axiom instance or a rank assertion. `comment` heads the dump.
  ruledb::ProofRecord Prove(const Query& query, bool* used_ranks = nullptr);

  // The context is created on first use: a rule refuted by evaluation never needs one.
  Encoder& encoder();
  z3::context& ctx() { return encoder().ctx(); }

 private:
  RuleVerdict ProveFromAxioms(const ruledb::Rule& rule, const std::string& dump_name);
  void ProveByNormalForms(const ruledb::Rule& rule, RuleVerdict* verdict);
  // A proof from the axioms at input ranks only: at every rank when the normal forms agree
  // at every rank tuple (its record then names the element definitions used).
  void GeneralizeRanks(const ruledb::Rule& rule, RuleVerdict* verdict);
  // What is still unknown or timed out: more evaluation cases (RefuteOptions::undecided_cases),
  // wider values among them; a counterexample makes it not proved.
  void RefuteUndecided(const ruledb::Rule& rule, RuleVerdict* verdict);
  const z3::expr& Formula(int instance);
  void ResetContext();  // drops the context and everything built in it
  const z3::expr& Track(int instance);
  // The relevant axiom instances of a query (all but those of `excluded_axiom`; guarded ones
  // only with `include_guarded`).
  std::vector<int> Relevant(const std::vector<std::string>& functions, int excluded_axiom,
                            bool include_guarded) const;
  // The rank facts of every function the query applies (its own and its instances').
  std::vector<z3::expr> RankFacts(const Query& query, const std::vector<int>& instances);
  // One attempt at a rule: refutation, Z3 and refutation again, at input ranks `ranks` (empty:
  // none asserted, every rank evaluated). `used_ranks` says whether a proof needs the ranks.
  ruledb::ProofRecord Decide(const ruledb::Rule& rule, const std::vector<int>& ranks,
                             const std::string& dump_name, bool* used_ranks);
  // The query of a rule at input ranks `ranks` (empty: none asserted), encoded in this context;
  // false with `error` when the rule cannot be encoded.
  bool RuleQuery(const ruledb::Rule& rule, const std::vector<int>& ranks,
                 const std::string& dump_name, Query* query, std::string* error);
  // Writes the .smt2 file of an attempt that is not a proof (with options.smt2_dir), encoded
  // in a second context so that dumping leaves this one as it was; `note` ends the header.
  void DumpRule(const ruledb::Rule& rule, const std::vector<int>& ranks,
                const std::string& dump_name, const std::string& note,
                const ruledb::ProofRecord& record);
  void Dump(const std::vector<int>& instances, const std::vector<z3::expr>& background,
            const z3::expr& negated_goal, const std::string& dump_name, const std::string& comment,
            const ruledb::ProofRecord& record);

  std::shared_ptr<const AxiomBase> base_;
  ProverOptions options_;
  std::unique_ptr<z3::context> ctx_;
  std::unique_ptr<Encoder> encoder_;
  std::vector<std::unique_ptr<z3::expr>> formulas_;  // per instance, built on first use
  // Per instance, its tracking literal `axiom!<name>!<instance>` (the unsat core names axioms).
  std::vector<std::unique_ptr<z3::expr>> tracks_;
  std::unique_ptr<Prover> dump_prover_;  // DumpRule's context, created on first use
  // A check was interrupted at its deadline: the next rule gets a new context.
  bool context_spent_ = false;
  // Rank cases of functions no axiom applies, probed on first use (pure functions of the
  // signature, so the rules a prover decides can share them).
  FunctionRanks signatures_;
};

struct VerifyOptions {
  ProverOptions prover;
  int threads = 0;       // 0: every core
  bool progress = true;  // progress lines and a summary on stderr
  int num_slowest = 10;  // how many of the slowest queries the report lists
  // Rules per Z3 context: consecutive rules (by index, whatever the thread count) share one, so
  // outcomes stay deterministic while context set-up and axiom encoding are paid once a batch.
  int rules_per_context = 32;
  // The axioms to prove from; empty means specs::AllAxioms().
  std::vector<specs::Axiom> axioms;
};

struct QueryTime {
  int rule = 0;  // index into the input
  double seconds = 0;
  ruledb::ProofStatus status = ruledb::ProofStatus::kUnchecked;
};

struct VerifyReport {
  int total = 0, proved = 0, not_proved = 0, unknown = 0, timeout = 0, error = 0;
  int proved_ranked = 0;  // of proved: at input ranks only
  int refuted = 0;        // of not_proved: refuted by evaluation (the others have a countermodel)
  double seconds = 0;
  int threads = 0;
  double proof_median_seconds = 0, proof_max_seconds = 0;  // over proved rules
  std::vector<QueryTime> slowest;                          // slowest first
  std::string Summary() const;
};

// Decides every rule; each rule's `proof` is overwritten with the outcome, and a rule proved at
// input ranks only gets them (which changes its text and id). Results do not depend on the
// thread count (each rule is decided by itself), only timings do. Fails only when the axioms
// cannot be loaded or instantiated.
StatusOr<VerifyReport> VerifyRules(std::vector<ruledb::Rule>& rules, const VerifyOptions& options);

}  // namespace verisub::verify
