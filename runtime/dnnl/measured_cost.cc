// The measured CPU cost model (see measured_cost.h).
#include "runtime/dnnl/measured_cost.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>

#include "base/process_stats.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/dnnl/prepared_model.h"
#include "runtime/spec_graph_builder.h"
#include "specs/layout.h"
#include "specs/ops/slice.h"
#include "specs/ops/split.h"
#include "specs/registry.h"

namespace verisub::runtime {
namespace {

// Instances larger than this (inputs and outputs together) are estimated, not run: measuring must
// never be what exhausts a machine's memory.
constexpr double kMaxMeasuredBytes = 2.0 * (1 << 30);

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t b = line.find_first_not_of(" \t", colon + 1);
    return b == std::string::npos ? "unknown" : line.substr(b);
  }
  return "unknown";
}

double Bytes(const OpCostQuery& q) {
  double n = 0;
  for (const auto* shapes : {&q.inputs, &q.outputs})
    for (const specs::Shape& s : *shapes) {
      double e = q.bytes_per_element;
      for (int i = 0; i < s.rank; ++i) e *= static_cast<double>(s.dims[i]);
      n += e;
    }
  return n;
}

// Float data in [0.1, 1): positive, so sqrt, log and reciprocals stay finite (NaNs can slow
// kernels down). A hash of the index, not a random engine: a weight of 37M elements (a merged
// convolution) fills in milliseconds.
HostTensor FillTensor(const std::vector<int64_t>& dims, uint32_t seed) {
  HostTensor t;
  t.elem_type = kFloat;
  t.dims = dims;
  t.f32.resize(CountElements(dims));
  for (size_t i = 0; i < t.f32.size(); ++i) {
    uint32_t h = (static_cast<uint32_t>(i) + seed) * 2654435761u;
    t.f32[i] = 0.1f + 0.9f * static_cast<float>(h >> 8) / 16777216.f;
  }
  return t;
}

// Timed runs after a first one of `first_seconds`: enough to fill the target time, within
// [min_runs, max_runs] (max_runs when the first run was too short to measure).
int TimedRuns(const MeasureOptions& o, double first_seconds) {
  if (first_seconds <= 0) return o.max_runs;
  return static_cast<int>(std::clamp(o.target_seconds / first_seconds,
                                     static_cast<double>(o.min_runs),
                                     static_cast<double>(o.max_runs)));
}

// A split or slice whose every output is a contiguous piece of its input stored plain (a channel
// split of one image: the outputs of convolutions merged along output channels, ShuffleNet's
// halves) runs as views of the input's buffer inside a model (data.cc, SubTensorInPlace), though
// timed alone, its outputs being graph outputs, it would be a copy. The layout DP prices the
// pieces per layout (rewriter/layout_costs.h, SubTensorIsAView).
bool PiecesAreViews(const OpCostQuery& q) {
  if ((q.op != specs::OpKind::kSplit && q.op != specs::OpKind::kSlice) || q.inputs.size() != 1)
    return false;
  const bool slice = q.op == specs::OpKind::kSlice;
  std::vector<std::vector<int64_t>> pieces;
  for (const specs::Shape& y : q.outputs) pieces.push_back(y.ToVector());
  return specs::PiecesAreContiguous(
      q.inputs[0].ToVector(), pieces,
      q.params[slice ? specs::ops::kSliceAxis : specs::ops::kSplitAxis],
      slice ? q.params[specs::ops::kSliceStart] : 0, specs::Layout::kPlain);
}

}  // namespace

CostTableHeader ThisMachine(int threads) {
  const dnnl_version_t* v = dnnl_version();
  CostTableHeader h;
  h.engine = "onednn";
  h.engine_version =
      std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  h.isa = dnnl_backend::CpuIsaName();
  h.cpu_model = CpuModel();
  h.threads = threads;
  h.backend_revision = kDnnlBackendRevision;
  return h;
}

MeasuredCpuCostModel::MeasuredCpuCostModel(MeasureOptions options, CostTable table)
    : options_(options),
      backend_(MakeDnnlBackend()),
      estimate_(*DevicePreset("cpu-2core")),
      measured_(options.missing, std::move(table)) {}

MeasuredCpuCostModel::~MeasuredCpuCostModel() = default;

