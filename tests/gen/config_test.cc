// Config files: the shipped configs load, the format round-trips, and bad files give errors
// that name the file and line.
#include "gen/config.h"

#include <gtest/gtest.h>

#include <string>

#include "specs/registry.h"

namespace verisub::gen {
namespace {

constexpr const char* kSmall = R"(# a comment
max_ops 2   # trailing comment
threads 1
seed 7
double_tests 2
tolerance 1e-6
input a [1, 2, 3, 3] act consumers=relu,conv2d.0
input b [1,2,3,3] act consumers=conv2d.0,relu
input w [2,2,3,3] consumers=conv2d.1
input s []
constant const_iconv w kernel_h=3 kernel_w=3 consumers=conv2d.1
op conv2d stride_h=1 stride_w=1 padding=same activation=none,relu group=1
op relu
op matmul activation=none input_rank=2
candidate (ewmul (exp ?b) (exp ?a))  =>  (exp (ewadd ?b ?a))
)";

TEST(ConfigTest, ParsesEveryKind) {
  auto c = ParseConfig(kSmall, "small.cfg");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->max_ops, 2);
  EXPECT_EQ(c->threads, 1);
  EXPECT_EQ(c->seed, 7u);
  EXPECT_EQ(c->double_tests, 2);
  EXPECT_DOUBLE_EQ(c->tolerance, 1e-6);
  ASSERT_EQ(c->inputs.size(), 4u);
  EXPECT_EQ(c->inputs[0].shape.ToString(), "[1,2,3,3]");
  EXPECT_EQ(c->inputs[1].group, "act");
  EXPECT_EQ(c->inputs[2].group, "w");
  EXPECT_EQ(c->inputs[3].shape.rank, 0);
  ASSERT_EQ(c->inputs[1].consumers.size(), 2u);
  EXPECT_EQ(c->inputs[1].consumers[0].arg, 0);
  EXPECT_EQ(c->inputs[1].consumers[1].arg, -1);
  ASSERT_EQ(c->constants.size(), 1u);
  EXPECT_EQ(c->constants[0].source(), 2);
  // conv2d: 2 activations; relu; matmul: 4 instances, sorted by operator.
  ASSERT_EQ(c->ops.size(), 4u);
  EXPECT_EQ(c->ops[0].kind, specs::OpKind::kConv2d);
  EXPECT_EQ(c->ops[2].kind, specs::OpKind::kMatmul);
  EXPECT_EQ(c->ops[2].input_ranks, 1u << 2);
  // Candidates are kept as canonical rule text.
  ASSERT_EQ(c->candidates.size(), 1u);
  EXPECT_EQ(c->candidates[0], "(ewmul (exp ?a) (exp ?b)) => (exp (ewadd ?a ?b))");
}

TEST(ConfigTest, OmittedParametersTakeTheirDomain) {
  auto c = ParseConfig("input x [2,4]\nop concat\nop transpose\n", "d.cfg");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const specs::OpSpec* concat = specs::FindOp("concat");
  const specs::OpSpec* transpose = specs::FindOp("transpose");
  EXPECT_EQ(c->ops.size(), concat->params[0].domain.size() + transpose->params[0].domain.size());
}

TEST(ConfigTest, FormatRoundTrips) {
  auto c = ParseConfig(kSmall, "small.cfg");
  ASSERT_TRUE(c.ok());
  std::string text = FormatConfig(*c);
  auto again = ParseConfig(text, "formatted.cfg");
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << text;
  EXPECT_EQ(FormatConfig(*again), text);
}

TEST(ConfigTest, FoldLinesNameTheirOperandsAndRoundTrip) {
  const char* text =
      "input a [1,2,3,3]\ninput k0 [2,2,1,1]\ninput k1 [2,2,1,1]\n"
      "fold concat k0 k1 axis=0 consumers=conv2d_bias.1\n"
      "constant const_ones a\nop relu\n";
  auto c = ParseConfig(text, "fold.cfg");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->constants.size(), 2u);
  // Constants first, then folds.
  EXPECT_FALSE(c->constants[0].folded);
  const ConstantDecl& f = c->constants[1];
  EXPECT_TRUE(f.folded);
  EXPECT_EQ(f.op.kind, specs::OpKind::kConcat);
  EXPECT_EQ(f.sources, (std::vector<int>{1, 2}));
  ASSERT_EQ(f.consumers.size(), 1u);
  EXPECT_EQ(f.consumers[0].arg, 1);
  std::string formatted = FormatConfig(*c);
  EXPECT_NE(formatted.find("fold concat k0 k1 axis=0 consumers=conv2d_bias.1"), std::string::npos)
      << formatted;
  auto again = ParseConfig(formatted, "formatted.cfg");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(FormatConfig(*again), formatted);
}

TEST(ConfigTest, ShippedConfigsLoad) {
  for (const char* path :
       {"data/gen/taso.cfg", "data/gen/taso_full.cfg", "data/gen/taso_n4_reduced.cfg",
        "data/gen/elementwise.cfg", "data/gen/subop.cfg"}) {
    auto c = LoadConfig(path);
    EXPECT_TRUE(c.ok()) << path << ": " << c.status().message();
  }
}

