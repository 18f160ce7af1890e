// The graph text form: the printer and the parser agree; bad text is an error naming the line.
#include "runtime/graph_text.h"

#include <gtest/gtest.h>

#include <string>

namespace verisub::runtime {
namespace {

// The printer and the parser agree: printing a parsed graph and parsing it again gives the
// same text.
TEST(GraphTextTest, PrintParseRoundTrip) {
  auto g = ParseGraphText(
      "input x [2,3]\n"
      "input y [4,3]\n"
      "let c = (concat[axis=0] x y)\n"
      "output (relu (split.0[axis=0] c))\n"
      "output (split.1[axis=0] c)\n"
      "output (onnx-Neg c)\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::string text = PrintGraphText(*g);
  EXPECT_EQ(text,
            "let t0 = (concat[axis=0] x y)\n"
            "output (relu (split.0[axis=0] t0))\n"
            "output (split.1[axis=0] t0)\n"
            "output (onnx-Neg t0)\n");
  auto again = ParseGraphText("input x [2,3]\ninput y [4,3]\n" + text);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(PrintGraphText(*again), text);
  EXPECT_EQ(again->num_nodes(), 4);  // concat, one split for both outputs, relu, Neg
}

TEST(GraphTextTest, BadTextIsAnError) {
  EXPECT_FALSE(ParseGraphText("output (relu nowhere)\n").ok());
  EXPECT_FALSE(ParseGraphText("input x [2,3]\noutput (frobnicate x)\n").ok());
  EXPECT_FALSE(ParseGraphText("input x [2,3]\noutput (relu x\n").ok());
  EXPECT_FALSE(ParseGraphText("wibble x\n").ok());
  // Errors name the line; junk dimensions are errors, not exceptions.
  auto bad_dim = ParseGraphText("input x [2,3]\ninput y [4,z]\n");
  ASSERT_FALSE(bad_dim.ok());
  EXPECT_NE(bad_dim.status().message().find("line 2"), std::string::npos)
      << bad_dim.status().message();
  EXPECT_FALSE(ParseGraphText("input x [2,-3]\noutput (relu x)\n").ok());
  EXPECT_FALSE(ParseGraphText("input x [2,3]\noutput (ewadd x folded-2xq)\n").ok());
  EXPECT_FALSE(ParseGraphText("input x [2,3]\noutput (transpose[frob=1] x)\n").ok());
}

// Found by `make fuzz` (tests/fuzz/corpus/graph_text/regress_concat_without_inputs.txt): an
// operator given fewer (or more) inputs than it takes reached its shape rule, which read inputs
// that were not there (UBSan: misaligned reference in concat's rule). Now an error naming the
// node and both counts.
TEST(GraphTextTest, AnOperatorWithTheWrongNumberOfInputsIsAnError) {
  auto none = ParseGraphText("input x [2,3]\ninput y [4,3]\nlet c = (concat[axis=0] )\noutput c\n");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("takes 2 inputs"), std::string::npos)
      << none.status().message();
  std::string many = "input x [2,3]\noutput (ewadd";
  for (int i = 0; i < 40; ++i) many += " x";
  EXPECT_FALSE(ParseGraphText(many + ")\n").ok());
  // Twin: the right count parses.
  EXPECT_TRUE(ParseGraphText("input x [2,3]\ninput y [4,3]\noutput (concat[axis=0] x y)\n").ok());
}

// Found on torchvision's segmentation models: an ONNX Resize omits its roi input (kNoValue),
// and printing the graph (the decision caches' key) read the value at index -1 (std::bad_alloc or
// garbage). An omitted input prints as "_".
TEST(GraphTextTest, AnOmittedOptionalInputPrintsAsAnUnderscore) {
  auto g = ParseGraphText("input x [1,2,4,4]\ninput s [4]\noutput (relu x)\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Value out;
  out.name = "resized";
  const int y = g->AddValue(out);
  Node resize;
  resize.op_type = "Resize";
  resize.inputs = {g->inputs()[0], kNoValue, g->inputs()[1]};
  resize.outputs = {y};
  g->AddNode(resize);
  g->mutable_outputs().push_back(y);
  EXPECT_EQ(PrintGraphText(*g), "output (relu x)\noutput (onnx-Resize x _ s)\n");
}

TEST(GraphTextTest, FoldedWeightsRoundTrip) {
  auto g = ParseGraphText("input x [2,3]\noutput (ewadd x folded-2x3)\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(PrintGraphText(*g), "output (ewadd x folded-2x3)\n");
}

// Layouts other than plain print as `layout` lines after the outputs and parse back; plain is
// never printed.
TEST(GraphTextTest, LayoutsRoundTrip) {
  const std::string header = "input x [1,4,8,8]\nweight w [4,4,3,3]\n";
  const std::string conv =
      "(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x w)";
  auto g = ParseGraphText(header + "let c = " + conv + "\noutput (relu c)\noutput (onnx-Neg c)\n" +
                          "layout c nchw8c\nlayout x nhwc\nlayout (relu c) nchw8c\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->num_nodes(), 3);  // the layout lines name values, they build nothing
  const std::string text = PrintGraphText(*g);
  EXPECT_EQ(text, "let t0 = " + conv +
                      "\noutput (relu t0)\noutput (onnx-Neg t0)\n"
                      "layout x nhwc\nlayout t0 nchw8c\nlayout (relu t0) nchw8c\n");
  auto again = ParseGraphText(header + text);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(PrintGraphText(*again), text);
  EXPECT_EQ(ValueLayouts(*again), ValueLayouts(*g));

  auto plain = ParseGraphText(header + "output (relu x)\nlayout x plain\n");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(PrintGraphText(*plain), "output (relu x)\n");
}

TEST(GraphTextTest, BadLayoutLinesAreErrors) {
  const std::string g = "input x [2,3]\ninput y [1,4,8,8]\noutput (relu x)\n";
  EXPECT_FALSE(ParseGraphText(g + "layout y sideways\n").ok());               // unknown layout
  EXPECT_FALSE(ParseGraphText(g + "layout x nhwc\n").ok());                   // does not fit rank 2
  EXPECT_FALSE(ParseGraphText(g + "layout z nhwc\n").ok());                   // unknown value
  EXPECT_FALSE(ParseGraphText(g + "layout (tanh x) col_major\n").ok());       // computed nowhere
  EXPECT_FALSE(ParseGraphText(g + "layout y nhwc\nlayout y nchw8c\n").ok());  // twice
  EXPECT_FALSE(ParseGraphText(g + "layout\n").ok());
  EXPECT_TRUE(ParseGraphText(g + "layout y nhwc\nlayout x col_major\n").ok());
}

}  // namespace
}  // namespace verisub::runtime
