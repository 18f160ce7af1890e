// Running the stages and reporting on them.
#include "gen/generator.h"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <thread>

#include "base/file_io.h"
#include "base/process_stats.h"
#include "base/progress.h"
#include "gen/progress.h"
#include "gen/search_space.h"

namespace verisub::gen {
namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Wall and CPU time of one stage.
class StageClock {
 public:
  StageClock() : wall_(std::chrono::steady_clock::now()), cpu_(base::ProcessCpuSeconds()) {}
  void Stop(StageTime* t) const {
    t->wall = Since(wall_);
    t->cpu = base::ProcessCpuSeconds() - cpu_;
  }

 private:
  std::chrono::steady_clock::time_point wall_;
  double cpu_;
};

}  // namespace

StatusOr<GenResult> RunGenerator(const GenConfig& config, const GenOptions& options) {
  auto start = std::chrono::steady_clock::now();
  GenResult result;
  GenReport& rep = result.report;
  int threads = options.threads >= 0 ? options.threads : config.threads;
  VERISUB_RETURN_IF_ERROR(base::CheckThreadCount(std::max(0, threads), "threads"));
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  rep.threads = threads;

  auto estimate = EstimateGeneration(config, threads, options.memory_budget_bytes);
  if (!estimate.ok()) return estimate.status();
  rep.estimate = *estimate;
  if (options.progress) {
    std::fprintf(stderr, "verisub-gen: %s\n", estimate->Summary().c_str());
    if (estimate->largest_input_elements > kSlowInputElements)
      std::fprintf(stderr,
                   "verisub-gen: warning: an input of %lld elements makes every evaluation slow\n",
                   static_cast<long long>(estimate->largest_input_elements));
  }
  // The enumeration is held to the budget: it stops at the number of graphs that fit.
  GenConfig bounded = config;
  const bool budget_bounds =
      config.max_graphs == 0 || estimate->max_graphs_in_budget < config.max_graphs;
  if (budget_bounds) bounded.max_graphs = std::max<uint64_t>(1, estimate->max_graphs_in_budget);

  ProgressCounters counters;
  CandidateTexts candidates;
  {
    // Started before the set-up, so every phase has a progress line.
    base::Progress progress(
        "verisub-gen", [&counters](double seconds) { return ProgressLine(counters, seconds); },
        base::ProgressOptions{.enabled = options.progress});
    StageClock setup;
    auto space = BuildSearchSpace(bounded);
    if (!space.ok()) return space.status();
    setup.Stop(&rep.setup_time);
    StageClock enumerate;
    counters.stage = 1;
    Enumeration e = Enumerate(*space, threads, &counters);
    enumerate.Stop(&rep.enumerate_time);
    rep.enumeration = e.stats;
    if (budget_bounds && e.stats.stopped_early)
      return FailedPrecondition(
          "the enumeration reached " + std::to_string(e.stats.graphs) +
          " graphs, the most the memory budget of " +
          std::to_string(options.memory_budget_bytes >> 20) +
          " MiB holds: lower max_ops or the number of inputs or operators, or set max_graphs "
          "to accept an incomplete set of rules");
    counters.stage = 2;
    StageClock pairs;
    candidates = TestPairs(*space, e, threads, &counters);
    pairs.Stop(&rep.pairs_time);
    counters.stage = 3;
  }
  rep.pairs = candidates.stats;
  result.texts = std::move(candidates.texts);
  const auto generated_end = result.texts.size();
  for (const std::string& text : config.candidates)
    if (!std::binary_search(result.texts.begin(), result.texts.begin() + generated_end, text)) {
      result.texts.push_back(text);
      ++rep.config_candidates;
    }
  std::sort(result.texts.begin(), result.texts.end());
  // Candidates travel as text (a fraction of a Rule's memory) and become rules only now, after
  // the enumeration is freed.
  StageClock rules;
  if (options.rules) {
    result.rules.resize(result.texts.size());
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    tbb::parallel_for(size_t{0}, result.texts.size(), [&](size_t i) {
      auto rule = ruledb::ParseRule(result.texts[i]);
      VERISUB_CHECK(rule.ok());
      result.rules[i] = std::move(*rule);
    });
  }
  rules.Stop(&rep.rules_time);
  rep.stop_reason = rep.enumeration.stopped_early
                        ? "max_graphs (" + std::to_string(config.max_graphs) + ") reached"
                        : "complete";
  rep.wall_seconds = Since(start);
  rep.cpu_seconds = base::ProcessCpuSeconds();
  rep.peak_rss_kb = static_cast<uint64_t>(base::PeakRssBytes() / 1024);
  return result;
}

std::string FormatReport(const GenReport& r) {
  std::ostringstream o;
  const EnumerationStats& e = r.enumeration;
  const PairStats& p = r.pairs;
  char buf[64];
  auto secs = [&](double s) {
    std::snprintf(buf, sizeof buf, "%.2f s", s);
    return std::string(buf);
  };
  auto stage = [&](const StageTime& t) {
    std::snprintf(buf, sizeof buf, "%.2f s (cpu %.2f s)", t.wall, t.cpu);
    return std::string(buf);
  };
  o << "threads: " << r.threads << "\n"
    << "stop reason: " << r.stop_reason << "\n"
    << "graphs visited: " << e.graphs << " (identity graphs " << e.identity_graphs << ", "
    << e.tasks << " parallel subtrees)\n"
    << "rejected applications: shape " << e.shape_rejected << ", consumers " << e.consumer_rejected
    << ", duplicate " << e.duplicate_rejected << ", order " << e.order_rejected << ", symmetry "
    << e.symmetry_rejected << "; memoized last operators " << e.memo_hits << "\n"
    << "distinct fingerprints: " << p.distinct_fingerprints << "\n"
    << "buckets (>= 2 graphs): " << p.buckets << " holding " << p.graphs_in_buckets
    << " graphs (largest " << p.largest_bucket << "); not evaluated in double "
    << p.graphs_not_evaluated << "\n"
    << "double evaluation: " << p.terms_evaluated << " terms computed, " << p.terms_reused
    << " reused\n"
    << "double-equal classes: " << p.classes << " (largest " << p.largest_class
    << "); graphs split off by the double test: " << p.double_mismatches << "\n"
    << "pairs in classes: " << p.pairs << " (common output " << p.common_output_pairs
    << ", decomposable " << p.decomposable_pairs << ", congruent " << p.congruent_pairs
    << ", trivial " << p.trivial_pairs << ", unorientable " << p.unorientable_pairs << ")\n"
    << "rules kept: " << p.rules_before_dedup << "\n"
    << "candidate rules: " << p.candidates << "\n"
    << "candidates from the config: " << r.config_candidates << "\n"
    << "time: setup " << stage(r.setup_time) << ", enumerate " << stage(r.enumerate_time)
    << ", pairs " << stage(r.pairs_time) << ", rules " << stage(r.rules_time) << "; wall "
    << secs(r.wall_seconds) << ", cpu " << secs(r.cpu_seconds) << "\n"
    << "peak memory: " << r.peak_rss_kb / 1024 << " MiB\n";
  return o.str();
}

std::string CandidatesText(const std::vector<ruledb::Rule>& rules) {
  std::string out;
  for (const ruledb::Rule& r : rules) out += r.ToText() + "\n";
  return out;
}

Status WriteCandidates(const std::vector<std::string>& texts, const std::string& path) {
  std::string out;
  for (const std::string& t : texts) out += t + '\n';
  return base::WriteFileAtomically(path, out);
}

}  // namespace verisub::gen
