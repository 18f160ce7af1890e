// The analytic cost model.
#include "runtime/cost/analytic_cost.h"

#include <algorithm>

#include "specs/registry.h"

namespace verisub::runtime {
namespace {

// In double: a product of dims that overflows int64 (a [1,3,2^31,2^31] tensor made the cost
// negative) is only a large cost.
double Elements(const specs::Shape& s) {
  double n = 1;
  for (int i = 0; i < s.rank; ++i) n *= static_cast<double>(s.dims[i]);
  return n;
}

double AllBytes(const OpCostQuery& q) {
  double n = 0;
  for (const specs::Shape& s : q.inputs) n += Elements(s);
  for (const specs::Shape& s : q.outputs) n += Elements(s);
  return n * q.bytes_per_element;
}

}  // namespace

std::string OpCostQuery::Key() const {
  std::string k;
  if (is_opaque()) {
    k = "opaque:" + opaque_type;
  } else {
    const specs::OpSpec& spec = specs::GetOp(op);
    k = spec.name + "[";
    for (size_t i = 0; i < spec.params.size(); ++i)
      k += (i ? "," : "") + spec.params[i].name + "=" +
           specs::FormatParamValue(spec.params[i], params);
    k += "]";
  }
  for (size_t i = 0; i < inputs.size(); ++i) k += (i ? "," : " ") + inputs[i].ToString();
  k += " ->";
  for (size_t i = 0; i < outputs.size(); ++i) k += (i ? "," : " ") + outputs[i].ToString();
  if (weight_inputs) k += " w=" + std::to_string(weight_inputs);
  return k + " @" + layout;
}

StatusOr<DeviceDescription> DevicePreset(const std::string& name) {
  // Sustained (not peak-sheet) figures for float32.
  if (name == "cpu-2core") return DeviceDescription{name, 100, 15, 2};
  if (name == "v100") return DeviceDescription{name, 14000, 800, 5};
  if (name == "h100") return DeviceDescription{name, 50000, 2800, 4};
  return InvalidArgument("unknown device preset '" + name + "' (known: cpu-2core, v100, h100)");
}

StatusOr<OpWork> EstimateWork(const OpCostQuery& q) {
  OpWork w;
  w.bytes = AllBytes(q);
  if (q.is_opaque()) {
    // Unknown arithmetic: assume memory-bound, one operation per output element.
    for (const specs::Shape& s : q.outputs) w.flops += Elements(s);
    return w;
  }
  const specs::OpSpec& spec = specs::GetOp(q.op);
  if (static_cast<int>(q.inputs.size()) != spec.num_inputs ||
      static_cast<int>(q.outputs.size()) != spec.num_outputs)
    return InvalidArgument("cost query for '" + spec.name + "' has the wrong number of shapes");
  if (spec.is_constant || spec.free_at_inference) {
    w.flops = w.bytes = 0;
    w.launches_kernel = false;
    return w;
  }
  w.flops =
      spec.flops ? spec.flops(q.params, q.inputs.data(), q.outputs.data()) : Elements(q.outputs[0]);
  return w;
}

double MinFlops(const OpCostQuery& q) {
  if (q.is_opaque() || q.inputs.size() < 2 || q.outputs.empty()) return 0;
  const specs::Shape& a = q.inputs[0];
  const specs::Shape& b = q.inputs[1];
  const specs::Shape& y = q.outputs[0];
  switch (q.op) {
    case specs::OpKind::kMatmul:  // [..., M, K] x [..., K, N]
      return a.rank < 1 ? 0 : 2 * Elements(y) * static_cast<double>(a.dims[a.rank - 1]);
    case specs::OpKind::kConv2d:
    case specs::OpKind::kConv2dBias:  // the kernel [OC, IC / group, KH, KW]
      return b.rank != 4 ? 0 : 2 * Elements(y) * static_cast<double>(b.dims[1]);
    default:
      return 0;
  }
}

StatusOr<double> AnalyticCostModel::OpTimeUs(const OpCostQuery& q) const {
  auto work = EstimateWork(q);
  if (!work.ok()) return work.status();
  if (!work->launches_kernel) return 0.0;
  double compute_us = work->flops / (device_.peak_gflops * 1e3);
  double memory_us = work->bytes / (device_.bandwidth_gbps * 1e3);
  return std::max(compute_us, memory_us) + device_.launch_overhead_us;
}

}  // namespace verisub::runtime
