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

namespace verisub::rewriter {
namespace {

TEST(ReportHtmlTest, TheRunPageShowsLayoutsAndStepTimes) {
  auto g = runtime::ParseGraphText(
      "input x [1,8,4,4]\nweight w [8,8,1,1]\n"
      "output (relu (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x w))\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  runtime::Graph laid = *g;
  laid.mutable_value(laid.node(0).outputs[0]).layout = specs::Layout::kNCHW8c;
  RunReportInput in;
  in.model = "m.onnx";
  in.graph = &laid;
  in.summary = {{"backend", "onednn"}};
  runtime::StepProfile step;
  step.name = laid.node(0).name;
  step.kind = "conv2d";
  step.nodes = 2;
  step.seconds = 2e-3;
  in.steps = {step};
  const std::string h = RenderRunReport(in);
  int nodes = 0;
  for (size_t at = h.find("<g class=\"node\">"); at != std::string::npos;
       at = h.find("<g class=\"node\">", at + 1))
    ++nodes;
  EXPECT_EQ(nodes, laid.num_nodes());
  EXPECT_NE(h.find(std::string(specs::LayoutName(specs::Layout::kNCHW8c))), std::string::npos);
  EXPECT_NE(h.find("Steps (1, 2.000 ms"), std::string::npos);
  EXPECT_NE(h.find("2000.0 us"), std::string::npos);  // the kernel node carries its step's time
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("stored as"), std::string::npos);  // no precision chosen: no column

  // With the precision DP's choice: the type each value is stored in, bfloat16 where chosen.
  in.storage_types.assign(laid.num_values(), 0);
  const int conv_out = laid.node(0).outputs[0];
  in.storage_types[conv_out] = runtime::kBfloat16;
  const std::string p = RenderRunReport(in);
  ASSERT_NE(p.find("<th>stored as</th>"), std::string::npos);
  const std::string row = "<tr><td>" + HtmlEscape(laid.value(conv_out).name) + "</td>";
  const size_t at = p.find(row);
  ASSERT_NE(at, std::string::npos);
  const std::string line = p.substr(at, p.find("</tr>", at) - at);
  EXPECT_NE(line.find("<td>bfloat16</td>"), std::string::npos) << line;
  const size_t out_at = p.find("<tr><td>" + HtmlEscape(laid.value(laid.outputs()[0]).name) + "</td>");
  ASSERT_NE(out_at, std::string::npos);
  EXPECT_EQ(p.substr(out_at, p.find("</tr>", out_at) - out_at).find("bfloat16"),
            std::string::npos);
}

}  // namespace
}  // namespace verisub::rewriter
