// Axiom validation: shape enumeration, polynomial evaluation, solver fallback.
#include "verify/validate.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>

#include "base/process_stats.h"
#include "base/progress.h"
#include "specs/axiom_eval.h"
#include "verify/poly.h"

namespace verisub::verify {

const char* AxiomVerdictName(AxiomVerdict v) {
  switch (v) {
    case AxiomVerdict::kValid:
      return "valid";
    case AxiomVerdict::kWrong:
      return "WRONG";
    case AxiomVerdict::kUndecided:
      return "undecided";
  }
  return "?";
}

std::string ValidationReport::Summary() const {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%zu axioms: %d valid, %d wrong, %d undecided; %lld shape cases in %.1f s on %d "
                "threads",
                axioms.size(), valid, wrong, undecided, static_cast<long long>(cases), seconds,
                threads);
  return buf;
}

namespace {

using specs::AxiomTerm;
using specs::Shape;
using specs::TensorType;

// Where the enumeration checks types: after fixing variable k, every maximal subterm whose
// variables are all <= k (and which mentions k) must type-check.
struct CheckPlan {
  std::vector<std::vector<const AxiomTerm*>> after_var;
  std::vector<bool> kernel_role;  // variable flows into a convolution weight or an enlarge
};

int MaxVar(const AxiomTerm& t) {
  if (t.var >= 0) return t.var;
  int m = -1;
  for (const AxiomTerm& a : t.args) m = std::max(m, MaxVar(a));
  return m;
}

void MarkKernels(const AxiomTerm& t, bool in_kernel, std::vector<bool>* role) {
  if (t.var >= 0) {
    if (in_kernel) (*role)[t.var] = true;
    return;
  }
  for (size_t i = 0; i < t.args.size(); ++i) {
    bool k =
        in_kernel || (t.op == specs::OpKind::kConv2d && i == 1) || t.op == specs::OpKind::kEnlarge;
    MarkKernels(t.args[i], k, role);
  }
}

void PlanChecks(const AxiomTerm& t, int parent_max, CheckPlan* plan) {
  if (t.var >= 0) return;
  int m = MaxVar(t);
  if (m >= 0 && m != parent_max) plan->after_var[m].push_back(&t);
  for (const AxiomTerm& a : t.args) PlanChecks(a, m, plan);
}

CheckPlan MakePlan(const specs::Axiom& ax) {
  CheckPlan plan;
  plan.after_var.resize(ax.vars.size());
  plan.kernel_role.assign(ax.vars.size(), false);
  MarkKernels(ax.lhs, false, &plan.kernel_role);
  MarkKernels(ax.rhs, false, &plan.kernel_role);
  PlanChecks(ax.lhs, -1, &plan);
  PlanChecks(ax.rhs, -1, &plan);
  return plan;
}

// Every shape a variable may take.
std::vector<Shape> CandidateShapes(const specs::AxiomTensorVar& v, bool kernel,
                                   const ValidateOptions& opt) {
  std::vector<Shape> out;
  for (int rank : v.ranks) {
    std::vector<std::vector<int64_t>> choices(rank);
    for (int d = 0; d < rank; ++d) {
      if (kernel && rank == 4 && d >= 2) {
        choices[d] = opt.kernel_dims;
      } else {
        for (int x = 1; x <= opt.max_dim; ++x) choices[d].push_back(x);
      }
    }
    Shape s;
    s.rank = rank;
    std::vector<size_t> idx(rank, 0);
    while (true) {
      for (int d = 0; d < rank; ++d) s[d] = choices[d][idx[d]];
      out.push_back(s);
      int d = rank - 1;
      while (d >= 0 && ++idx[d] == choices[d].size()) idx[d--] = 0;
      if (d < 0) break;
    }
  }
  return out;
}

using ShapeCase = std::vector<Shape>;

int64_t CaseSize(const ShapeCase& c) {
  int64_t n = 0;
  for (const Shape& s : c) n += s.NumElements();
  return n;
}

std::string CaseString(const specs::Axiom& ax, const ShapeCase& c) {
  std::string s;
  for (size_t i = 0; i < c.size(); ++i)
    s += (i ? " " : "") + ax.vars[i].name + "=" + c[i].ToString();
  return s;
}

// Depth-first over variables, pruning with the type checks planned for each variable.
void Enumerate(const specs::Axiom& ax, const std::vector<int64_t>& assignment,
               const CheckPlan& plan, const std::vector<std::vector<Shape>>& shapes, size_t k,
               std::vector<TensorType>* types, int64_t limit, std::vector<ShapeCase>* out,
               bool* truncated) {
  if (k == ax.vars.size()) {
    if (static_cast<int64_t>(out->size()) >= limit) {
      *truncated = true;
      return;
    }
    ShapeCase c;
    for (const TensorType& t : *types) c.push_back(t.shape);
    out->push_back(std::move(c));
    return;
  }
  for (const Shape& s : shapes[k]) {
    if (*truncated) return;
    (*types)[k] = TensorType(s);
    bool ok = true;
    for (const AxiomTerm* t : plan.after_var[k])
      if (!specs::InferAxiomTerm(*t, assignment, *types).ok()) {
        ok = false;
        break;
      }
    if (ok) Enumerate(ax, assignment, plan, shapes, k + 1, types, limit, out, truncated);
  }
}

struct Job {
  int axiom = 0;
  int assignment_index = 0;
  std::vector<int64_t> assignment;
  std::vector<ShapeCase> cases;  // smallest first
  bool truncated = false;
};

struct Failure {
  int64_t size = std::numeric_limits<int64_t>::max();
  int assignment_index = 0;
  std::string detail;
};

// Per-axiom state shared by the workers.
struct AxiomState {
  std::mutex mu;
  Failure smallest;  // smallest breaking case so far (size max: none)
  std::atomic<int64_t> smallest_size{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> checked{0}, elements{0}, solver_calls{0};
  std::atomic<bool> skipped{false}, undecided{false};
  std::string undecided_detail;
};

// Per-thread state. The polynomial store is shared by consecutive cases (input atoms are the same
// symbols whatever the shapes), so common subexpressions are interned once.
struct Worker {
  static constexpr size_t kMaxPolys = size_t{1} << 16;
  z3::context ctx;
  PolyStore store;
};

enum class CaseResult { kEqual, kDiffers, kUndecided };

CaseResult CheckCase(const specs::Axiom& ax, const Job& job, const ShapeCase& c, Worker* w,
                     int timeout_ms, AxiomState* st, std::string* detail) {
  if (w->store.num_polys() > Worker::kMaxPolys) w->store.Clear();
  PolyStore& store = w->store;
  PolySemantics sem{&store};
  std::vector<specs::Tensor<PolyStore::Id>> vars(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    vars[i].type = TensorType(c[i]);
    int64_t n = c[i].NumElements();
    vars[i].data.resize(n);
    for (int64_t e = 0; e < n; ++e) vars[i].data[e] = store.Input(static_cast<int>(i), e);
  }
  auto l = specs::EvalAxiomTerm(sem, ax.lhs, job.assignment, vars);
  auto r = specs::EvalAxiomTerm(sem, ax.rhs, job.assignment, vars);
  if (!l.ok() || !r.ok()) {
    *detail = "evaluation failed: " + (l.ok() ? r.status() : l.status()).message();
    return CaseResult::kDiffers;
  }
  // Types include split trees: an axiom that changes a concat history would make later splits
  // unsound even when the data agree (concat associativity).
  if (!(l->type == r->type)) {
    *detail = "the sides have different types: " + l->type.ToString() + " vs " + r->type.ToString();
    return CaseResult::kDiffers;
  }
  st->elements += static_cast<int64_t>(l->data.size());
  for (size_t e = 0; e < l->data.size(); ++e) {
    PolyStore::Id a = l->data[e], b = r->data[e];
    if (a == b) continue;
    ++st->solver_calls;
    // Canonical forms differ; they are still equal if the normal form missed an identity (max
    // commutes only syntactically here). Ask Z3 over the reals.
    std::unordered_map<PolyStore::Id, z3::expr> cache;
    z3::solver s(w->ctx);
    z3::params p(w->ctx);
    p.set("timeout", static_cast<unsigned>(timeout_ms));
    s.set(p);
    s.add(store.ToZ3(a, w->ctx, &cache) != store.ToZ3(b, w->ctx, &cache));
    z3::check_result res = s.check();
    if (res == z3::unsat) continue;
    std::string sides = "element " + std::to_string(e) + ": lhs = " + store.ToString(a) +
                        ", rhs = " + store.ToString(b);
    if (sides.size() > 600) sides = sides.substr(0, 600) + "...";
    if (res == z3::sat) {
      *detail = sides;
      return CaseResult::kDiffers;
    }
    *detail = "solver answered unknown (" + s.reason_unknown() + ") on " + sides;
    return CaseResult::kUndecided;
  }
  return CaseResult::kEqual;
}

}  // namespace

StatusOr<ValidationReport> ValidateAxioms(const ValidateOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::vector<specs::Axiom> axioms = options.axioms;
  if (axioms.empty()) {
    auto all = specs::AllAxioms();
    if (!all.ok()) return all.status();
    axioms = std::move(*all);
  }
  if (options.max_dim < 1 || options.max_dim > kMaxValidateDim)
    return InvalidArgument("max_dim must be in [1, " + std::to_string(kMaxValidateDim) +
                           "], not " + std::to_string(options.max_dim));
  VERISUB_RETURN_IF_ERROR(
      base::CheckThreadCount(std::max(0, options.threads), "ValidateOptions::threads"));
  int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  tbb::task_arena arena(threads);

  // Phase 1: enumerate the shape cases of every (axiom, assignment), smallest first.
  std::vector<Job> jobs;
  for (size_t a = 0; a < axioms.size(); ++a) {
    auto assignments = axioms[a].ParamAssignments();
    for (size_t i = 0; i < assignments.size(); ++i) {
      Job j;
      j.axiom = static_cast<int>(a);
      j.assignment_index = static_cast<int>(i);
      j.assignment = assignments[i];
      jobs.push_back(std::move(j));
    }
  }
  arena.execute([&] {
    tbb::parallel_for(size_t{0}, jobs.size(), [&](size_t i) {
      Job& j = jobs[i];
      const specs::Axiom& ax = axioms[j.axiom];
      CheckPlan plan = MakePlan(ax);
      std::vector<std::vector<Shape>> shapes;
      for (size_t v = 0; v < ax.vars.size(); ++v)
        shapes.push_back(CandidateShapes(ax.vars[v], plan.kernel_role[v], options));
      std::vector<TensorType> types(ax.vars.size());
      Enumerate(ax, j.assignment, plan, shapes, 0, &types, options.max_enumerated_per_assignment,
                &j.cases, &j.truncated);
      std::stable_sort(j.cases.begin(), j.cases.end(), [](const ShapeCase& x, const ShapeCase& y) {
        return CaseSize(x) < CaseSize(y);
      });
    });
  });

  // Phase 2: evaluate, smallest cases first; an axiom stops at cases larger than its smallest
  // known failure.
  std::vector<std::unique_ptr<AxiomState>> states;
  for (size_t a = 0; a < axioms.size(); ++a) states.push_back(std::make_unique<AxiomState>());
  int64_t total_cases = 0;
  for (const Job& j : jobs) {
    int64_t n = static_cast<int64_t>(j.cases.size());
    if (options.max_cases_per_assignment > 0) n = std::min(n, options.max_cases_per_assignment);
    total_cases += n;
  }
  tbb::enumerable_thread_specific<std::unique_ptr<Worker>> workers;
  std::atomic<int64_t> done{0};
  std::optional<base::Progress> progress;
  progress.emplace(
      "validate",
      [&](double seconds) {
        return std::to_string(done.load()) + "/" + std::to_string(total_cases) + " shape " +
               base::CountWithRate("cases", done.load(), seconds);
      },
      base::ProgressOptions{.enabled = options.progress, .period = std::chrono::seconds(2)});
  arena.execute([&] {
    tbb::parallel_for(size_t{0}, jobs.size(), [&](size_t ji) {
      const Job& job = jobs[ji];
      const specs::Axiom& ax = axioms[job.axiom];
      AxiomState* st = states[job.axiom].get();
      int64_t n = static_cast<int64_t>(job.cases.size());
      if (options.max_cases_per_assignment > 0) n = std::min(n, options.max_cases_per_assignment);
      tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, 4), [&](const auto& range) {
        auto& w = workers.local();
        if (!w) w = std::make_unique<Worker>();
        for (int64_t ci = range.begin(); ci < range.end(); ++ci) {
          const ShapeCase& c = job.cases[ci];
          int64_t size = CaseSize(c);
          if (size > st->smallest_size.load() || st->undecided.load()) {
            st->skipped = true;
            ++done;
            continue;
          }
          std::string detail;
          CaseResult res = CheckCase(ax, job, c, w.get(), options.solver_timeout_ms, st, &detail);
          ++st->checked;
          if (res == CaseResult::kDiffers) {
            std::lock_guard<std::mutex> lock(st->mu);
            if (size < st->smallest.size ||
                (size == st->smallest.size &&
                 job.assignment_index < st->smallest.assignment_index)) {
              st->smallest.size = size;
              st->smallest.assignment_index = job.assignment_index;
              st->smallest.detail = specs::FormatAxiomTerm(ax, ax.lhs, &job.assignment) + " = " +
                                    specs::FormatAxiomTerm(ax, ax.rhs, &job.assignment) + " with " +
                                    CaseString(ax, c) + ": " + detail;
              st->smallest_size = size;
            }
          } else if (res == CaseResult::kUndecided) {
            std::lock_guard<std::mutex> lock(st->mu);
            if (!st->undecided) st->undecided_detail = CaseString(ax, c) + ": " + detail;
            st->undecided = true;
          }
          ++done;
        }
      });
    });
  });
  progress.reset();  // its final line

  ValidationReport report;
  report.threads = threads;
  for (size_t a = 0; a < axioms.size(); ++a) {
    AxiomValidation v;
    const specs::Axiom& ax = axioms[a];
    AxiomState& st = *states[a];
    v.name = ax.name;
    v.owner = ax.owner;
    for (const Job& j : jobs) {
      if (j.axiom != static_cast<int>(a)) continue;
      ++v.assignments;
      if (j.cases.empty()) ++v.assignments_without_shapes;
      v.cases_enumerated += static_cast<int64_t>(j.cases.size());
      if (j.truncated || (options.max_cases_per_assignment > 0 &&
                          static_cast<int64_t>(j.cases.size()) > options.max_cases_per_assignment))
        v.complete = false;
    }
    if (st.skipped) v.complete = false;
    v.cases_checked = st.checked;
    v.elements_compared = st.elements;
    v.solver_calls = st.solver_calls;
    if (st.smallest_size.load() != std::numeric_limits<int64_t>::max()) {
      v.verdict = AxiomVerdict::kWrong;
      v.detail = st.smallest.detail;
      ++report.wrong;
    } else if (st.undecided || v.cases_enumerated == 0) {
      v.verdict = AxiomVerdict::kUndecided;
      v.detail = v.cases_enumerated == 0 ? "no shape case type-checks" : st.undecided_detail;
      ++report.undecided;
    } else {
      ++report.valid;
    }
    report.cases += v.cases_checked;
    report.axioms.push_back(std::move(v));
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.progress) std::fprintf(stderr, "validate: %s\n", report.Summary().c_str());
  return report;
}

}  // namespace verisub::verify
