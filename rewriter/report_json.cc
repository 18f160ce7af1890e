// Report formatting.
#include "rewriter/report_json.h"

#include <cmath>
#include <cstdio>

namespace verisub::rewriter {

namespace {

std::string Num(double d) {
  if (!std::isfinite(d)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

}  // namespace

std::string JsonEscape(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string ReportToJson(const OptimizeReport& r, const std::string& model,
                         const std::string& output, const base::PhaseTimes* phases) {
  const SearchReport& s = r.search;
  std::string j = "{\n";
  j += "  \"model\": " + JsonEscape(model) + ",\n";
  j += "  \"output\": " + JsonEscape(output) + ",\n";
  j += "  \"cost_model\": " + JsonEscape(r.cost_model) + ",\n";
  j += "  \"cost_before_us\": " + Num(s.cost_before_us) + ",\n";
  j += "  \"cost_after_us\": " + Num(s.cost_after_us) + ",\n";
  j += "  \"nodes_before\": " + std::to_string(r.nodes_before) + ",\n";
  j += "  \"nodes_after\": " + std::to_string(r.nodes_after) + ",\n";
  j += "  \"nodes\": " + std::to_string(r.opaque.nodes) + ",\n";
  j += "  \"opaque_nodes\": " + std::to_string(r.opaque.opaque) + ",\n";
  j += "  \"opaque_percent\": " + Num(r.opaque.Percent()) + ",\n";
  j += "  \"opaque_ops\": {";
  for (size_t i = 0; i < r.opaque.opaque_ops.size(); ++i)
    j += std::string(i ? ", " : "") + JsonEscape(r.opaque.opaque_ops[i].first) + ": " +
         std::to_string(r.opaque.opaque_ops[i].second);
  j += "},\n";
  j += "  \"dynamic_values\": " + std::to_string(r.opaque.dynamic_values) + ",\n";
  j += "  \"rewrite_steps\": " + std::to_string(s.rewrite_steps) + ",\n";
  j += "  \"rules_applied\": [";
  for (size_t i = 0; i < s.rules_applied.size(); ++i) {
    const RuleUse& u = s.rules_applied[i];
    j += std::string(i ? "," : "") + "\n    {\"id\": " + JsonEscape(u.id) +
         ", \"count\": " + std::to_string(u.count) + ", \"rule\": " + JsonEscape(u.text) + "}";
  }
  j += s.rules_applied.empty() ? "],\n" : "\n  ],\n";
  j += "  \"graphs_explored\": " + std::to_string(s.graphs_explored) + ",\n";
  j += "  \"graphs_generated\": " + std::to_string(s.graphs_generated) + ",\n";
  j += "  \"matches\": " + std::to_string(s.matches) + ",\n";
  j += "  \"duplicates\": " + std::to_string(s.duplicates) + ",\n";
  j += "  \"pruned_by_alpha\": " + std::to_string(s.pruned_by_alpha) + ",\n";
  j += "  \"dropped_queue_full\": " + std::to_string(s.dropped_queue_full) + ",\n";
  j += "  \"rejected\": {";
  for (int k = 1; k < static_cast<int>(s.rejected.size()); ++k) {
    if (static_cast<RejectReason>(k) == RejectReason::kCostLimit) continue;  // pruned_by_alpha
    j += std::string(k > 1 ? ", " : "") +
         JsonEscape(RejectReasonName(static_cast<RejectReason>(k))) + ": " +
         std::to_string(s.rejected[k]);
  }
  j += "},\n";
  auto seconds_object = [&](const char* key, const base::PhaseTimes& t) {
    j += std::string("  \"") + key + "\": {";
    for (size_t k = 0; k < t.phases().size(); ++k)
      j += std::string(k ? ", " : "") + JsonEscape(t.phases()[k].first) + ": " +
           Num(t.phases()[k].second);
    j += "},\n";
  };
  if (phases) {
    // Phases on another thread (the rules) are listed too; wall_seconds leaves them out.
    seconds_object("phase_seconds", *phases);
    j += "  \"wall_seconds\": " + Num(phases->Total()) + ",\n";
  }
  seconds_object("pass_seconds", r.phases);
  j += "  \"seconds\": " + Num(s.seconds) + ",\n";
  j += "  \"measure_seconds\": " + Num(s.measure_seconds) + ",\n";
  j += "  \"stop_reason\": " + JsonEscape(StopReasonName(s.stop)) + ",\n";
  j += "  \"peak_rss_bytes\": " + std::to_string(s.peak_rss_bytes) + "\n}\n";
  return j;
}

std::string ReportSummary(const OptimizeReport& r) {
  const SearchReport& s = r.search;
  char buf[512];
  double ratio = s.cost_after_us > 0 ? s.cost_before_us / s.cost_after_us : 0;
  std::snprintf(buf, sizeof buf,
                "cost model:      %s\ncost before:     %.3f us\ncost after:      %.3f us "
                "(speedup %.3fx)\nnodes:           %d -> %d\ngraphs explored: %lld (generated "
                "%lld, matches %lld)\ntime:            %.3f s (%.3f s timing kernels)\nstop "
                "reason:     %s\npeak memory:   "
                "  %.1f MB\nrules applied:   %d step(s)\n",
                r.cost_model.c_str(), s.cost_before_us, s.cost_after_us, ratio, r.nodes_before,
                r.nodes_after, static_cast<long long>(s.graphs_explored),
                static_cast<long long>(s.graphs_generated), static_cast<long long>(s.matches),
                s.seconds, s.measure_seconds, StopReasonName(s.stop), s.peak_rss_bytes / 1048576.0,
                s.rewrite_steps);
  std::string out = buf;
  out += runtime::OpaqueSummaryLine(r.opaque) + " in the input\n";
  for (const RuleUse& u : s.rules_applied)
    out += "  " + u.id + " x" + std::to_string(u.count) + "  " + u.text + "\n";
  return out;
}

}  // namespace verisub::rewriter
