// The HTML report (see report_html.h). Graphs are drawn in layers: a node sits one layer below
// the deepest producer of its inputs, nodes of a layer side by side in node order, edges as
// straight lines from producer to consumer.
#include "rewriter/report_html.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "rewriter/graph_cost.h"
#include "specs/layout.h"

namespace verisub::rewriter {
namespace {

constexpr int kBoxW = 150, kBoxH = 34, kGapX = 20, kGapY = 36, kMargin = 10;
constexpr int kMaxPerRow = 12;  // wider layers wrap onto further rows

std::string Num(double v, const char* fmt = "%.1f") {
  char b[64];
  std::snprintf(b, sizeof(b), fmt, v);
  return b;
}

// Green (cheap) to red (the costliest node).
std::string CostColour(double cost, double max_cost) {
  if (max_cost <= 0 || cost < 0) return "#dde4ee";
  const double f = std::clamp(cost / max_cost, 0.0, 1.0);
  return "hsl(" + Num(120 * (1 - f), "%.0f") + ",70%,72%)";
}

}  // namespace

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string GraphSvg(const runtime::Graph& g, const std::vector<double>& costs) {
  const std::vector<int> producer = g.Producers();
  std::vector<int> layer(g.num_nodes(), 0);
  for (int i = 0; i < g.num_nodes(); ++i)
    for (int v : g.node(i).inputs)
      if (v != runtime::kNoValue && producer[v] >= 0)
        layer[i] = std::max(layer[i], layer[producer[v]] + 1);
  // Rows: each layer's nodes in order, at most kMaxPerRow a row.
  std::vector<int> row(g.num_nodes()), col(g.num_nodes());
  int rows = 0, max_cols = 1;
  const int layers = g.num_nodes() ? *std::max_element(layer.begin(), layer.end()) + 1 : 0;
  std::vector<std::vector<int>> by_layer(layers);
  for (int i = 0; i < g.num_nodes(); ++i) by_layer[layer[i]].push_back(i);
  for (const auto& nodes : by_layer) {
    for (size_t k = 0; k < nodes.size(); ++k) {
      row[nodes[k]] = rows + static_cast<int>(k) / kMaxPerRow;
      col[nodes[k]] = static_cast<int>(k) % kMaxPerRow;
      max_cols = std::max(max_cols, static_cast<int>(k % kMaxPerRow) + 1);
    }
    rows += (static_cast<int>(nodes.size()) + kMaxPerRow - 1) / kMaxPerRow;
  }
  const double max_cost = costs.empty() ? 0 : *std::max_element(costs.begin(), costs.end());
  auto x = [&](int i) { return kMargin + col[i] * (kBoxW + kGapX); };
  auto y = [&](int i) { return kMargin + row[i] * (kBoxH + kGapY); };
  const int width = 2 * kMargin + max_cols * (kBoxW + kGapX);
  const int height = 2 * kMargin + std::max(rows, 1) * (kBoxH + kGapY);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) +
                  "\" font-family=\"sans-serif\" "
                  "font-size=\"11\">\n";
  for (int i = 0; i < g.num_nodes(); ++i)
    for (int v : g.node(i).inputs)
      if (v != runtime::kNoValue && producer[v] >= 0) {
        const int p = producer[v];
        s += "<line x1=\"" + std::to_string(x(p) + kBoxW / 2) + "\" y1=\"" +
             std::to_string(y(p) + kBoxH) + "\" x2=\"" + std::to_string(x(i) + kBoxW / 2) +
             "\" y2=\"" + std::to_string(y(i)) + "\" stroke=\"#8893a3\" stroke-width=\"1\"/>\n";
      }
  for (int i = 0; i < g.num_nodes(); ++i) {
    const runtime::Node& n = g.node(i);
    const double cost = i < static_cast<int>(costs.size()) ? costs[i] : -1;
    std::string title = n.name + " (" + n.KindName() + ")";
    for (int v : n.outputs)
      if (v != runtime::kNoValue)
        title += "\n" + g.value(v).name + " " + runtime::DimsToString(g.value(v).dims) + " " +
                 std::string(specs::LayoutName(g.value(v).layout));
    if (cost >= 0) title += "\ncost " + Num(cost, "%.2f") + " us";
    s += "<g class=\"node\"><title>" + HtmlEscape(title) + "</title><rect x=\"" +
         std::to_string(x(i)) + "\" y=\"" + std::to_string(y(i)) + "\" width=\"" +
         std::to_string(kBoxW) + "\" height=\"" + std::to_string(kBoxH) + "\" rx=\"4\" fill=\"" +
         CostColour(cost, max_cost) + "\" stroke=\"#45505e\"/><text x=\"" +
         std::to_string(x(i) + 6) + "\" y=\"" + std::to_string(y(i) + 14) + "\">" +
         HtmlEscape(n.KindName().substr(0, 24)) + "</text><text x=\"" + std::to_string(x(i) + 6) +
         "\" y=\"" + std::to_string(y(i) + 28) + "\" fill=\"#333\">" +
         (cost >= 0 ? Num(cost, "%.1f") + " us" : std::string("")) + "</text></g>\n";
  }
  return s + "</svg>\n";
}

