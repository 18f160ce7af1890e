// Redundancy checks: each axiom as a goal, the others as hypotheses.
#include "verify/redundancy.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cstdio>

#include "base/process_stats.h"
#include "verify/prover.h"

namespace verisub::verify {

StatusOr<RedundancyReport> FindRedundantAxioms(const RedundancyOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::vector<specs::Axiom> axioms = options.axioms;
  if (axioms.empty()) {
    auto all = specs::AllAxioms();
    if (!all.ok()) return all.status();
    axioms = std::move(*all);
  }
  auto base = MakeAxiomBase(axioms);
  if (!base.ok()) return base.status();
  ProverOptions popt;
  popt.timeout_ms = options.timeout_ms;
  popt.smt2_dir = options.smt2_dir;
  // Bounded by time as before, with Z3's own instantiation threshold: the candidates' tuned
  // budget (ProverOptions defaults) was measured on rules, not on whole axioms.
  popt.resource_limit = 0;
  popt.lazy_threshold = 20.0;

  RedundancyReport report;
  report.axioms.resize(axioms.size());
  VERISUB_RETURN_IF_ERROR(
      base::CheckThreadCount(std::max(0, options.threads), "RedundancyOptions::threads"));
  int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  tbb::task_arena arena(threads);
  tbb::enumerable_thread_specific<std::unique_ptr<Prover>> provers;
  arena.execute([&] {
    tbb::parallel_for(size_t{0}, axioms.size(), [&](size_t a) {
      auto& prover = provers.local();
      if (!prover) prover = std::make_unique<Prover>(*base, popt);
      const specs::Axiom& ax = axioms[a];
      AxiomRedundancy& out = report.axioms[a];
      out.name = ax.name;
      try {
        Encoder& enc = prover->encoder();
        std::vector<z3::expr> vars;
        for (const specs::AxiomTensorVar& v : ax.vars) {
          std::string name = "goal!" + v.name;
          vars.push_back(prover->ctx().constant(name.c_str(), enc.tensor_sort()));
        }
        Query query;
        for (const auto& assignment : ax.ParamAssignments()) {
          query.goals.emplace_back(enc.EncodeAxiomTerm(ax.lhs, assignment, vars),
                                   enc.EncodeAxiomTerm(ax.rhs, assignment, vars));
          CollectAxiomFunctions(ax.lhs, assignment, &query.functions);
          CollectAxiomFunctions(ax.rhs, assignment, &query.functions);
        }
        // The axiom claims its equation at its declared ranks only.
        for (size_t v = 0; v < ax.vars.size(); ++v)
          if (ax.vars[v].ranks_declared) query.ranks.push_back({vars[v], ax.vars[v].ranks});
        query.excluded_axiom = static_cast<int>(a);
        query.dump_name = "axiom-" + ax.name;
        query.comment = "is axiom " + ax.name + " entailed by the others? " + ax.text;
        out.proof = prover->Prove(query);
      } catch (const z3::exception& e) {
        out.proof.status = ruledb::ProofStatus::kError;
        out.proof.reason = std::string("z3: ") + e.msg();
      }
    });
  });
  for (const AxiomRedundancy& r : report.axioms)
    if (r.proof.status == ruledb::ProofStatus::kProved) ++report.redundant;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.progress)
    std::fprintf(stderr, "redundancy: %d of %zu axioms entailed by the others (%.1f s)\n",
                 report.redundant, axioms.size(), report.seconds);
  return report;
}

}  // namespace verisub::verify
