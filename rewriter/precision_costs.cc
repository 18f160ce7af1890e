// Reduced-precision costs, emulated execution and the accuracy budget: see precision_costs.h.
#include "rewriter/precision_costs.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "rewriter/graph_cost.h"
#include "rewriter/verify_outputs.h"
#include "runtime/executor.h"

namespace verisub::rewriter {
namespace {

using runtime::Graph;
using runtime::HostTensor;
using runtime::kNoValue;
using runtime::Node;

bool ComputeBound(const Node& n) {
  if (!n.op) return false;
  switch (*n.op) {
    case specs::OpKind::kConv2d:
    case specs::OpKind::kConv2dBias:
    case specs::OpKind::kMatmul:
      return true;
    default:
      return false;
  }
}

// Float values an integer or a boolean is made of (a Cast to an index type, an ArgMax, a
// comparison, an NMS's boxes), and the values they are computed from through anything but a
// convolution or a matmul (whose reduced inputs are the point): rounded, they would pick other
// rows or other branches, an error no output norm bounds (an embedding's index computed from
// the input, rounded to bfloat16, read one row past its table).
std::vector<int> ExactValues(const Graph& g) {
  const std::vector<int> producer = g.Producers();
  auto is_float = [&](int v) {
    return v != kNoValue && runtime::IsFloatType(g.value(v).elem_type);
  };
  std::vector<char> exact(g.num_values(), 0);
  std::vector<int> stack;
  auto mark_inputs = [&](const Node& n) {  // the float, non-constant inputs not marked yet
    for (int v : n.inputs)
      if (is_float(v) && !g.value(v).constant && !exact[v]) {
        exact[v] = 1;
        stack.push_back(v);
      }
  };
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    // Shape and Size read the dims only.
    if (n.op_type != "Shape" && n.op_type != "Size" &&
        std::any_of(n.outputs.begin(), n.outputs.end(),
                    [&](int v) { return v != kNoValue && !is_float(v); }))
      mark_inputs(n);
  }
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (producer[v] >= 0 && !ComputeBound(g.node(producer[v]))) mark_inputs(g.node(producer[v]));
  }
  std::vector<int> out;
  for (int v = 0; v < g.num_values(); ++v)
    if (exact[v]) out.push_back(v);
  return out;
}

HostTensor RoundedToBfloat16(const HostTensor& t) {
  std::vector<double> x = t.ToDoubles();
  for (double& v : x) v = runtime::RoundToBfloat16(v);
  return HostTensor::FromDoubles(t.elem_type, t.dims, x);
}

}  // namespace

StatusOr<PrecisionFactors> ParsePrecisionFactors(const std::string& text) {
  PrecisionFactors f;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    double* field = nullptr;
    const std::string key = item.substr(0, eq);
    if (key == "compute") field = &f.compute_factor;
    if (key == "memory") field = &f.memory_factor;
    if (key == "cast_gbps") field = &f.cast_gbps;
    if (key == "launch_us") field = &f.cast_launch_us;
    if (!field || eq == std::string::npos)
      return InvalidArgument("precision factors: '" + item +
                             "' is not one of compute=, memory=, cast_gbps=, launch_us=");
    try {
      size_t used = 0;
      *field = std::stod(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      return InvalidArgument("precision factors: '" + item + "' has no number after '='");
    }
    if (!(*field > 0) || !std::isfinite(*field))
      return InvalidArgument("precision factors: '" + item + "' must be positive");
  }
  return f;
}

std::string ReducedPrecisionCosts::Name() const {
  std::ostringstream s;
  s << "synthetic-" << PrecisionName(factors_.precision) << "(compute " << factors_.compute_factor
    << ", memory " << factors_.memory_factor << "):" << base_->Name();
  return s.str();
}

std::optional<double> ReducedPrecisionCosts::FormatKernelCostUs(
    const Graph& g, const Node& node, std::span<const Format> inputs,
    std::span<const Format> outputs) const {
  // Weights and omitted inputs are given plain float32 (converted once at prepare time).
  const std::optional<Precision> precision = DataPrecision(g, node, inputs, outputs);
  if (!precision) return std::nullopt;
  if (*precision == Precision::kF32)
    return LayoutCostSource::FormatKernelCostUs(g, node, inputs, outputs);
  if (*precision != factors_.precision || !node.op) return std::nullopt;
  auto t = base_->KernelCostUs(g, node, LayoutsOf(inputs), LayoutsOf(outputs));
  if (!t) return std::nullopt;
  return *t * (ComputeBound(node) ? factors_.compute_factor : factors_.memory_factor);
}

double ReducedPrecisionCosts::FormatConversionCostUs(const runtime::Value& value, Format from,
                                                     Format to) const {
  if (from == to) return 0;
  double t = from.layout == to.layout ? 0 : base_->ConversionCostUs(value, from.layout, to.layout);
  if (from.precision != to.precision) {
    if (from.precision != factors_.precision && to.precision != factors_.precision)
      return kInfiniteCost;
    const double elements =
        value.StaticShape() ? static_cast<double>(runtime::CountElements(value.dims)) : 0;
    t += elements * (4 + 2) / (factors_.cast_gbps * 1e3) + factors_.cast_launch_us;
  }
  return t;
}