TEST(ConfigTest, MissingFileIsNotFound) {
  auto c = LoadConfig("data/gen/no_such_file.cfg");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find("no_such_file.cfg"), std::string::npos);
}

struct BadConfig {
  const char* name;
  const char* text;
  const char* where;   // file:line prefix
  const char* reason;  // part of the message
};

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, NamesFileLineAndReason) {
  const BadConfig& b = GetParam();
  auto c = ParseConfig(b.text, "bad.cfg");
  ASSERT_FALSE(c.ok()) << b.name;
  std::string m = c.status().message();
  EXPECT_EQ(m.rfind(b.where, 0), 0u) << m;
  EXPECT_NE(m.find(b.reason), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadConfigTest,
    ::testing::Values(
        BadConfig{"UnknownOperator", "input x [2,4]\nop frobnicate\n",
                  "bad.cfg:2:", "unknown operator 'frobnicate'"},
        BadConfig{"BadShape", "input x [2,a]\nop relu\n", "bad.cfg:1:", "bad shape '[2,a]'"},
        BadConfig{"ZeroDimension", "input x [2,0]\nop relu\n", "bad.cfg:1:", "outside [1,"},
        BadConfig{"UnclosedShape", "input x [2,4\nop relu\n", "bad.cfg:1:", "bad shape"},
        BadConfig{"ParamOutsideDomain", "input x [1,2,3,3]\n\nop pool_avg activation=sigmoid\n",
                  "bad.cfg:3:", "outside its domain"},
        BadConfig{"ParamBelowMinimum", "input x [1,2,3,3]\nop conv2d stride_h=0\n",
                  "bad.cfg:2:", "below the minimum"},
        BadConfig{"UnknownParam", "input x [2,4]\nop relu alpha=1\n",
                  "bad.cfg:2:", "has no parameter 'alpha'"},
        BadConfig{"MalformedParam", "input x [2,4]\nop concat axis\n",
                  "bad.cfg:2:", "expected parameter=value"},
        BadConfig{"BadCandidate", "input x [2,4]\ncandidate (frobnicate ?a) => ?a\n",
                  "bad.cfg:2:", "candidate"},
        BadConfig{"EmptyCandidate", "candidate\n", "bad.cfg:1:", "expected 'candidate RULE'"},
        BadConfig{"UnknownKeyword", "inputs x [2,4]\n", "bad.cfg:1:", "unknown keyword 'inputs'"},
        BadConfig{"BadNumber", "max_ops three\n", "bad.cfg:1:", "expected an integer"},
        BadConfig{"MaxOpsRange", "max_ops 0\n", "bad.cfg:1:", "outside [1, 8]"},
        BadConfig{"WrongArity", "max_ops 3 4\n", "bad.cfg:1:", "takes 1 value(s)"},
        BadConfig{"DuplicateInput", "input x [2,4]\ninput x [2,4]\n",
                  "bad.cfg:2:", "defined twice"},
        BadConfig{"GroupShapes", "input x [2,4] g\ninput y [4,4] g\n",
                  "bad.cfg:2:", "interchangeable inputs need one shape"},
        BadConfig{"GroupConsumers", "input x [2,4] g consumers=relu\ninput y [2,4] g\n",
                  "bad.cfg:2:", "interchangeable inputs need the same"},
        BadConfig{"GroupedConstantSource",
                  "input x [2,4] g\ninput y [2,4] g\nconstant const_ones y\nop relu\n",
                  "bad.cfg:", "'y' is interchangeable with 'x'"},
        BadConfig{"ConstantAsOp", "input x [2,4]\nop const_ones\n", "bad.cfg:2:", "is a constant"},
        BadConfig{"ConstantSource", "input x [2,4]\nconstant const_ones y\n",
                  "bad.cfg:2:", "unknown input 'y'"},
        BadConfig{"ConsumerOp", "input x [2,4] consumers=foo\n",
                  "bad.cfg:1:", "consumers: unknown operator 'foo'"},
        BadConfig{"ConsumerArg", "input x [2,4] consumers=relu.1\n",
                  "bad.cfg:1:", "outside [0, 0]"},
        BadConfig{"FoldUnknownInput", "input x [2,4]\nfold concat x y axis=0\n",
                  "bad.cfg:2:", "unknown input 'y'"},
        BadConfig{"FoldTooFewInputs", "input x [2,4]\nfold concat x\n",
                  "bad.cfg:2:", "2 inputs expected"},
        BadConfig{"FoldOfAConstant", "input x [2,4]\nfold const_ones x\n",
                  "bad.cfg:2:", "is a constant"},
        BadConfig{"FoldOfTwoOutputs", "input x [2,4]\nfold split x axis=0\n",
                  "bad.cfg:2:", "more than one output"},
        BadConfig{"TooManyInputs", "input x [2,4]\nop batchnorm\n", "bad.cfg:2:", "up to 3"},
        BadConfig{"NoOps", "input x [2,4]\n", "bad.cfg:", "no 'op' lines"}),
    [](const ::testing::TestParamInfo<BadConfig>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace verisub::gen
