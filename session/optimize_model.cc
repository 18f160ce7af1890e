// OptimizeModel (see optimize_model.h).
#include "session/optimize_model.h"

#include <map>

#include "rewriter/report_html.h"
#include "rewriter/rule_loader.h"
#include "rewriter/rule_source.h"

namespace verisub {

StatusOr<ModelOptimizeResult> OptimizeModel(runtime::Graph graph,
                                            const ModelOptimizeOptions& options,
                                            const std::string& model) {
  return OptimizeModel([&graph]() -> StatusOr<runtime::Graph> { return std::move(graph); }, options,
                       model);
}

StatusOr<ModelOptimizeResult> OptimizeModel(const std::function<StatusOr<runtime::Graph>()>& import,
                                            const ModelOptimizeOptions& options,
                                            const std::string& model) {
  if (options.layout != "dp" && options.layout != "plain")
    return InvalidArgument("layout '" + options.layout + "': dp or plain");
  ModelOptimizeResult out;
  out.rules_path = options.rules_path.empty() ? rewriter::FindDefaultRules() : options.rules_path;
  rewriter::RuleSetOptions rule_options;
  rule_options.proved_only = !options.allow_unproved;
  rewriter::RuleSetLoader rules_loader(out.rules_path, rule_options, options.for_html_report);
  auto cost_source = rewriter::CostSource::Create(options.cost);
  StatusOr<runtime::Graph> imported =
      cost_source.ok() ? import() : StatusOr<runtime::Graph>(cost_source.status());
  auto loaded = rules_loader.Get();
  if (!loaded.ok()) return loaded.status();
  if (!cost_source.ok()) return cost_source.status();
  if (!imported.ok()) return imported.status();
  runtime::Graph graph = std::move(imported).value();
  const std::shared_ptr<const rewriter::RuleSet>& rule_set = loaded->set;
  std::optional<runtime::Graph> original;
  if (options.for_html_report) original = graph;
  OptimizeOptions optimize = options.optimize;
  optimize.cost_model = &(*cost_source)->model();
  optimize.search.apply.keep_weights_constant = !options.computed_weights;
  Status st;
  if (options.layout == "dp") {
    LayoutCostsFor layout_costs(optimize.cost_model);
    JointChoice joint;
    st = OptimizeJointly(graph, *rule_set, optimize, layout_costs.costs(), &out.graph, &out.report,
                         &joint);
    out.joint = joint;
  } else {
    st = Optimize(std::move(graph), *rule_set, optimize, &out.graph, &out.report);
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
    in.proofs = std::move(loaded->proofs);
    out.html = rewriter::RenderHtmlReport(in);
  }
  return out;
}

}  // namespace verisub
