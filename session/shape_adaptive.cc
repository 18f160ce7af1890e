// ShapeAdaptiveSession: the Sessions of a model run at any input shape (shape_adaptive.h).
#include "session/shape_adaptive.h"

#include <utility>

namespace verisub {
namespace {

// Shapes counted per distinct shape at most; past it the counts start over.
constexpr size_t kShapesCounted = 4096;

std::string KeyOf(const runtime::InputShapes& shapes) {
  std::string key;
  for (const auto& [name, dims] : shapes) key += name + "=" + runtime::DimsToString(dims) + ";";
  return key;
}

}  // namespace

StatusOr<std::unique_ptr<ShapeAdaptiveSession>> ShapeAdaptiveSession::Create(
    Importer import, runtime::DeclaredInterface declared, const SessionOptions& options,
    const std::string& mode) {
  if (mode != "auto" && mode != "dynamic" && mode != "static")
    return InvalidArgument("shapes '" + mode + "': auto, dynamic or static");
  std::unique_ptr<ShapeAdaptiveSession> s(new ShapeAdaptiveSession());
  s->import_ = std::move(import);
  s->declared_ = std::move(declared);
  s->options_ = options;
  s->mode_ = mode;
  for (const runtime::DeclaredInput& in : s->declared_.inputs) {
    const bool fixed = options.input_shapes.count(in.name) > 0;
    for (int64_t d : in.dims) s->open_ |= d < 0 && !fixed;
    s->open_ |= !in.ranked && !fixed;
  }
  if (!s->open_) {
    VERISUB_ASSIGN_OR_RETURN(s->current_, s->Prepared(options.input_shapes));
    s->shapes_prepared_ = 0;  // the only Session, not one per shape
    return s;
  }
  if (mode == "static") return s;
  runtime::ImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  import_options.float16_as_float32 = true;  // as Session::Create imports a model to run
  import_options.require_static_shapes = false;
  SessionOptions dynamic = options;
  dynamic.dynamic_shapes = true;
  auto graph = s->import_(import_options);
  StatusOr<std::unique_ptr<Session>> made =
      graph.ok() ? Session::Create(std::move(graph).value(), dynamic)
                 : StatusOr<std::unique_ptr<Session>>(graph.status());
  if (made.ok()) {
    s->dynamic_ = std::move(made).value();
    s->current_ = s->dynamic_;
  } else if (mode == "dynamic") {
    return made.status();
  } else {
    s->dynamic_error_ = made.status().message();
  }
  return s;
}

StatusOr<std::vector<runtime::HostTensor>> ShapeAdaptiveSession::Run(
    const std::vector<runtime::HostTensor>& inputs) {
  std::shared_ptr<Session> session;
  if (!open_) {
    session = current_;
  } else {
    if (inputs.size() != declared_.inputs.size())
      return InvalidArgument("the model has " + std::to_string(declared_.inputs.size()) +
                             " inputs, got " + std::to_string(inputs.size()));
    runtime::InputShapes shapes = options_.input_shapes;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const runtime::DeclaredInput& in = declared_.inputs[k];
      if (in.ranked && in.dims.size() != inputs[k].dims.size())
        return InvalidArgument("input '" + in.name + "' expects shape " +
                               runtime::DimsToString(in.dims) + ", got " +
                               runtime::DimsToString(inputs[k].dims));
      shapes[in.name] = inputs[k].dims;
    }
    VERISUB_ASSIGN_OR_RETURN(session, ForShapes(shapes));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = session;
  }
  // In the Session's graph's order (the declared one, less any input the import dropped).
  const runtime::Graph& g = session->graph();
  std::vector<runtime::HostTensor> ordered;
  for (int v : g.inputs()) {
    size_t k = 0;
    while (k < declared_.inputs.size() && declared_.inputs[k].name != g.value(v).name) ++k;
    if (k == declared_.inputs.size() || k >= inputs.size())
      return InvalidArgument("input '" + g.value(v).name + "' missing");
    ordered.push_back(inputs[k]);
  }
  return session->Run(ordered);
}

StatusOr<std::shared_ptr<Session>> ShapeAdaptiveSession::ForShapes(
    const runtime::InputShapes& shapes) {
  if (dynamic_) {
    const std::string key = KeyOf(shapes);
    std::lock_guard<std::mutex> lock(mutex_);
    bool cached = false;
    for (const auto& entry : cache_) cached |= entry.first == key;
    if (!cached) {
      bool stay = mode_ == "dynamic" || promoted_ >= kShapesKept;
      if (!stay) {
        if (seen_.size() >= kShapesCounted && !seen_.count(key)) seen_.clear();
        stay = ++seen_[key] < kStaticAfter;
      }
      if (stay) {
        ++dynamic_runs_;
        return dynamic_;
      }
      ++promoted_;
      seen_.erase(key);
    }
  }
  return Prepared(shapes);
}

StatusOr<std::shared_ptr<Session>> ShapeAdaptiveSession::Prepared(
    const runtime::InputShapes& shapes) {
  const std::string key = KeyOf(shapes);
  std::lock_guard<std::mutex> one_at_a_time(prepare_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = cache_.begin(); it != cache_.end(); ++it)
      if (it->first == key) {
        cache_.splice(cache_.begin(), cache_, it);
        return cache_.front().second;
      }
  }
  runtime::ImportOptions import_options;
  import_options.input_shapes = shapes;
  import_options.float16_as_float32 = true;
  SessionOptions options = options_;
  options.input_shapes = shapes;
  // A shape's preparation happens in the middle of a run. The first one times the kernels no
  // cost table has yet (once per machine: the tables are cached on disk); later shapes time
  // none (seconds per new shape of a transformer): their kernels are priced from the times of
  // the same kernels at the shapes timed before, scaled (MissingCost::kAnalytic), so that the
  // layout DP lays them out as it laid out the first (a bandwidth estimate blind to layouts had
  // put a second batch size of ResNet-50 in plain layouts, 2.5x slower).
  if (open_ && shapes_prepared_ > 0 && options.cost.missing == "measure")
    options.cost.missing = "analytic";
  // The layout policy timed at the first shape's preparation (layout "auto": the DP's layouts
  // against oneDNN's own, a second preparation and a dozen runs) holds for the others.
  if (open_ && options.layout == "auto" && !layout_choice_.empty()) options.layout = layout_choice_;
  VERISUB_ASSIGN_OR_RETURN(runtime::Graph graph, import_(import_options));
  VERISUB_ASSIGN_OR_RETURN(std::unique_ptr<Session> made,
                           Session::Create(std::move(graph), options));
  std::shared_ptr<Session> s = std::move(made);
  if (open_ && options.layout == "auto" && s->layout_timing())
    layout_choice_ = s->layout_timing()->kept_backend ? "backend" : "dp";
  std::lock_guard<std::mutex> lock(mutex_);
  cache_.emplace_front(key, s);
  if (cache_.size() > kShapesKept) cache_.pop_back();
  ++shapes_prepared_;
  return s;
}

std::shared_ptr<Session> ShapeAdaptiveSession::current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

int ShapeAdaptiveSession::shapes_prepared() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return shapes_prepared_;
}

int ShapeAdaptiveSession::dynamic_runs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dynamic_runs_;
}

bool ShapeAdaptiveSession::last_run_dynamic() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dynamic_ && current_ == dynamic_;
}

}  // namespace verisub
