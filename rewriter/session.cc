// Session: import, optional optimization, prepare on a backend, run.
#include "rewriter/session.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "rewriter/layout_assign.h"
#include "rewriter/layout_costs.h"
#include "rewriter/rule_source.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/onnx_import.h"
#include "runtime/reference_backend.h"
#ifdef VERISUB_HAVE_DNNL
#include "runtime/dnnl/dnnl_backend.h"
#endif

namespace verisub {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The per-value layouts a Session asks its backend for (empty: the backend's own policy).
StatusOr<std::vector<specs::Layout>> SessionLayouts(const runtime::Graph& g,
                                                    const std::string& layout) {
  if (layout == "backend") return std::vector<specs::Layout>();
  if (layout == "plain") return std::vector<specs::Layout>(g.num_values(), specs::Layout::kPlain);
  if (layout != "dp")
    return InvalidArgument("unknown layout policy '" + layout + "' (backend, dp or plain)");
  auto device = runtime::DevicePreset("cpu-2core");
  if (!device.ok()) return device.status();
  runtime::AnalyticCostModel kernels(*device);
  rewriter::AnalyticLayoutCosts costs(&kernels, *device);
  auto assignment = rewriter::AssignLayouts(g, costs, rewriter::LayoutDpOptions(), nullptr);
  if (!assignment.ok()) return assignment.status().WithContext("layout assignment");
  return std::move(assignment->value_layouts);
}

}  // namespace

std::unique_ptr<runtime::Backend> MakeBackend(const std::string& name) {
#ifdef VERISUB_HAVE_DNNL
  if (name == "onednn") return runtime::MakeDnnlBackend();
#endif
  if (name == "reference") return runtime::MakeReferenceBackend();
  return nullptr;
}

StatusOr<std::unique_ptr<Session>> Session::Create(const std::string& model_path,
                                                   const SessionOptions& options) {
  auto start = std::chrono::steady_clock::now();
  runtime::ImportOptions import;
  import.input_shapes = options.input_shapes;
  auto graph = runtime::ImportOnnxFile(model_path, import);
  if (!graph.ok()) return graph.status();
  double load = SecondsSince(start);
  auto s = Create(std::move(graph).value(), options);
  if (s.ok()) (*s)->times_.load_s = load;
  return s;
}

StatusOr<std::unique_ptr<Session>> Session::Create(runtime::Graph graph,
                                                   const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session());
  VERISUB_RETURN_IF_ERROR(s->Init(std::move(graph), options));
  return s;
}

Status Session::Init(runtime::Graph graph, const SessionOptions& options) {
  if (options.optimize) {
    auto start = std::chrono::steady_clock::now();
    std::string path =
        options.rules_path.empty() ? rewriter::FindDefaultRules() : options.rules_path;
    auto rules = rewriter::LoadRules(path);
    if (!rules.ok()) return rules.status();
    rewriter::RuleSetOptions rule_options;
    rule_options.proved_only = !options.allow_unproved_rules;
    auto rule_set = rewriter::RuleSet::Compile(std::move(rules).value(), rule_options);
    if (!rule_set.ok()) return rule_set.status();
    OptimizeOptions optimize = options.optimize_options;
    std::unique_ptr<rewriter::CostSource> cost_source;
    if (!optimize.cost_model) {
      rewriter::CostOptions cost = options.cost;
      // The session's kernels run with num_threads: the costs are timed with as many.
      cost.threads = options.num_threads > 0
                         ? options.num_threads
                         : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
      auto made = rewriter::CostSource::Create(cost);
      if (!made.ok()) return made.status();
      cost_source = std::move(made).value();
      optimize.cost_model = &cost_source->model();
    }
    Status st = Optimize(std::move(graph), **rule_set, optimize, &graph_, &report_);
    if (cost_source) {
      cost_summary_ = cost_source->Summary();
      // Measurements are kept even when the search failed; a cache that cannot be written only
      // costs the next session the time to measure again.
      if (Status saved = cost_source->Save(); !saved.ok())
        cost_summary_ += "; not saved: " + saved.message();
    }
    VERISUB_RETURN_IF_ERROR(st);
    optimized_ = true;
    times_.optimize_s = SecondsSince(start);
  } else {
    graph_ = std::move(graph);
  }
  auto start = std::chrono::steady_clock::now();
  backend_ = MakeBackend(options.backend);
  if (!backend_ && options.backend == "onednn") backend_ = MakeBackend("reference");
  if (!backend_) return InvalidArgument("unknown backend '" + options.backend + "'");
  runtime::PrepareOptions prepare;
  prepare.num_threads = options.num_threads;
  auto layouts = SessionLayouts(graph_, options.layout);
  if (!layouts.ok()) return layouts.status();
  prepare.layouts = std::move(layouts).value();
  auto prepared = backend_->Prepare(graph_, prepare);
  if (!prepared.ok()) return prepared.status().WithContext(backend_->Name() + " backend");
  prepared_ = std::move(prepared).value();
  backend_name_ = backend_->Name();
  times_.prepare_s = SecondsSince(start);
  return Status::Ok();
}

StatusOr<std::vector<runtime::HostTensor>> Session::Run(
    const std::vector<runtime::HostTensor>& inputs) {
  return prepared_->Run(inputs);
}

}  // namespace verisub
