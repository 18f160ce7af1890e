// Joint substitution and layout optimization: see joint.h.
#include "rewriter/joint.h"

#include <thread>

#include "rewriter/layout_assign.h"
#include "rewriter/layout_costs.h"
#ifdef VERISUB_HAVE_DNNL
#include "rewriter/measured_layout_costs.h"
#include "runtime/dnnl/measured_cost.h"
#endif

namespace verisub {

LayoutCostsFor::LayoutCostsFor(const runtime::CostModel* model)
    : device_(*runtime::DevicePreset("cpu-2core")), kernels_(device_) {
#ifdef VERISUB_HAVE_DNNL
  if (auto* m = dynamic_cast<const runtime::MeasuredCpuCostModel*>(model)) {
    costs_ = std::make_unique<rewriter::MeasuredLayoutCosts>(m);
    return;
  }
#else
  (void)model;
#endif
  costs_ = std::make_unique<rewriter::AnalyticLayoutCosts>(model ? model : &kernels_, device_);
}

LayoutCostsFor::~LayoutCostsFor() = default;

Status OptimizeJointly(const runtime::Graph& input, const rewriter::RuleSet& rules,
                       const OptimizeOptions& options,
                       const rewriter::LayoutCostSource& layout_costs, runtime::Graph* output,
                       OptimizeReport* report, JointChoice* choice) {
  // Every graph the searches price is a rewrite of the input: most of its nodes were priced
  // before, in the same context (LayoutPricingCache).
  rewriter::LayoutPricingCache pricing;
  auto dp_cost = [&](const runtime::Graph& g) -> StatusOr<double> {
    auto p = rewriter::BuildLayoutProblem(g, layout_costs, {}, nullptr, &pricing);
    if (!p.ok()) return p.status();
    auto s = rewriter::SolveLayoutProblem(*p, rewriter::LayoutDpOptions(), nullptr);
    if (!s.ok()) return s.status();
    return s->cost_us;
  };
  OptimizeOptions rewrites_only = options;
  rewrites_only.search.graph_cost = nullptr;
  runtime::Graph sequential;
  OptimizeReport sequential_report;
  // The two searches share nothing but the input, the rules and the cost model (thread-safe: its
  // table is locked, and a measurement holds the lock, so no two kernels are timed at once): the
  // rewrites-only one runs on a thread of its own beside the joint one, and each gives what it
  // gives alone (DenseNet-121: 0.4 s of 1.3 s of searching off the wall time).
  Status sequential_status;
  std::thread rewrites_only_search([&] {
    sequential_status = Optimize(input, rules, rewrites_only, &sequential, &sequential_report);
  });
  OptimizeOptions joint = options;
  joint.search.graph_cost = dp_cost;
  Status joint_status = Optimize(input, rules, joint, output, report);
  rewrites_only_search.join();
  VERISUB_RETURN_IF_ERROR(sequential_status);
  VERISUB_RETURN_IF_ERROR(joint_status);
  base::PhaseTimes times;
  times.AddAll(report->phases, "joint ");
  times.AddAll(sequential_report.phases, "rewrites-only ");
  times.Start();
  auto seq_cost = dp_cost(sequential);
  if (!seq_cost.ok())
    return seq_cost.status().WithContext("joint search: pricing the rewrites-only graph");
  JointChoice local;
  JointChoice& c = choice ? *choice : local;
  // Priced as written: the search priced its graphs before convolutions absorbed their epilogues.
  auto joint_cost = dp_cost(*output);
  if (!joint_cost.ok()) return joint_cost.status().WithContext("joint search: pricing its graph");
  c.joint_cost_us = *joint_cost;
  c.sequential_cost_us = *seq_cost;
  c.kept_sequential = *seq_cost < c.joint_cost_us;
  times.Mark("layout pricing");
  if (c.kept_sequential) {
    *output = std::move(sequential);
    *report = std::move(sequential_report);
  }
  report->phases = std::move(times);
  return Status::Ok();
}

}  // namespace verisub