std::string MeasuredCpuCostModel::Name() const {
  return "cpu-measured:onednn:t" + std::to_string(options_.threads);
}

StatusOr<double> MeasuredCpuCostModel::Measure(const OpCostQuery& q, int* runs) const {
  if (q.is_opaque())
    return InvalidArgument("cannot measure opaque operator '" + q.opaque_type + "'");
  const specs::OpSpec& spec = specs::GetOp(q.op);
  if (static_cast<int>(q.inputs.size()) != spec.num_inputs ||
      static_cast<int>(q.outputs.size()) != spec.num_outputs)
    return InvalidArgument("cost query for '" + spec.name + "' has the wrong number of shapes");
  SpecGraphBuilder b;
  std::vector<int> ins;
  std::vector<HostTensor> feeds;
  for (size_t k = 0; k < q.inputs.size(); ++k) {
    std::vector<int64_t> dims = q.inputs[k].ToVector();
    const std::string name = "in" + std::to_string(k);
    if (q.weight_inputs >> k & 1) {
      ins.push_back(b.Weight(name, std::make_shared<const HostTensor>(FillTensor(dims, 17 + k))));
    } else {
      ins.push_back(b.Input(name, dims));
      feeds.push_back(FillTensor(dims, 101 + k));
    }
  }
  for (int v : b.Op(q.op, q.params, ins)) b.Output(v);
  auto g = b.Finish();
  if (!g.ok()) return g.status().WithContext("measuring " + q.Key());
  for (size_t k = 0; k < q.outputs.size(); ++k)
    if (g->value(g->outputs()[k]).dims != q.outputs[k].ToVector())
      return InvalidArgument("measuring " + q.Key() + ": output " + std::to_string(k) + " is " +
                             DimsToString(g->value(g->outputs()[k]).dims));
  PrepareOptions po;
  po.num_threads = options_.threads;
  auto prepared = backend_->Prepare(*g, po);
  if (!prepared.ok()) return prepared.status().WithContext("measuring " + q.Key());
  auto t = TimePrepared(**prepared, feeds, runs, 0);
  if (!t.ok()) return t.status().WithContext("measuring " + q.Key());
  return *t * 1e6;
}

StatusOr<double> MeasuredCpuCostModel::TimePrepared(PreparedModel& m,
                                                    const std::vector<HostTensor>& feeds, int* runs,
                                                    int node) const {
  auto out = m.Run(feeds);
  if (!out.ok()) return out.status();
  // The run above warmed the kernel up; a first timed run sizes the repetitions. A kernel slower
  // than the whole budget (a reference fallback) keeps that one sample.
  auto first = m.TimeNode(node, 1);
  if (!first.ok()) return first.status();
  if (*first >= options_.target_seconds) {
    if (runs) *runs = 1;
    return *first;
  }
  if (options_.warmup_runs > 1) {
    auto warm = m.TimeNode(node, options_.warmup_runs - 1);
    if (!warm.ok()) return warm.status();
  }
  const int n = TimedRuns(options_, *first);
  auto t = m.TimeNode(node, n);
  if (!t.ok()) return t.status();
  if (runs) *runs = n;
  return *t;
}

