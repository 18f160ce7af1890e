// Opaque-node statistics.
#include "runtime/opaque_stats.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace verisub::runtime {

OpaqueStats MeasureOpaque(const Graph& g) {
  OpaqueStats s;
  s.nodes = g.num_nodes();
  std::map<std::string, int> by_type;
  for (const auto& n : g.nodes()) {
    if (!n->opaque()) continue;
    ++s.opaque;
    ++by_type[(n->domain.empty() ? "" : n->domain + ".") + n->op_type];
  }
  s.opaque_ops.assign(by_type.begin(), by_type.end());
  std::stable_sort(s.opaque_ops.begin(), s.opaque_ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (int v = 0; v < g.num_values(); ++v) {
    const Value& val = g.value(v);
    s.dynamic_values += !val.StaticShape() || val.elem_type == kUndefined;
  }
  return s;
}

std::string OpaqueSummaryLine(const OpaqueStats& stats, int top) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "opaque: %d of %d nodes (%.1f%%)", stats.opaque, stats.nodes,
                stats.Percent());
  std::string line = buf;
  for (int k = 0; k < top && k < static_cast<int>(stats.opaque_ops.size()); ++k)
    line += (k ? ", " : ": ") + stats.opaque_ops[k].first + " " +
            std::to_string(stats.opaque_ops[k].second);
  if (static_cast<int>(stats.opaque_ops.size()) > top) line += ", ...";
  return line;
}

}  // namespace verisub::runtime
