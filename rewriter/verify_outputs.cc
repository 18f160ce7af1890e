// Random-input comparison of two graphs in the reference executor.
#include "rewriter/verify_outputs.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "runtime/executor.h"

namespace verisub::rewriter {

using runtime::Graph;
using runtime::HostTensor;

namespace {

Status Different(VerifyReport* report, const std::string& why) {
  report->outcome = VerifyOutcome::kDifferent;
  return InvalidArgument(why);
}
Status CouldNotRun(VerifyReport* report, const Status& why) {
  report->outcome = VerifyOutcome::kCouldNotRun;
  return why;
}

// The interface of a model: input and output names in order.
Status CompareInterface(const Graph& a, const Graph& b, VerifyReport* report) {
  if (a.inputs().size() != b.inputs().size() || a.outputs().size() != b.outputs().size())
    return Different(report, "the graphs have different numbers of inputs or outputs");
  for (bool inputs : {true, false}) {
    const std::vector<int>& va = inputs ? a.inputs() : a.outputs();
    const std::vector<int>& vb = inputs ? b.inputs() : b.outputs();
    for (size_t k = 0; k < va.size(); ++k) {
      const std::string& x = a.value(va[k]).name;
      const std::string& y = b.value(vb[k]).name;
      if (x != y)
        return Different(report, std::string(inputs ? "input" : "output") + " " +
                                     std::to_string(k) + " is named '" + x + "' originally but '" +
                                     y + "' after optimization");
    }
  }
  return Status::Ok();
}

}  // namespace

double RelativeOutputError(const std::vector<HostTensor>& got,
                           const std::vector<HostTensor>& want) {
  double worst = 0;
  for (size_t k = 0; k < got.size() && k < want.size(); ++k) {
    if (got[k].dims != want[k].dims || !runtime::IsFloatType(want[k].elem_type)) continue;
    std::vector<double> x = got[k].ToDoubles(), y = want[k].ToDoubles();
    double diff = 0, norm = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      diff += (x[i] - y[i]) * (x[i] - y[i]);
      norm += y[i] * y[i];
    }
    double e = std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
    if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
  }
  return worst;
}

OutputAgreement CompareWithReference(const std::vector<HostTensor>& got,
                                     const std::vector<HostTensor>& want) {
  OutputAgreement r;
  r.shapes_match = got.size() == want.size();
  for (size_t k = 0; r.shapes_match && k < got.size(); ++k) {
    r.shapes_match = got[k].dims == want[k].dims;
    if (!r.shapes_match) break;
    std::vector<double> a = got[k].ToDoubles(), b = want[k].ToDoubles();
    double scale = 1, output_abs = 0;
    for (double v : b)
      if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
    for (size_t i = 0; i < a.size(); ++i) {
      double d = std::abs(a[i] - b[i]);
      // A NaN or an infinity on one side only is a mismatch (NaN would compare as no error).
      if (!std::isfinite(a[i]) || !std::isfinite(b[i])) {
        const bool same = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i];
        r.nonfinite_mismatch |= !same;
        d = same ? 0.0 : INFINITY;
      }
      r.max_abs = std::max(r.max_abs, d);
      output_abs = std::max(output_abs, d);
      r.max_rel =
          std::max(r.max_rel, d / (std::isfinite(b[i]) ? std::max(std::abs(b[i]), 1.0) : 1.0));
    }
    r.max_scaled = std::max(r.max_scaled, output_abs / scale);
  }
  return r;
}

StatusOr<std::vector<HostTensor>> RandomInputs(const Graph& g, std::mt19937_64* rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<HostTensor> inputs;
  for (int v : g.inputs()) {
    const runtime::Value& val = g.value(v);
    if (!val.StaticShape()) return InvalidArgument("input '" + val.name + "' has no static shape");
    int64_t n = runtime::CountElements(val.dims);
    if (n < 0) return InvalidArgument("input '" + val.name + "' is too large");
    std::vector<double> data(n);
    for (double& d : data) d = runtime::IsFloatType(val.elem_type) ? dist(*rng) : 0.0;
    inputs.push_back(HostTensor::FromDoubles(val.elem_type, val.dims, data));
  }
  return inputs;
}

Status CompareOutputs(const Graph& original, const Graph& optimized, const VerifyOptions& options,
                      VerifyReport* report, const runtime::MemoryBudget& budget) {
  *report = VerifyReport();
  VERISUB_RETURN_IF_ERROR(CompareInterface(original, optimized, report));
  if (Status st = runtime::CheckMemoryBudget(original, budget, /*executor=*/true); !st.ok())
    return CouldNotRun(report, st.WithContext("the original graph"));
  if (Status st = runtime::CheckMemoryBudget(optimized, budget, /*executor=*/true); !st.ok())
    return CouldNotRun(report, st.WithContext("the optimized graph"));
  std::mt19937_64 rng(options.seed);
  for (int trial = 0; trial < options.trials; ++trial) {
    auto made = RandomInputs(original, &rng);
    if (!made.ok()) return CouldNotRun(report, made.status());
    const std::vector<HostTensor>& inputs = *made;
    auto a = runtime::Execute(original, inputs);
    if (!a.ok()) return CouldNotRun(report, a.status().WithContext("running the original graph"));
    auto b = runtime::Execute(optimized, inputs);
    if (!b.ok()) return CouldNotRun(report, b.status().WithContext("running the optimized graph"));
    for (size_t k = 0; k < a->size(); ++k) {
      const std::string name = original.value(original.outputs()[k]).name;
      if ((*a)[k].dims != (*b)[k].dims)
        return Different(report, "output '" + name + "' has shape " +
                                     runtime::DimsToString((*a)[k].dims) + " originally but " +
                                     runtime::DimsToString((*b)[k].dims) + " after optimization");
      std::vector<double> x = (*a)[k].ToDoubles(), y = (*b)[k].ToDoubles();
      // A float32 sum's rounding error grows with the magnitudes summed, not with the result:
      // relative to the output's largest element (OutputAgreement's scale), an element that
      // cancels to near 0 keeps an error of the order of the values around it.
      double scale = 0;
      for (double v : x)
        if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
      const double tolerance = options.abs_tol + options.rel_tol * scale;
      for (size_t i = 0; i < x.size(); ++i) {
        double diff = std::fabs(x[i] - y[i]);
        bool both_nan = std::isnan(x[i]) && std::isnan(y[i]);
        if (!both_nan && report->max_abs_diff < diff) report->max_abs_diff = diff;
        if (both_nan || diff <= tolerance) continue;
        if (std::isnan(diff) && x[i] == y[i]) continue;  // equal infinities
        return Different(report, "output '" + name + "' differs at element " + std::to_string(i) +
                                     ": original " + std::to_string(x[i]) + ", optimized " +
                                     std::to_string(y[i]) + " (trial " + std::to_string(trial) +
                                     ")");
      }
      ++report->outputs_compared;
      report->elements_compared += static_cast<int64_t>(x.size());
    }
  }
  return Status::Ok();
}

}  // namespace verisub::rewriter