StatusOr<std::vector<HostTensor>> ExecuteInPrecisions(const Graph& g, const LayoutAssignment& a,
                                                      const std::vector<HostTensor>& inputs) {
  if (static_cast<int>(a.value_precisions.size()) != g.num_values() ||
      static_cast<int>(a.node_input_precisions.size()) != g.num_nodes())
    return InvalidArgument("precision emulation: the assignment was made for another graph");
  // Weights read by a node that reads a reduced input: rounded in a copy of the graph.
  Graph rounded = g;
  std::vector<char> done(g.num_values(), 0);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    const auto& p = a.node_input_precisions[i];
    if (std::none_of(p.begin(), p.end(), [](Precision q) { return q == Precision::kBf16; }))
      continue;
    for (int v : n.inputs) {
      if (v == kNoValue || done[v] || !g.value(v).constant ||
          !runtime::IsFloatType(g.value(v).elem_type))
        continue;
      done[v] = 1;
      rounded.mutable_value(v).constant =
          std::make_shared<const HostTensor>(RoundedToBfloat16(*g.value(v).constant));
    }
  }
  runtime::StoreHook store = [&](int v, HostTensor* t) {
    if (a.value_precisions[v] == Precision::kBf16 && runtime::IsFloatType(t->elem_type))
      *t = RoundedToBfloat16(*t);
  };
  return runtime::Execute(rounded, inputs, {}, store);
}

StatusOr<LayoutAssignment> AssignLayoutsWithinBudget(const Graph& g, const LayoutCostSource& costs,
                                                     const LayoutDpOptions& options,
                                                     const LayoutSpaceOptions& space,
                                                     const PrecisionBudget& budget,
                                                     PrecisionReport* report,
                                                     const AssignmentRunner& run) {
  PrecisionReport local;
  PrecisionReport& r = report ? *report : local;
  r = PrecisionReport();
  LayoutSpaceOptions float32_space = space;
  float32_space.precisions.clear();
  VERISUB_ASSIGN_OR_RETURN(LayoutAssignment f32,
                           AssignLayouts(g, costs, options, &r.dp, float32_space));
  const LayoutDpReport f32_dp = r.dp;
  r.float32_cost_us = f32.cost_us;
  r.cost_us = f32.cost_us;
  if (space.precisions.empty()) return f32;
  std::mt19937_64 rng(budget.seed);
  VERISUB_ASSIGN_OR_RETURN(std::vector<HostTensor> inputs, RandomInputs(g, &rng));
  r.measured_on_backend = run != nullptr;
  auto reference = run ? run(f32, inputs) : runtime::Execute(g, inputs);
  if (!reference.ok()) return reference.status().WithContext("precision budget: float32 run");
  r.reference_outputs =
      std::make_shared<const std::vector<HostTensor>>(std::move(reference).value());

  LayoutSpaceOptions trial = space;
  const std::vector<int> exact = ExactValues(g);
  trial.float32_values.insert(trial.float32_values.end(), exact.begin(), exact.end());
  r.exact_values = static_cast<int>(exact.size());
  while (r.rounds < budget.max_rounds) {
    ++r.rounds;
    LayoutDpReport dp;
    VERISUB_ASSIGN_OR_RETURN(LayoutAssignment a, AssignLayouts(g, costs, options, &dp, trial));
    std::vector<int> reduced;  // graph order: producers before consumers
    for (int i = 0; i < g.num_nodes(); ++i)
      for (int v : g.node(i).outputs)
        if (v != kNoValue && a.value_precisions[v] != Precision::kF32) reduced.push_back(v);
    if (reduced.empty()) break;  // nothing reduced: the float32 answer
    auto out = run ? run(a, inputs) : ExecuteInPrecisions(g, a, inputs);
    if (!out.ok()) {  // a kernel refused the reduced values: float32 it is, and why
      r.refused = "the reduced-precision run failed: " + out.status().message();
      break;
    }
    const double error = RelativeOutputError(*out, *r.reference_outputs);
    if (error <= budget.max_error && a.cost_us < f32.cost_us) {
      r.reduced_values = static_cast<int>(reduced.size());
      r.error = error;
      r.cost_us = a.cost_us;
      r.dp = dp;
      return a;
    }
    if (error <= budget.max_error) break;  // within budget but no cheaper: keep float32
    // Over budget: the half nearest the outputs stays float32 from now on.
    const size_t keep = reduced.size() / 2;
    for (size_t k = keep; k < reduced.size(); ++k) trial.float32_values.push_back(reduced[k]);
    r.reverted_values += static_cast<int>(reduced.size() - keep);
  }
  r.dp = f32_dp;
  return f32;
}

}  // namespace verisub::rewriter