namespace {

const char* kStyle =
    "<style>body{font-family:sans-serif;margin:1.5em;max-width:100%}"
    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccd;padding:3px 6px;"
    "text-align:left;vertical-align:top}code{font-size:12px}.graphs{display:flex;gap:2em;"
    "overflow-x:auto}.graphs>div{flex:none}</style>";

std::string Head(const std::string& model) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>verisub: " +
         HtmlEscape(model) + "</title>\n" + kStyle +
         "</head><body>\n<h1>verisub: " + HtmlEscape(model) + "</h1>\n";
}

// Every value of `g` but the weights: name, type, shape, layout, role; with `storage` (per value
// id, 0 for its own type), the type each is stored in too.
std::string ValuesTable(const runtime::Graph& g, const std::vector<int32_t>& storage = {}) {
  const bool stored = !storage.empty();
  std::string h =
      std::string("<table><tr><th>value</th><th>type</th><th>shape</th><th>layout</th>") +
      (stored ? "<th>stored as</th>" : "") + "<th>kind</th></tr>\n";
  std::vector<char> is_input(g.num_values(), 0), is_output(g.num_values(), 0);
  for (int v : g.inputs()) is_input[v] = 1;
  for (int v : g.outputs()) is_output[v] = 1;
  for (int v = 0; v < g.num_values(); ++v) {
    const runtime::Value& val = g.value(v);
    if (val.constant && !is_output[v]) continue;  // weights: not listed
    h += "<tr><td>" + HtmlEscape(val.name) + "</td><td>" + runtime::ElemTypeName(val.elem_type) +
         "</td><td>" + runtime::DimsToString(val.dims) + "</td><td>" +
         std::string(specs::LayoutName(val.layout)) + "</td><td>" +
         (stored ? runtime::ElemTypeName(v < static_cast<int>(storage.size()) && storage[v] != 0
                                             ? storage[v]
                                             : val.elem_type) +
                       "</td><td>"
                 : std::string()) +
         (is_input[v]    ? "input"
          : is_output[v] ? "output"
                         : "computed") +
         "</td></tr>\n";
  }
  return h + "</table>\n";
}

}  // namespace

std::string RenderRunReport(const RunReportInput& in) {
  const runtime::Graph& g = *in.graph;
  std::string h = Head(in.model) + "<table>\n";
  for (const auto& [k, v] : in.summary)
    h += "<tr><th>" + HtmlEscape(k) + "</th><td>" + HtmlEscape(v) + "</td></tr>\n";
  h += "</table>\n";
  // A step's time goes to the node it is named after (its kernel node).
  std::vector<double> us(g.num_nodes(), -1);
  std::map<std::string, int> by_name;
  for (int i = 0; i < g.num_nodes(); ++i) by_name[g.node(i).name] = i;
  double total = 0;
  for (const runtime::StepProfile& s : in.steps) {
    total += s.seconds;
    if (auto it = by_name.find(s.name); it != by_name.end())
      us[it->second] = std::max(us[it->second], 0.0) + s.seconds * 1e6;
  }
  h += "<h2>The graph as it runs</h2>\n<p>" +
       std::string(in.steps.empty()
                       ? "Not profiled (verisub-run --profile N colours every node by the time "
                         "of its step)."
                       : "Nodes coloured by the measured time of the step they run as (green "
                         "fast, red the slowest; grey: absorbed into another node's step).") +
       " Hover for names, shapes and the layout of every value.</p>\n<div class=\"graphs\"><div>" +
       GraphSvg(g, in.steps.empty() ? std::vector<double>() : us) + "</div></div>\n";
  if (!in.steps.empty()) {
    h += "<h2>Steps (" + std::to_string(in.steps.size()) + ", " + Num(total * 1e3, "%.3f") +
         " ms timed in the run)</h2>\n<table><tr><th>step</th><th>kind</th><th>nodes</th>"
         "<th>ms in run</th><th>ms alone</th><th>share</th></tr>\n";
    for (const runtime::StepProfile& s : in.steps)
      h += "<tr><td>" + HtmlEscape(s.name) + "</td><td>" + HtmlEscape(s.kind) +
           (s.reference ? " (reference kernels)" : "") + "</td><td>" + std::to_string(s.nodes) +
           "</td><td>" + Num(s.seconds * 1e3, "%.4f") + "</td><td>" +
           Num(s.alone_seconds * 1e3, "%.4f") + "</td><td>" +
           Num(total > 0 ? 100 * s.seconds / total : 0, "%.1f") + "%</td></tr>\n";
    h += "</table>\n";
  }
  h += "<h2>Values</h2>\n" + ValuesTable(g, in.storage_types) + "</body></html>\n";
  return h;
}

