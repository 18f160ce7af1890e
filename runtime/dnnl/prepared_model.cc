// Buffer planning and the run loop of a oneDNN-prepared model.
#include "runtime/dnnl/prepared_model.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>

#include "runtime/large_buffer.h"

namespace verisub::runtime::dnnl_backend {

ThreadScope::ThreadScope(int n) : set_(n > 0) {
  if (!set_) return;
  previous_ = omp_get_max_threads();
  omp_set_num_threads(n);
}

ThreadScope::~ThreadScope() {
  if (set_) omp_set_num_threads(previous_);
}

StatusOr<std::unique_ptr<DnnlPrepared>> DnnlPrepared::Create(std::unique_ptr<Graph> graph,
                                                             ModelDraft draft, int num_threads,
                                                             PrepareStats stats) {
  std::unique_ptr<DnnlPrepared> m(new DnnlPrepared());
  m->graph_ = std::move(graph);
  m->engine_ = draft.engine;
  m->stream_ = dnnl::stream(m->engine_);
  m->slots_.assign(std::make_move_iterator(draft.slots.begin()),
                   std::make_move_iterator(draft.slots.end()));
  m->steps_ = std::move(draft.steps);
  m->constant_buffers_ = std::move(draft.constant_buffers);
  m->num_threads_ = num_threads;
  m->stats_ = stats;
  VERISUB_RETURN_IF_ERROR(m->PlanBuffers());
  return m;
}

int DnnlPrepared::Root(int v) const {
  while (slots_[v].alias_of >= 0) v = slots_[v].alias_of;
  return v;
}

Status DnnlPrepared::PlanBuffers() {
  const int n = static_cast<int>(slots_.size());
  constexpr int kUnused = INT_MAX;
  std::vector<int> first(n, kUnused), last(n, -2);
  auto touch = [&](int v, int t) {
    int r = Root(v);
    first[r] = std::min(first[r], t);
    last[r] = std::max(last[r], t);
  };
  // A graph input keeps its buffer to the end: a profile or a timing runs the steps again on
  // the buffers of the last run, and a step reading the input (or an index computed from it: an
  // embedding's Gather) must see the input, not whatever a later value left in its buffer.
  for (int v : graph_->inputs()) {
    touch(v, -1);
    touch(v, INT_MAX - 1);
  }
  for (int t = 0; t < static_cast<int>(steps_.size()); ++t) {
    for (int v : steps_[t].reads) touch(v, t);
    for (int v : steps_[t].writes) touch(v, t);
  }
  for (int v : graph_->outputs()) touch(v, INT_MAX - 1);
  auto offset = [&](int v) {
    size_t off = 0;
    for (; slots_[v].alias_of >= 0; v = slots_[v].alias_of) off += slots_[v].alias_offset;
    return off;
  };
  std::vector<size_t> need(n, 0);
  for (int v = 0; v < n; ++v)
    if (!slots_[v].host && !slots_[v].constant)
      need[Root(v)] = std::max(need[Root(v)], offset(v) + slots_[v].desc.get_size());
  // Greedy reuse in step order: a value takes the smallest free buffer that fits, else grows
  // the largest free one, else gets a new one.
  std::vector<size_t> size;
  std::vector<bool> busy;
  std::vector<int> buffer_of(n, -1);
  std::vector<std::vector<int>> starts(steps_.size() + 1), ends(steps_.size() + 1);
  for (int r = 0; r < n; ++r) {
    if (first[r] == kUnused || need[r] == 0 || Root(r) != r) continue;
    starts[first[r] + 1].push_back(r);
    if (last[r] < static_cast<int>(steps_.size())) ends[last[r] + 1].push_back(r);
  }
  for (size_t t = 0; t <= steps_.size(); ++t) {
    for (int r : starts[t]) {
      int best = -1, largest = -1;
      for (size_t b = 0; b < size.size(); ++b) {
        if (busy[b]) continue;
        if (size[b] >= need[r] && (best < 0 || size[b] < size[best])) best = static_cast<int>(b);
        if (largest < 0 || size[b] > size[largest]) largest = static_cast<int>(b);
      }
      if (best < 0 && largest >= 0) {
        best = largest;
        size[best] = need[r];
      }
      if (best < 0) {
        best = static_cast<int>(size.size());
        size.push_back(need[r]);
        busy.push_back(false);
      }
      busy[best] = true;
      buffer_of[r] = best;
    }
    for (int r : ends[t]) busy[buffer_of[r]] = false;
  }
  // What crosses kernel boundaries: every activation a step reads or writes, once per step.
  stats_.step_io_bytes = 0;
  for (const Step& st : steps_)
    for (const std::vector<int>* list : {&st.reads, &st.writes})
      for (int v : *list)
        if (!slots_[v].host && !slots_[v].constant)
          stats_.step_io_bytes += static_cast<int64_t>(slots_[v].desc.get_size());
  stats_.activation_bytes = 0;
  for (size_t b = 0; b < size.size(); ++b) {
    size_t bytes = (size[b] + 63) / 64 * 64;
    try {
      buffers_.push_back(NewLargeBuffer(bytes));
    } catch (const std::bad_alloc&) {
      return InternalError("cannot allocate " + std::to_string(bytes) + " bytes");
    }
    stats_.activation_bytes += static_cast<int64_t>(bytes);
  }
  state_.engine = &engine_;
  state_.stream = &stream_;
  state_.mem.resize(n);
  state_.host.resize(n);
  for (int v = 0; v < n; ++v) {
    if (slots_[v].host || slots_[v].constant) continue;
    int b = buffer_of[Root(v)];
    if (b < 0) continue;
    state_.mem[v] =
        memory(slots_[v].desc, engine_, static_cast<char*>(buffers_[b].get()) + offset(v));
  }
  // A float constant that a host step reads (a node whose inputs are all constants but whose
  // output is a graph output is not folded: an Expand of a class token that a model also
  // returns) gets a buffer holding its values; primitives bind their constants themselves.
  for (const Step& st : steps_)
    for (int v : st.reads) {
      const Slot& c = slots_[v];
      if (state_.mem[v] || c.host || !c.constant || c.constant->elem_type != kFloat) continue;
      const std::vector<float>& values = c.constant->f32.Floats();
      try {
        state_.mem[v] = memory(PlainDesc(c.dims), engine_);
      } catch (const dnnl::error& e) {
        return InternalError("constant '" + c.name + "': " + e.what());
      }
      if (state_.mem[v].get_desc().get_size() != values.size() * sizeof(float))
        return InternalError("constant '" + c.name + "': size");
      std::memcpy(state_.mem[v].get_data_handle(), values.data(), values.size() * sizeof(float));
    }
  for (Step& s : steps_) {
    std::unordered_map<int, memory> args = s.fixed_args;
    for (auto [arg, v] : s.slot_args) {
      if (!state_.mem[v]) return InternalError("step '" + s.name + "' reads an unplanned value");
      auto view = s.arg_views.find(arg);
      args[arg] = view == s.arg_views.end()
                      ? state_.mem[v]
                      : memory(view->second, engine_, state_.mem[v].get_data_handle());
    }
    args_.push_back(std::move(args));
  }
  for (int v : graph_->outputs()) {
    const Slot& s = slots_[v];
    if (s.host || s.constant || IsPlain(s.desc)) {
      output_reorders_.push_back(std::nullopt);
    } else {
      try {
        output_reorders_.push_back(dnnl::reorder(
            dnnl::reorder::primitive_desc(engine_, s.desc, engine_, PlainDesc(s.dims))));
      } catch (const dnnl::error& e) {
        return InternalError("output '" + s.name + "': no oneDNN reorder from its storage (" +
                             std::to_string(s.desc.data.ndims) + " dims, type " +
                             std::to_string(static_cast<int>(s.desc.data_type())) + ", " +
                             std::to_string(s.desc.get_size()) + " bytes) to row-major float32 " +
                             DimsToString(s.dims) + ": " + e.what());
      }
    }
  }
  return Status::Ok();
}

Status DnnlPrepared::RunStep(size_t i) {
  Step& s = steps_[i];
  if (s.primitive) {
    s.primitive->execute(stream_, args_[i]);
    return Status::Ok();
  }
  stream_.wait();
  return s.host(state_);
}

Status DnnlPrepared::BindInputs(const std::vector<HostTensor>& inputs) {
  const auto& gin = graph_->inputs();
  if (inputs.size() != gin.size())
    return InvalidArgument("the graph has " + std::to_string(gin.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Slot& s = slots_[gin[k]];
    if (inputs[k].dims != s.dims && !(s.host && graph_->value(gin[k]).Accepts(inputs[k].dims)))
      return InvalidArgument("input '" + s.name + "' expects shape " + DimsToString(s.dims) +
                             ", got " + DimsToString(inputs[k].dims));
    if (inputs[k].elem_type != s.elem_type)
      return InvalidArgument("input '" + s.name + "' expects element type " +
                             ElemTypeName(s.elem_type) + ", got " +
                             ElemTypeName(inputs[k].elem_type));
    if (s.host) {
      state_.host[gin[k]] = std::make_shared<const HostTensor>(inputs[k]);
    } else if (state_.mem[gin[k]]) {
      std::memcpy(state_.mem[gin[k]].get_data_handle(), inputs[k].f32.data(),
                  inputs[k].f32.size() * sizeof(float));
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<HostTensor>> DnnlPrepared::Run(const std::vector<HostTensor>& inputs) {
  ThreadScope threads(num_threads_);
  VERISUB_RETURN_IF_ERROR(BindInputs(inputs));
  try {
    for (size_t i = 0; i < steps_.size(); ++i) {
      Status st = RunStep(i);
      if (!st.ok()) return st;
    }
    stream_.wait();
  } catch (const dnnl::error& e) {
    return InternalError(std::string("oneDNN: ") + e.what());
  }
  std::vector<HostTensor> out;
  const auto& gout = graph_->outputs();
  for (size_t k = 0; k < gout.size(); ++k) {
    const Slot& s = slots_[gout[k]];
    if (s.constant) {
      out.push_back(*s.constant);
      continue;
    }
    if (s.host) {
      if (!state_.host[gout[k]]) return InternalError("output '" + s.name + "' was not computed");
      out.push_back(*state_.host[gout[k]]);
      continue;
    }
    HostTensor t;
    t.elem_type = kFloat;
    t.dims = s.dims;
    t.f32.resize(CountElements(s.dims));
    if (output_reorders_[k]) {
      memory dst(PlainDesc(s.dims), engine_, t.f32.data());
      output_reorders_[k]->execute(stream_, state_.mem[gout[k]], dst);
      stream_.wait();
    } else {
      std::memcpy(t.f32.data(), state_.mem[gout[k]].get_data_handle(),
                  t.f32.size() * sizeof(float));
    }
    out.push_back(std::move(t));
  }
  return out;
}

StatusOr<double> DnnlPrepared::TimeNode(int node, int runs) {
  std::vector<size_t> mine;
  for (size_t i = 0; i < steps_.size(); ++i)
    if (!steps_[i].is_reorder &&
        std::find(steps_[i].nodes.begin(), steps_[i].nodes.end(), node) != steps_[i].nodes.end())
      mine.push_back(i);
  if (mine.empty()) return NotFound("no kernel computes node " + std::to_string(node));
  ThreadScope threads(num_threads_);
  std::vector<double> times;
  try {
    for (int r = 0; r < std::max(runs, 1); ++r) {
      auto start = std::chrono::steady_clock::now();
      for (size_t i : mine) VERISUB_RETURN_IF_ERROR(RunStep(i));
      stream_.wait();
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  } catch (const dnnl::error& e) {
    return InternalError(std::string("oneDNN: ") + e.what());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

StatusOr<std::vector<StepProfile>> DnnlPrepared::Profile(int runs, bool alone) {
  ThreadScope threads(num_threads_);
  runs = std::max(runs, 1);
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<StepProfile> out(steps_.size());
  state_.profiling = true;
  struct Reset {
    RunState& st;
    ~Reset() { st.profiling = false; }
  } reset{state_};
  try {
    // In sequence: `runs` whole runs on the buffers of the last Run, each step timed where it
    // stands, so the step pays for what its predecessors left in (or evicted from) the caches.
    std::vector<std::vector<double>> in_sequence(steps_.size());
    // Host steps that ran a node's reference kernel (the others ran a kernel of run-time shape,
    // computed in place or renamed).
    std::vector<char> ran_reference(steps_.size(), 0);
    for (int r = 0; r < runs; ++r)
      for (size_t i = 0; i < steps_.size(); ++i) {
        state_.ran_reference_kernel = false;
        const auto start = Clock::now();
        VERISUB_RETURN_IF_ERROR(RunStep(i));
        stream_.wait();
        in_sequence[i].push_back(seconds(start, Clock::now()));
        ran_reference[i] |= state_.ran_reference_kernel;
      }
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& st = steps_[i];
      StepProfile& p = out[i];
      p.name = st.name;
      p.nodes = static_cast<int>(st.nodes.size());
      p.members = st.nodes;
      p.reference = st.reference && ran_reference[i];
      p.kind = !st.kind.empty()   ? st.kind
               : st.is_reorder    ? "reorder"
               : st.nodes.empty() ? "?"
                                  : graph_->node(st.nodes.front()).KindName();
      p.seconds = median(in_sequence[i]);
    }
    if (!alone) return out;
    // Alone: one more pass in order, each step run again and again where it stands, on the values
    // the steps before it just computed. A step that writes over an input (in place) gets that
    // input back before each run, untimed, so that it leaves one run's result: an Exp run thrice
    // over itself would leave exp(exp(exp(x))) to an index computed after it.
    std::vector<double> by_itself;
    for (size_t i = 0; i < steps_.size(); ++i) {
      std::vector<std::pair<void*, std::vector<char>>> saved;
      for (int w : InPlaceWrites(i)) {
        const memory& m = state_.mem[w];
        const char* data = static_cast<const char*>(m.get_data_handle());
        saved.emplace_back(m.get_data_handle(),
                           std::vector<char>(data, data + m.get_desc().get_size()));
      }
      by_itself.clear();
      for (int r = 0; r < runs; ++r) {
        for (const auto& [where, bytes] : saved) std::memcpy(where, bytes.data(), bytes.size());
        const auto start = Clock::now();
        VERISUB_RETURN_IF_ERROR(RunStep(i));
        stream_.wait();
        by_itself.push_back(seconds(start, Clock::now()));
      }
      out[i].alone_seconds = median(by_itself);
    }
  } catch (const dnnl::error& e) {
    return InternalError(std::string("oneDNN: ") + e.what());
  }
  return out;
}

std::vector<int> DnnlPrepared::InPlaceWrites(size_t i) const {
  std::vector<int> out;
  const Step& st = steps_[i];
  for (int w : st.writes) {
    if (!state_.mem[w]) continue;
    for (int r : st.reads)
      if (Root(r) == Root(w)) {
        out.push_back(w);
        break;
      }
  }
  return out;
}

}  // namespace verisub::runtime::dnnl_backend
