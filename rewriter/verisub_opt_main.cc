// verisub-opt: optimizes an ONNX model with a rules file and a cost model, prints a summary,
// optionally writes a JSON report and checks the outputs against the original.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "base/flags.h"
#include "rewriter/cost_source.h"
#include "rewriter/joint.h"
#include "rewriter/optimize.h"
#include "rewriter/report_html.h"
#include "rewriter/report_json.h"
#include "rewriter/rule_loader.h"
#include "rewriter/rule_source.h"
#include "rewriter/verify_outputs.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/input_shapes.h"
#include "runtime/memory_budget.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#ifdef VERISUB_HAVE_HALIDE
#include "fusion/generator.h"
#endif

namespace {

constexpr const char* kEpilog =
    "Exit codes: 0 written, 1 failed (nothing written), 2 bad usage, 3 --verify-outputs found\n"
    "different outputs (nothing written), 4 --verify-outputs could not run the comparison.";

// Every applied rule that lacks a proof (only with --allow-unproved) is named on stderr: the
// written model is then not known to be equivalent to the input.
void WarnUnprovedRulesApplied(const verisub::rewriter::RuleSet& rules,
                              const verisub::OptimizeReport& report) {
  std::map<std::string, const verisub::ruledb::Rule*> by_id;
  for (int i = 0; i < rules.size(); ++i) by_id[rules.rule(i).id] = &rules.rule(i).rule;
  int unproved = 0;
  for (const verisub::rewriter::RuleUse& u : report.search.rules_applied) {
    auto it = by_id.find(u.id);
    if (it != by_id.end() && it->second->proof.status == verisub::ruledb::ProofStatus::kProved)
      continue;
    const char* status =
        it == by_id.end() ? "unknown" : verisub::ruledb::ProofStatusName(it->second->proof.status);
    std::fprintf(stderr, "WARNING: applied an UNPROVED rule (%s) %d time(s): %s %s\n", status,
                 u.count, u.id.c_str(), u.text.c_str());
    ++unproved;
  }
  if (unproved > 0)
    std::fprintf(stderr,
                 "WARNING: %d unproved rule(s) applied: the written model is NOT known to compute "
                 "what the input does (check it with --verify-outputs)\n",
                 unproved);
}

int Fail(const verisub::Status& st) {
  std::fprintf(stderr, "error: %s\n", st.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace verisub;  // NOLINT
  base::InstallTempFileCleanup();
  std::string model, output, report_path, html_path, rules_path = rewriter::FindDefaultRules();
  bool verify = false, allow_unproved = false, no_reverse = false, computed_weights = false;
  OptimizeOptions options;
  rewriter::VerifyOptions verify_options;
  constexpr double kUnbounded = std::numeric_limits<double>::infinity();
  std::string dump_path, pass_names, device;
  std::string layout = "dp";
  rewriter::CostOptions cost;
  std::vector<std::string> input_shapes;
  int64_t max_memory_mb = 0;
  std::vector<std::string> passes = OptimizePassNames();
#ifdef VERISUB_HAVE_HALIDE
  // The sub-operator level of the optimized graph (fusion/): every node lowered, or the clusters
  // of generated kernels with their fused sub-operators.
  passes.push_back("lower");
  passes.push_back("fuse");
#endif
  for (const std::string& p : passes) pass_names += (pass_names.empty() ? "" : ", ") + p;
  base::Flags flags("verisub-opt", "MODEL.onnx -o OUT.onnx [flags]", kEpilog);
  flags.Positional("MODEL.onnx", &model, "the model to optimize")
      .Path("--output", &output, "where the optimized model goes (required)")
      .Alias("-o", "--output")
      .Path("--rules", &rules_path,
            "rules database or plain rule list (default: the shipped data/rules/taso.pb, in the "
            "working directory or this checkout)")
      .ShowDefault("--rules", "")
      .Bool("--allow-unproved", &allow_unproved,
            "use rules without a proof record (hand-written text rules)")
      .Bool("--no-reverse-rules", &no_reverse,
            "apply rules only as the database states them, not also right to left")
      .Bool("--computed-weights", &computed_weights,
            "allow rewrites that leave a convolution or matmul reading a weight computed at run "
            "time (off: every constant weight stays constant, as the engines that run the "
            "written model prepare constant weights at load, a cost the measured costs miss)")
      .Double("--alpha", &options.search.alpha, 1.0, kUnbounded,
              "explore graphs up to alpha x the best cost")
      .Double("--min-gain", &options.search.min_gain, 0.0, 0.99,
              "keep the input unless the best graph costs less than (1 - this) x its cost "
              "(default 0.01: a smaller predicted gain is within the costs' noise)")
      .Int("--budget", &options.search.budget, 0, 1000000000, "graphs the search may expand")
      .Int("--patience", &options.search.patience, 0, 1000000000,
           "stop after this many expanded graphs without a cheaper one (0: never)")
      .Double("--time-limit", &options.search.time_limit_s, 0.0, 1e7,
              "search time limit in seconds, 0 for none")
      .Int("--max-queue", &options.search.max_queue, 1, 1000000000,
           "candidates the search queue may hold")
      .Int64("--max-memory-mb", &max_memory_mb, 0, int64_t{1} << 40,
             "memory budget in MiB for a tensor and for all together (import, --verify-outputs) "
             "and for the search's estimated graphs; over it, the run stops naming the tensor "
             "or phase")
      .ShowDefault("--max-memory-mb", "0: 4096 MiB a tensor, no total")
      .Enum("--cost", &cost.cost, {"auto", "analytic", "cpu-measured", "gpu-measured"},
            "cost model: cpu-measured (kernels timed on this CPU with oneDNN, cached in cost "
            "tables), gpu-measured (timed on this machine's GPU with cuDNN and cuBLAS, cached "
            "likewise: optimizing for that GPU), analytic (a device preset, see --device); auto: "
            "cpu-measured when built with oneDNN, analytic when --device is given")
      .String("--device", &device, "NAME", "analytic cost model preset: v100, cpu-2core or h100")
      .ShowDefault("--device", "v100")
      .Path("--cost-table", &cost.table_path,
            "measured costs: read costs from this table and add new measurements to it (default: "
            "the shipped data/costs/ table of this machine plus the per-user cache)")
      .Enum("--cost-missing", &cost.missing, {"measure", "analytic", "error"},
            "measured costs: an instance no table has is timed now, estimated analytically, or an "
            "error (a table that must be complete)")
      .Threads("--cost-threads", &cost.threads, 1,
               "cpu-measured: kernel threads to time with (the table is per thread count)")
      .Path("--cost-cache", &cost.cache_dir,
            "measured costs: per-user cache folder ('none': no cache; default "
            "$XDG_CACHE_HOME/verisub or ~/.cache/verisub)")
      .Enum("--layout", &layout, {"dp", "plain"},
            "dp: the search prices every graph by the layout DP's optimal cost (TASO's joint "
            "optimization; the rewrites-only result is kept where it lays out cheaper); plain: "
            "by the sum of its nodes' costs, every tensor plain. Layouts are not written to the "
            "ONNX file: an engine lays the model out itself")
      .Path("--report", &report_path, "write a JSON report here")
      .Path("--report-html", &html_path,
            "write the report as one self-contained HTML page here (graphs before and after, "
            "rewrites with their proofs, values)")
      .Bool("--verify-outputs", &verify,
            "run the original and the optimized model on random inputs and compare")
      .Uint64("--seed", &verify_options.seed, "--verify-outputs: random seed for the inputs")
      .Repeated("--input-shape", &input_shapes, "NAME=D0,D1,...",
                "fixes a graph input's symbolic dimensions, e.g. input=1,3,224,224")
      .Pair("--dump-after", &options.dump_after, &dump_path, "PASS FILE",
            "write the graph's text form after PASS to FILE (passes: " + pass_names + ")");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  if (output.empty()) return flags.UsageError("-o OUT.onnx is required");
  for (const std::string& spec : input_shapes)
    if (Status st = runtime::ParseInputShapeFlag(spec, &options.import.input_shapes); !st.ok())
      return flags.UsageError(st.message());
  if (!device.empty()) {
    if (Status st = runtime::DevicePreset(device).status(); !st.ok())
      return flags.UsageError("--device: " + st.message());
    if (cost.cost == "cpu-measured" || cost.cost == "gpu-measured")
      return flags.UsageError("--device names an analytic preset; it does not go with --cost " +
                              cost.cost);
    cost.device = device;
    if (cost.cost == "auto") cost.cost = "analytic";
  }
  if (!options.dump_after.empty() &&
      std::find(passes.begin(), passes.end(), options.dump_after) == passes.end())
    return flags.UsageError("--dump-after: no pass named '" + options.dump_after +
                            "' (passes: " + pass_names + ")");

  // lower and fuse are dumped after the whole pipeline, not by a pass of it.
  const bool dump_subops = options.dump_after == "lower" || options.dump_after == "fuse";
  const bool dump_fused = options.dump_after == "fuse";
  if (dump_subops) options.dump_after.clear();

  const runtime::MemoryBudget memory = runtime::MemoryBudgetFromMb(max_memory_mb);
  options.import.memory = memory;
  options.search.max_memory_bytes = max_memory_mb > 0 ? memory.max_total_bytes : 0;
  options.search.apply.keep_weights_constant = !computed_weights;

  // Said before the work, not after it.
  for (const std::string& path : {output, report_path, dump_path, html_path})
    if (Status st = base::CheckOutputPath(path); !st.ok()) return Fail(st);

  base::PhaseTimes phases;  // where the time goes, printed and in the JSON report
  // The rules are read and compiled on a thread of their own while the costs load and the model
  // imports; a rules error is still the one reported first.
  rewriter::RuleSetOptions rule_options;
  rule_options.proved_only = !allow_unproved;
  rule_options.reverse = !no_reverse;
  rewriter::RuleSetLoader rules_loader(rules_path, rule_options,
                                       /*with_proofs=*/!html_path.empty());
  auto cost_source = rewriter::CostSource::Create(cost);
  phases.Mark("cost model");
  StatusOr<runtime::Graph> original = cost_source.ok()
                                          ? runtime::ImportOnnxFile(model, options.import)
                                          : StatusOr<runtime::Graph>(cost_source.status());
  phases.Mark("import");
  auto loaded = rules_loader.Get();
  phases.Mark("rules (waited for)");
  if (!loaded.ok()) return Fail(loaded.status());
  phases.AddBeside("rules read", loaded->read_seconds);
  phases.AddBeside("rules compiled", loaded->compile_seconds);
  if (!cost_source.ok()) return Fail(cost_source.status());
  if (!original.ok()) return Fail(original.status());
  const std::shared_ptr<const rewriter::RuleSet>& rule_set = loaded->set;
  std::map<std::string, ruledb::ProofRecord>& proofs = loaded->proofs;  // for the HTML report
  const rewriter::RuleSetStats& stats = rule_set->stats();
  std::printf(
      "rules: %d loaded from %s, %d used (%d unproved, %d duplicate, %d unmatchable skipped; "
      "%d of them right to left)\n",
      stats.loaded, rules_path.c_str(), stats.compiled, stats.skipped_unproved,
      stats.skipped_duplicate, stats.skipped_unmatchable, stats.reversed);
  if (stats.compiled == 0 && stats.skipped_unproved > 0)
    std::fprintf(stderr,
                 "warning: every rule lacks a proof record; pass --allow-unproved to use "
                 "hand-written rules\n");

  options.cost_model = &(*cost_source)->model();

  // The comparison's executor must fit too: said before the search, not after it.
  if (verify) {
    if (Status st = runtime::CheckMemoryBudget(*original, memory, /*executor=*/true); !st.ok()) {
      std::fprintf(stderr,
                   "\n*** CANNOT VERIFY: the outputs could not be compared (nothing is known "
                   "about them) ***\n--verify-outputs: %s\nnothing was written\n",
                   st.message().c_str());
      return 4;
    }
  }
  runtime::Graph optimized;
  OptimizeReport report;
  // Without --verify-outputs the original is not needed afterwards: the optimizer consumes it,
  // so weights the result replaces are freed rather than held twice.
  JointChoice joint;
  Status st;
  if (layout == "dp") {
    LayoutCostsFor layout_costs(options.cost_model);
    st = OptimizeJointly(*original, *rule_set, options, layout_costs.costs(), &optimized, &report,
                         &joint);
  } else {
    st = verify || !html_path.empty()
             ? Optimize(*original, *rule_set, options, &optimized, &report)
             : Optimize(std::move(original).value(), *rule_set, options, &optimized, &report);
  }
  phases.Mark("optimize");
  // The dump is written even when a later pass fails: that is when it is wanted.
  if (!dump_path.empty() && !report.dump_text.empty()) {
    Status dumped = base::WriteFileAtomically(dump_path, report.dump_text);
    if (!dumped.ok()) return Fail(dumped);
  }
#ifdef VERISUB_HAVE_HALIDE
  if (dump_subops && st.ok()) {
    // The kernels as the generator makes them: rewritten by the shipped sub-operator rules.
    std::optional<fusion::SubopRules> subop_rules;
    if (const std::string path = rewriter::FindShippedPath("data/rules/subop.pb"); !path.empty()) {
      auto rules = rewriter::LoadRules(path);
      if (!rules.ok()) return Fail(rules.status().WithContext("sub-operator rules"));
      subop_rules.emplace(*rules);
    }
    Status dumped = base::WriteFileAtomically(
        dump_path, fusion::SubopText(optimized, dump_fused, subop_rules ? &*subop_rules : nullptr));
    if (!dumped.ok()) return Fail(dumped);
  }
#else
  (void)dump_fused;
#endif
  // Measurements are kept even when the search failed: they are valid on their own.
  std::printf("costs:           %s\n", (*cost_source)->Summary().c_str());
  if (Status saved = (*cost_source)->Save(); !saved.ok()) {
    if (!cost.table_path.empty()) return Fail(saved);
    std::fprintf(stderr, "warning: %s (the measurements are lost)\n", saved.message().c_str());
  }
  if (!st.ok()) return Fail(st);
  std::printf("%s", rewriter::ReportSummary(report).c_str());
  if (layout == "dp")
    std::printf(
        "layouts:         DP cost %.1f us (joint search) vs %.1f us (rewrites only): kept %s\n",
        joint.joint_cost_us, joint.sequential_cost_us,
        joint.kept_sequential ? "rewrites only" : "joint");
  WarnUnprovedRulesApplied(*rule_set, report);

  if (verify) {
    rewriter::VerifyReport vr;
    Status v = rewriter::CompareOutputs(*original, optimized, verify_options, &vr, memory);
    if (!v.ok() && vr.outcome == rewriter::VerifyOutcome::kCouldNotRun) {
      std::fprintf(stderr,
                   "\n*** CANNOT VERIFY: the outputs could not be compared (nothing is known "
                   "about them) ***\n%s\nnothing was written\n",
                   v.message().c_str());
      return 4;
    }
    if (!v.ok()) {
      std::fprintf(stderr,
                   "\n*** VERIFY FAILED: the optimized model computes different outputs ***\n"
                   "%s\nnothing was written\n",
                   v.message().c_str());
      return 3;
    }
    std::printf("verify outputs:  ok (%d outputs, %lld elements, max abs diff %.3g)\n",
                vr.outputs_compared, static_cast<long long>(vr.elements_compared), vr.max_abs_diff);
  }
  phases.Mark("costs saved, verify");
  st = runtime::ExportOnnxFile(optimized, output);
  if (!st.ok()) return Fail(st);
  phases.Mark("export");
  std::printf("load time:       %.3f s: %s\n", phases.Total(), phases.ToString().c_str());
  std::printf("optimize time:   %s\n", report.phases.ToString().c_str());
  if (!report_path.empty()) {
    st = base::WriteFileAtomically(report_path,
                                   rewriter::ReportToJson(report, model, output, &phases));
    if (!st.ok()) return Fail(st);
  }
  if (!html_path.empty()) {
    rewriter::HtmlReportInput in;
    in.model = model;
    in.output = output;
    in.before = &*original;
    in.after = &optimized;
    in.report = &report;
    in.cost_model = options.cost_model;
    in.proofs = std::move(proofs);
    st = base::WriteFileAtomically(html_path, rewriter::RenderHtmlReport(in));
    if (!st.ok()) return Fail(st);
    std::printf("report:          %s\n", html_path.c_str());
  }
  std::printf("wrote:           %s\n", output.c_str());
  return 0;
}