std::map<std::string, ruledb::ProofRecord> ProofRecords(const std::vector<ruledb::Rule>& rules) {
  std::map<std::string, ruledb::ProofRecord> out;
  for (const ruledb::Rule& r : rules) out[r.Id()] = r.proof;
  return out;
}

std::string RenderHtmlReport(const HtmlReportInput& in) {
  const OptimizeReport& r = *in.report;
  // Costs not given are priced here (an unpriceable graph is drawn neutral).
  auto priced = [&](const runtime::Graph& g, const std::vector<double>& given) {
    if (!given.empty() || !in.cost_model) return given;
    auto c = CostEvaluator(in.cost_model).NodeCosts(g);
    return c.ok() ? *c : std::vector<double>();
  };
  const SearchReport& sr = r.search;
  std::string h = Head(in.model) + "<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    h += "<tr><th>" + HtmlEscape(k) + "</th><td>" + HtmlEscape(v) + "</td></tr>\n";
  };
  row("output", in.output);
  row("cost model", r.cost_model);
  row("cost", Num(sr.cost_before_us) + " us -> " + Num(sr.cost_after_us) + " us (" +
                  Num(sr.cost_after_us > 0 ? sr.cost_before_us / sr.cost_after_us : 1, "%.3f") +
                  "x)");
  row("nodes", std::to_string(r.nodes_before) + " -> " + std::to_string(r.nodes_after));
  row("rewrite steps", std::to_string(sr.rewrite_steps));
  row("graphs explored", std::to_string(sr.graphs_explored) + " (generated " +
                             std::to_string(sr.graphs_generated) + ")");
  row("search time", Num(sr.seconds, "%.3f") + " s");
  row("stop reason", StopReasonName(sr.stop));
  h += "</table>\n<h2>Rewrites applied</h2>\n";
  if (sr.rules_applied.empty()) {
    h += "<p>None: no proved rule made the graph cheaper in this cost model.</p>\n";
  } else {
    h += "<table><tr><th>rule</th><th>times</th><th>rule text</th><th>proof</th></tr>\n";
    for (const RuleUse& u : sr.rules_applied) {
      std::string proof = "no record (a rule read from text, or the reverse of a proved rule)";
      if (auto it = in.proofs.find(u.id); it != in.proofs.end()) {
        proof = std::string(ruledb::ProofStatusName(it->second.status));
        if (!it->second.axioms_used.empty()) {
          proof += " from";
          for (const std::string& a : it->second.axioms_used) proof += " " + a;
        }
        if (!it->second.reason.empty()) proof += " (" + it->second.reason + ")";
      }
      h += "<tr><td><code>" + HtmlEscape(u.id) + "</code></td><td>" + std::to_string(u.count) +
           "</td><td><code>" + HtmlEscape(u.text) + "</code></td><td>" + HtmlEscape(proof) +
           "</td></tr>\n";
    }
    h += "</table>\n";
  }
  h += "<h2>The graph before and after</h2>\n<p>Nodes coloured by their cost in the cost "
       "model (green cheap, red costliest of its graph); hover for names, shapes and "
       "layouts.</p>\n<div class=\"graphs\"><div><h3>before (" +
       std::to_string(in.before->num_nodes()) + " nodes)</h3>\n" +
       GraphSvg(*in.before, priced(*in.before, in.before_costs)) + "</div><div><h3>after (" +
       std::to_string(in.after->num_nodes()) + " nodes)</h3>\n" +
       GraphSvg(*in.after, priced(*in.after, in.after_costs)) + "</div></div>\n";
  h += "<h2>Values of the result</h2>\n" + ValuesTable(*in.after);
  h += "<p>Layouts are what the exported graph carries (plain); the layouts the layout DP "
       "chooses, and the time of every executed step, are on the page of "
       "<code>verisub-run MODEL --profile N --report-html R.html</code>.</p>\n</body></html>\n";
  return h;
}

}  // namespace verisub::rewriter