StatusOr<double> MeasuredCpuCostModel::NodeInLayoutUs(
    const Graph& g, const dnnl_backend::FusionPlan& plan, int node, specs::Layout output_layout,
    const std::string& key, bool bf16, std::optional<specs::Layout> input_layout) const {
  // The node's fusion group, as the backend would run it in `g`.
  std::vector<int> members{node};
  int group_output = g.node(node).outputs.empty() ? kNoValue : g.node(node).outputs[0];
  const int gi = plan.group_of[node];
  if (gi >= 0 && plan.groups[gi].kernel_node == node) {
    members = plan.groups[gi].members;
    group_output = plan.groups[gi].output;
  }
  std::sort(members.begin(), members.end());
  // The group alone: weights stay weights, values from outside become graph inputs, the group's
  // output is the graph output.
  Graph one;
  std::vector<const std::vector<int64_t>*> feed_dims;  // filled only when a measurement runs
  std::vector<int> id(g.num_values(), -1);
  std::string members_key;
  double bytes = 0;
  auto add_value = [&](int v) {
    Value val = g.value(v);
    val.input_default.reset();
    id[v] = one.AddValue(std::move(val));
    return id[v];
  };
  for (int m : members) {
    const Node& n = g.node(m);
    Node copy = n;
    copy.inputs.clear();
    copy.outputs.clear();
    for (int v : n.inputs) {
      if (v == kNoValue) {
        copy.inputs.push_back(kNoValue);
        continue;
      }
      if (id[v] < 0) {
        const Value& val = g.value(v);
        const bool weight = val.constant != nullptr;
        if (!val.StaticShape() || (!weight && val.elem_type != kFloat))
          return InvalidArgument("node '" + n.name + "': input '" + val.name + "' cannot be fed");
        bytes += 4.0 * static_cast<double>(CountElements(val.dims));
        add_value(v);
        if (!weight) {
          feed_dims.push_back(&val.dims);
          one.mutable_inputs().push_back(id[v]);
        }
      }
      copy.inputs.push_back(id[v]);
    }
    for (int v : n.outputs) {
      if (v == kNoValue) {
        copy.outputs.push_back(kNoValue);
        continue;
      }
      if (!g.value(v).StaticShape())
        return InvalidArgument("node '" + n.name + "': output shape unknown");
      copy.outputs.push_back(add_value(v));
    }
    if (m != node) members_key += " +" + n.KindName();
    one.AddNode(std::move(copy));
  }
  if (group_output == kNoValue || id[group_output] < 0)
    return InvalidArgument("node '" + g.node(node).name + "': no output");
  one.mutable_outputs().push_back(id[group_output]);
  bytes += 4.0 * static_cast<double>(CountElements(g.value(group_output).dims));
  std::vector<specs::Layout> layouts(one.num_values(), specs::Layout::kPlain);
  layouts[id[group_output]] = output_layout;
  const int first_input = g.node(node).inputs.empty() ? kNoValue : g.node(node).inputs[0];
  if (input_layout && first_input != kNoValue && id[first_input] >= 0)
    layouts[id[first_input]] = *input_layout;
  // TimeNode of any member times the group's kernel: time `node`, at its place in `one`.
  int timed = 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == node) timed = static_cast<int>(i);
  std::vector<int32_t> storage;
  if (bf16) {
    storage.assign(one.num_values(), 0);
    for (int v = 0; v < one.num_values(); ++v)
      if (!one.value(v).constant && one.value(v).elem_type == kFloat) storage[v] = kBfloat16;
  }
  const std::string full_key =
      key + members_key + " @out=" + std::string(specs::LayoutName(output_layout)) +
      (input_layout ? " @in=" + std::string(specs::LayoutName(*input_layout)) : "") +
      (bf16 ? " @bf16" : "");
  const double estimate = bytes / (15.0 * 1e3);  // cpu-2core bandwidth: a pass over memory
  if (bytes > kMaxMeasuredBytes) return estimate;
  return Cached(
      full_key,
      [&](int* runs) -> StatusOr<double> {
        PrepareOptions po;
        po.num_threads = options_.threads;
        po.layouts = layouts;
        po.storage_types = storage;
        auto prepared = backend_->Prepare(one, po);
        if (!prepared.ok()) return prepared.status();
        std::vector<HostTensor> feeds;
        for (const auto* dims : feed_dims)
          feeds.push_back(FillTensor(*dims, 101 + static_cast<uint32_t>(feeds.size())));
        return TimePrepared(**prepared, feeds, runs, timed);
      },
      estimate);
}

