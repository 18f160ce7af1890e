// The differential fuzzing loop: rounds of graphs in parallel, merged in seed order.
#include "tests/rewriter/diff_fuzz/diff_fuzz.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include "base/file_io.h"
#include "base/process_stats.h"
#include "rewriter/verify_outputs.h"
#include "runtime/onnx_export.h"
#include "tests/rewriter/random_graphs.h"

namespace verisub::rewriter::testing {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What one graph did under every setting; filled by a worker, merged by the caller.
struct GraphResult {
  bool built = false;
  int optimized = 0, compared = 0;
  bool rewritten = false, cheaper = false;
  std::vector<std::string> rewritten_by;  // settings that applied a rule
  std::vector<std::pair<std::string, int>> rule_uses;
  std::vector<DiffFuzzFailure> failures;
  std::vector<double> optimize_s_by_setting;  // in settings order
  runtime::Graph graph;  // kept only when a setting failed, for the replay file
  double optimize_s = 0, compare_s = 0;
};

GraphResult RunOne(const RuleSet& rules, const std::vector<DiffFuzzSetting>& settings,
                   uint64_t seed) {
  GraphResult r;
  runtime::Graph g = RandomGraph(seed);
  if (g.outputs().empty()) return r;
  r.built = true;
  for (const DiffFuzzSetting& s : settings) {
    std::string why;
    try {
      runtime::Graph out;
      OptimizeReport report;
      auto t0 = Clock::now();
      Status st = Optimize(g, rules, s.options, &out, &report);
      r.optimize_s_by_setting.push_back(Since(t0));
      r.optimize_s += r.optimize_s_by_setting.back();
      if (!st.ok()) {
        why = "optimize: " + st.message();
      } else {
        ++r.optimized;
        if (!report.search.rules_applied.empty()) {
          r.rewritten = true;
          r.rewritten_by.push_back(s.name);
        }
        for (const RuleUse& u : report.search.rules_applied) r.rule_uses.push_back({u.id, u.count});
        r.cheaper |= report.search.cost_after_us < report.search.cost_before_us;
        VerifyOptions vo;
        vo.seed = seed;
        VerifyReport vr;
        t0 = Clock::now();
        Status v = CompareOutputs(g, out, vo, &vr);
        r.compare_s += Since(t0);
        if (v.ok()) {
          ++r.compared;
        } else {
          why = "compare: " + v.message();
        }
      }
    } catch (const std::exception& e) {  // the API promises none; a fuzzer reports, not dies
      why = std::string("exception: ") + e.what();
    }
    if (!why.empty()) r.failures.push_back({seed, s.name, why, ""});
  }
  if (!r.failures.empty()) r.graph = std::move(g);
  return r;
}

void Merge(GraphResult& r, const std::vector<DiffFuzzSetting>& settings,
           const std::string& failures_dir, DiffFuzzReport* report) {
  ++report->seeds;
  if (!r.built) return;
  ++report->graphs;
  report->optimized += r.optimized;
  report->compared += r.compared;
  report->rewritten += r.rewritten;
  report->cheaper += r.cheaper;
  for (const std::string& s : r.rewritten_by) ++report->rewritten_by_setting[s];
  for (const auto& [id, n] : r.rule_uses) report->rule_uses[id] += n;
  report->optimize_cpu_s += r.optimize_s;
  for (size_t k = 0; k < r.optimize_s_by_setting.size(); ++k)
    report->optimize_cpu_s_by_setting[settings[k].name] += r.optimize_s_by_setting[k];
  report->compare_cpu_s += r.compare_s;
  for (DiffFuzzFailure& f : r.failures) {
    if (!failures_dir.empty()) {
      std::string path =
          failures_dir + "/diff_fuzz_seed" + std::to_string(f.seed) + "_" + f.setting + ".onnx";
      Status written = runtime::ExportOnnxFile(r.graph, path);
      f.replay = written.ok() ? path : "not written: " + written.message();
    }
    report->failures.push_back(std::move(f));
  }
}

}  // namespace

std::vector<DiffFuzzSetting> DefaultAndAggressiveSettings(int aggressive_budget) {
  std::vector<DiffFuzzSetting> settings(2);
  settings[0].name = "default";
  settings[1].name = "aggressive";
  for (DiffFuzzSetting& s : settings) s.options.search.time_limit_s = 0;
  settings[1].options.search.alpha = 1.2;
  settings[1].options.search.budget = aggressive_budget;
  return settings;
}

Status RunDiffFuzz(const RuleSet& rules, const DiffFuzzOptions& options, DiffFuzzReport* report,
                   const std::function<void(const DiffFuzzReport&)>& progress) {
  *report = DiffFuzzReport();
  if (options.settings.empty()) return InvalidArgument("diff fuzz: no search settings");
  if (options.graphs < 0) return InvalidArgument("diff fuzz: negative graph count");
  if (options.round < 1) return InvalidArgument("diff fuzz: round must be at least 1");
  VERISUB_RETURN_IF_ERROR(base::CheckThreadCount(options.threads, "diff fuzz threads"));
  if (!options.failures_dir.empty())
    VERISUB_RETURN_IF_ERROR(base::CheckOutputDirectory(options.failures_dir));
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::task_arena arena(threads);
  const auto start = Clock::now();
  std::vector<GraphResult> results;
  for (int64_t begin = 0; begin < options.graphs; begin += options.round) {
    const int64_t n = std::min(options.round, options.graphs - begin);
    results.assign(n, GraphResult());
    arena.execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<int64_t>(0, n, 1), [&](const tbb::blocked_range<int64_t>& range) {
            for (int64_t i = range.begin(); i != range.end(); ++i)
              results[i] = RunOne(rules, options.settings,
                                  options.first_seed + static_cast<uint64_t>(begin + i));
          });
    });
    for (GraphResult& r : results) Merge(r, options.settings, options.failures_dir, report);
    report->wall_s = Since(start);
    if (progress) progress(*report);
  }
  report->wall_s = Since(start);
  return Status::Ok();
}

}  // namespace verisub::rewriter::testing
