// The optimizer's report as one self-contained HTML page (no script, no network): the summary,
// the graph before and after drawn as SVG with nodes coloured by their cost, every applied
// rewrite with its rule text and proof record, and every value of the result with its shape,
// type and layout. Written by `verisub-opt --report-html` and the Python module.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rewriter/optimize.h"
#include "ruledb/rule.h"
#include "runtime/backend.h"
#include "runtime/cost/cost_model.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

struct HtmlReportInput {
  std::string model;  // file names shown
  std::string output;
  const runtime::Graph* before = nullptr;
  const runtime::Graph* after = nullptr;
  const OptimizeReport* report = nullptr;
  // Per node of `before` / `after`: its cost in us. Empty: priced node by node with
  // `cost_model` when one is given (CostEvaluator::NodeCosts), else not priced.
  std::vector<double> before_costs, after_costs;
  const runtime::CostModel* cost_model = nullptr;
  // Proof records of the rules, by rule id (ProofRecords).
  std::map<std::string, ruledb::ProofRecord> proofs;
};

// The proof record of every rule, by rule id.
std::map<std::string, ruledb::ProofRecord> ProofRecords(const std::vector<ruledb::Rule>& rules);

std::string RenderHtmlReport(const HtmlReportInput& in);

// A prepared model as it runs (verisub-run --report-html): the graph that runs with the layout
// and storage precision of every value (the layout DP's choice), coloured by the measured time of each executed step
// (`--profile`), and the steps' table.
struct RunReportInput {
  std::string model;
  const runtime::Graph* graph = nullptr;
  std::vector<std::pair<std::string, std::string>> summary;  // (label, text) rows
  std::vector<runtime::StepProfile> steps;                   // empty: not profiled
  // Per value id: the element type it is stored in when not its own (Session::storage_types);
  // empty: every value in its own type.
  std::vector<int32_t> storage_types;
};
std::string RenderRunReport(const RunReportInput& in);

// The page's SVG of one graph (one <g class="node"> per node), for tests and other pages.
std::string GraphSvg(const runtime::Graph& g, const std::vector<double>& costs);

// Escapes &, <, >, " and '.
std::string HtmlEscape(const std::string& s);

}  // namespace verisub::rewriter
