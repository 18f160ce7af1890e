// Helpers of the oneDNN backend tests.
#include "tests/runtime/dnnl/dnnl_test_util.h"

#include <algorithm>
#include <cmath>

#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/reference_backend.h"

namespace verisub::runtime::testing {

Comparison Compare(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b) {
  Comparison c;
  if (a.size() != b.size()) {
    c.error = "output counts differ";
    return c;
  }
  double dd = 0, bb = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].dims != b[k].dims) {
      c.error = "output " + std::to_string(k) + ": " + DimsToString(a[k].dims) + " vs " +
                DimsToString(b[k].dims);
      return c;
    }
    std::vector<double> x = a[k].ToDoubles(), y = b[k].ToDoubles();
    for (size_t i = 0; i < x.size(); ++i) {
      double d = std::abs(x[i] - y[i]);
      if (std::isnan(x[i]) != std::isnan(y[i])) d = INFINITY;
      c.max_abs = std::max(c.max_abs, d);
      c.max_rel = std::max(c.max_rel, d / std::max(std::abs(y[i]), 1.0));
      c.max_ref = std::max(c.max_ref, std::abs(y[i]));
      dd += d * d;
      bb += y[i] * y[i];
    }
  }
  c.norm_rel = bb > 0 ? std::sqrt(dd / bb) : std::sqrt(dd);
  return c;
}

Comparison CompareWithReference(const Graph& g, const std::vector<HostTensor>& inputs,
                                PrepareStats* stats, int threads) {
  Comparison c;
  PrepareOptions opts;
  opts.num_threads = threads;
  auto fast = MakeDnnlBackend()->Prepare(g, opts);
  if (!fast.ok()) {
    c.error = "prepare: " + fast.status().message();
    return c;
  }
  if (stats) *stats = (*fast)->stats();
  auto ref = MakeReferenceBackend()->Prepare(g, opts);
  if (!ref.ok()) {
    c.error = "reference prepare: " + ref.status().message();
    return c;
  }
  auto a = (*fast)->Run(inputs);
  if (!a.ok()) {
    c.error = "run: " + a.status().message();
    return c;
  }
  auto b = (*ref)->Run(inputs);
  if (!b.ok()) {
    c.error = "reference run: " + b.status().message();
    return c;
  }
  return Compare(*a, *b);
}

}  // namespace verisub::runtime::testing
