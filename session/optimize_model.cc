// OptimizeModel (see optimize_model.h).
#include "session/optimize_model.h"

#include <map>

#include "rewriter/report_html.h"
#include "rewriter/rule_set.h"
#include "rewriter/rule_source.h"

namespace verisub {

StatusOr<ModelOptimizeResult> OptimizeModel(runtime::Graph graph,
                                            const ModelOptimizeOptions& options,
                                            const std::string& model) {
  if (options.layout != "dp" && options.layout != "plain")
    return InvalidArgument("layout '" + options.layout + "': dp or plain");
  ModelOptimizeResult out;
  out.rules_path = options.rules_path.empty() ? rewriter::FindDefaultRules() : options.rules_path;
  auto rules = rewriter::LoadRules(out.rules_path);
  if (!rules.ok()) return rules.status();
  std::map<std::string, ruledb::ProofRecord> proofs;
  std::optional<runtime::Graph> original;
  if (options.for_html_report) {
    proofs = rewriter::ProofRecords(*rules);
    original = graph;
  }
  rewriter::RuleSetOptions rule_options;
  rule_options.proved_only = !options.allow_unproved;
  auto rule_set = rewriter::RuleSet::Compile(std::move(rules).value(), rule_options);
  if (!rule_set.ok()) return rule_set.status();
  auto cost_source = rewriter::CostSource::Create(options.cost);
  if (!cost_source.ok()) return cost_source.status();
  OptimizeOptions optimize = options.optimize;
  optimize.cost_model = &(*cost_source)->model();
  Status st;
  if (options.layout == "dp") {
    LayoutCostsFor layout_costs(optimize.cost_model);
    JointChoice joint;
    st = OptimizeJointly(graph, **rule_set, optimize, layout_costs.costs(), &out.graph, &out.report,
                         &joint);
    out.joint = joint;
  } else {
    st = Optimize(std::move(graph), **rule_set, optimize, &out.graph, &out.report);
  }
  out.cost_summary = (*cost_source)->Summary();
  if (Status saved = (*cost_source)->Save(); !saved.ok())
    out.cost_summary += "; not saved: " + saved.message();
  if (!st.ok()) return st;
  if (original) {
    rewriter::HtmlReportInput in;
    in.model = model;
    in.before = &*original;
    in.after = &out.graph;
    in.report = &out.report;
    in.cost_model = optimize.cost_model;
    in.proofs = std::move(proofs);
    out.html = rewriter::RenderHtmlReport(in);
  }
  return out;
}

}  // namespace verisub