StatusOr<double> MeasuredCpuCostModel::ReorderUs(const std::vector<int64_t>& dims,
                                                 specs::Layout from, specs::Layout to,
                                                 bool from_bf16, bool to_bf16) const {
  if (from == to && from_bf16 == to_bf16) return 0.0;
  const double bytes =
      ((from_bf16 ? 2.0 : 4.0) + (to_bf16 ? 2.0 : 4.0)) * static_cast<double>(CountElements(dims));
  const std::string key = "reorder " + DimsToString(dims) + " " +
                          std::string(specs::LayoutName(from)) + (from_bf16 ? ":bf16" : "") + "->" +
                          std::string(specs::LayoutName(to)) + (to_bf16 ? ":bf16" : "");
  // A reorder in the table was built once, so both layouts exist for these dims: answered
  // without making oneDNN's descriptors (the layout DP asks thousands of times per graph).
  if (bytes <= kMaxMeasuredBytes)
    if (auto t = measured_.Lookup(key)) return *t;
  using dt = dnnl::memory::data_type;
  auto src = dnnl_backend::LayoutDesc(dims, from, from_bf16 ? dt::bf16 : dt::f32),
       dst = dnnl_backend::LayoutDesc(dims, to, to_bf16 ? dt::bf16 : dt::f32);
  if (!src || !dst)
    return InvalidArgument("no " + std::string(specs::LayoutName(!src ? from : to)) +
                           " layout for " + DimsToString(dims));
  if (bytes > kMaxMeasuredBytes) return bytes / (15.0 * 1e3);
  return Cached(
      key,
      [&](int* runs) -> StatusOr<double> {
        try {
          // The thread count first: oneDNN sizes a primitive's parallel work when it is made,
          // and a reorder made for two threads and run on one took 8 ms instead of 12 us.
          dnnl_backend::ThreadScope threads(options_.threads);
          dnnl::engine engine(dnnl::engine::kind::cpu, 0);
          dnnl::stream stream(engine);
          dnnl::memory a(*src, engine), b(*dst, engine);
          std::memset(a.get_data_handle(), 0, src->get_size());
          dnnl::reorder r(dnnl::reorder::primitive_desc(engine, *src, engine, *dst));
          auto once = [&] {
            auto t0 = std::chrono::steady_clock::now();
            r.execute(stream, a, b);
            stream.wait();
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          };
          once();  // warm-up
          const double first = once();
          const int n = TimedRuns(options_, first);
          std::vector<double> times;
          for (int i = 0; i < n; ++i) times.push_back(once());
          std::sort(times.begin(), times.end());
          if (runs) *runs = n;
          return times[times.size() / 2];
        } catch (const dnnl::error& e) {
          return InternalError(std::string("oneDNN reorder: ") + e.what());
        }
      },
      bytes / (15.0 * 1e3));
}

StatusOr<double> MeasuredCpuCostModel::OpTimeUs(const OpCostQuery& q) const {
  if (!q.is_opaque()) {
    const specs::OpSpec& spec = specs::GetOp(q.op);
    if (spec.is_constant || spec.free_at_inference || PiecesAreViews(q)) return 0.0;
  }
  auto estimate = estimate_.OpTimeUs(q);
  if (!estimate.ok()) return estimate.status();
  // Opaque operators (no attributes to rebuild them from), other element types and instances too
  // large to run are estimated; the search never changes opaque nodes, so only their presence
  // matters.
  if (q.is_opaque() || q.bytes_per_element != 4 || Bytes(q) > kMaxMeasuredBytes) {
    measured_.CountEstimate();
    return *estimate;
  }
  // A kernel that cannot be built for these shapes is priced as estimated (and not cached, so a
  // later build can measure it).
  return Cached(
      q.Key(),
      [&](int* runs) -> StatusOr<double> {
        auto t = Measure(q, runs);
        if (!t.ok()) return t.status();
        return *t * 1e-6;
      },
      *estimate);
}

double MeasuredCpuCostModel::LowerBoundUs(const OpCostQuery& q) const {
  if (q.is_opaque() || q.bytes_per_element != 4) return 0;
  constexpr double kMaxFlopsPerThread = 64 * 6e9;
  return MinFlops(q) / (kMaxFlopsPerThread * base::ThreadsOrOnePerCore(options_.threads)) * 1e6;
}

std::vector<char> MeasuredCpuCostModel::AbsorbedNodes(const Graph& g) const {
  std::vector<char> absorbed(g.num_nodes(), 0);
  dnnl_backend::FusionPlan plan = dnnl_backend::PlanFusion(g);
  for (const dnnl_backend::Group& grp : plan.groups)
    for (int m : grp.members)
      if (m != grp.kernel_node) absorbed[m] = 1;
  return absorbed;
}

CostTable MeasuredCpuCostModel::table() const { return measured_.table(); }

MeasuredCpuCostModel::Stats MeasuredCpuCostModel::stats() const { return measured_.stats(); }

}  // namespace verisub::runtime
