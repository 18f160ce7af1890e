// The HTML report: one self-contained page (no script, nothing fetched), a node drawn per graph
// node in each graph, the rules with their proof records, names escaped.
#include "rewriter/report_html.h"

#include <gtest/gtest.h>

#include "runtime/graph_text.h"

namespace verisub::rewriter {
namespace {

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportHtmlTest, DrawsEveryNodeAndListsTheRewritesWithTheirProofs) {
  auto before = runtime::ParseGraphText(
      "input x [1,4]\ninput y [1,4]\nlet a = (relu x)\nlet b = (relu y)\n"
      "output (ewadd a b)\n");
  auto after = runtime::ParseGraphText("input x [1,4]\ninput y [1,4]\noutput (relu (ewadd x y))\n");
  ASSERT_TRUE(before.ok() && after.ok());
  OptimizeReport report;
  report.cost_model = "analytic:<test>";
  report.nodes_before = before->num_nodes();
  report.nodes_after = after->num_nodes();
  report.search.cost_before_us = 3;
  report.search.cost_after_us = 2;
  report.search.rules_applied = {{"00000000000000ab", "(ewadd (relu ?a) (relu ?b)) => x < y", 1}};
  HtmlReportInput in;
  in.model = "m<odel>.onnx";
  in.output = "out.onnx";
  in.before = &*before;
  in.after = &*after;
  in.report = &report;
  in.before_costs = {1, 1, 1};
  in.after_costs = {1, 1};
  ruledb::ProofRecord proof;
  proof.status = ruledb::ProofStatus::kProved;
  proof.axioms_used = {"relu_add"};
  in.proofs["00000000000000ab"] = proof;
  const std::string h = RenderHtmlReport(in);
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Count(h, "<svg"), 2);
  EXPECT_EQ(Count(h, "<g class=\"node\">"), before->num_nodes() + after->num_nodes());
  EXPECT_EQ(Count(h, "<line"), 2 + 1);  // one per edge between nodes
  EXPECT_NE(h.find("m&lt;odel&gt;.onnx"), std::string::npos);
  EXPECT_EQ(h.find("m<odel>"), std::string::npos);
  EXPECT_NE(h.find("=&gt; x &lt; y"), std::string::npos);
  EXPECT_NE(h.find("proved from relu_add"), std::string::npos);
  EXPECT_NE(h.find("1.500x"), std::string::npos);
  // Self-contained: no script, nothing fetched.
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("src="), std::string::npos);
  EXPECT_EQ(h.find("href="), std::string::npos);
  EXPECT_EQ(h.find("@import"), std::string::npos);
}

TEST(ReportHtmlTest, WideLayersWrapAndUnpricedNodesStayNeutral) {
  std::string text = "input x [1,4]\n";
  std::string sum = "x";
  for (int i = 0; i < 30; ++i) sum = "(ewadd " + sum + " (relu x))";
  auto g = runtime::ParseGraphText(text + "output " + sum + "\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::string svg = GraphSvg(*g, {});
  EXPECT_EQ(Count(svg, "<g class=\"node\">"), g->num_nodes());
  EXPECT_NE(svg.find("#dde4ee"), std::string::npos);
}

}  // namespace
}  // namespace verisub::rewriter
