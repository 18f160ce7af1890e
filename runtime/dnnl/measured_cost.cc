// The measured CPU cost model (see measured_cost.h).
#include "runtime/dnnl/measured_cost.h"

#include <algorithm>
#include <chrono>
#include <fstream>

#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/dnnl/fusion.h"
#include "runtime/spec_graph_builder.h"
#include "specs/registry.h"

namespace verisub::runtime {
namespace {

// Instances larger than this (inputs and outputs together) are estimated, not run: measuring must
// never be what exhausts a machine's memory.
constexpr double kMaxMeasuredBytes = 2.0 * (1 << 30);

std::string IsaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "isa" + std::to_string(static_cast<int>(isa));
  }
}

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

}  // namespace

StatusOr<MissingCost> ParseMissingCost(const std::string& name) {
  if (name == "measure") return MissingCost::kMeasure;
  if (name == "analytic") return MissingCost::kAnalytic;
  if (name == "error") return MissingCost::kError;
  return InvalidArgument("unknown policy for missing costs '" + name +
                         "' (known: measure, analytic, error)");
}

CostTableHeader ThisMachine(int threads) {
  const dnnl_version_t* v = dnnl_version();
  CostTableHeader h;
  h.engine = "onednn";
  h.engine_version =
      std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  h.isa = IsaName(dnnl::get_effective_cpu_isa());
  h.cpu_model = CpuModel();
  h.threads = threads;
  return h;
}

MeasuredCpuCostModel::MeasuredCpuCostModel(MeasureOptions options, CostTable table)
    : options_(options),
      backend_(MakeDnnlBackend()),
      estimate_(*DevicePreset("cpu-2core")),
      table_(std::move(table)) {}

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
  auto out = (*prepared)->Run(feeds);
  if (!out.ok()) return out.status().WithContext("measuring " + q.Key());
  // The run above warmed the kernel up; a first timed run sizes the repetitions. A kernel slower
  // than the whole budget (a reference fallback) keeps that one sample.
  auto first = (*prepared)->TimeNode(0, 1);
  if (!first.ok()) return first.status().WithContext("measuring " + q.Key());
  if (*first >= options_.target_seconds) {
    if (runs) *runs = 1;
    return *first * 1e6;
  }
  if (options_.warmup_runs > 1) {
    auto warm = (*prepared)->TimeNode(0, options_.warmup_runs - 1);
    if (!warm.ok()) return warm.status().WithContext("measuring " + q.Key());
  }
  int n = options_.max_runs;
  if (*first > 0)
    n = static_cast<int>(std::clamp(options_.target_seconds / *first,
                                    static_cast<double>(options_.min_runs),
                                    static_cast<double>(options_.max_runs)));
  auto t = (*prepared)->TimeNode(0, n);
  if (!t.ok()) return t.status().WithContext("measuring " + q.Key());
  if (runs) *runs = n;
  return *t * 1e6;
}

StatusOr<double> MeasuredCpuCostModel::OpTimeUs(const OpCostQuery& q) const {
  if (!q.is_opaque()) {
    const specs::OpSpec& spec = specs::GetOp(q.op);
    if (spec.is_constant || spec.free_at_inference) return 0.0;
  }
  // Opaque operators (no attributes to rebuild them from), other element types and instances too
  // large to run are estimated; the search never changes opaque nodes, so only their presence
  // matters.
  const bool measurable =
      !q.is_opaque() && q.bytes_per_element == 4 && Bytes(q) <= kMaxMeasuredBytes;
  const std::string key = q.Key();
  std::lock_guard<std::mutex> lock(mu_);
  if (measurable) {
    if (auto t = table_.Find(key)) {
      ++stats_.hits;
      return *t;
    }
  }
  if (!measurable || options_.missing == MissingCost::kAnalytic) {
    ++stats_.estimated;
    return estimate_.OpTimeUs(q);
  }
  if (options_.missing == MissingCost::kError)
    return NotFound("the cost table has no entry for '" + key +
                    "' (measure it: --cost-missing measure)");
  const auto start = std::chrono::steady_clock::now();
  int runs = 0;
  auto t = Measure(q, &runs);
  stats_.measure_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!t.ok()) {
    // A kernel that cannot be built for these shapes is priced as the reference would be: the
    // analytic estimate (and not cached, so a later build can measure it).
    ++stats_.estimated;
    return estimate_.OpTimeUs(q);
  }
  ++stats_.measured;
  table_.Insert(key, *t, runs);
  return *t;
}

std::vector<char> MeasuredCpuCostModel::AbsorbedNodes(const Graph& g) const {
  std::vector<char> absorbed(g.num_nodes(), 0);
  dnnl_backend::FusionPlan plan = dnnl_backend::PlanFusion(g);
  for (const dnnl_backend::Group& grp : plan.groups)
    for (int m : grp.members)
      if (m != grp.kernel_node) absorbed[m] = 1;
  return absorbed;
}

CostTable MeasuredCpuCostModel::table() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_;
}

MeasuredCpuCostModel::Stats MeasuredCpuCostModel::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace verisub::runtime
