// The one rule-text parser: sides and outputs, inputs numbered by first appearance (source, then
// target), the where clause, and syntax errors naming the side and output. Operators are not
// looked up here: an unknown one still parses (the text form reads other op sets' files).
#include "ruledb/rule_text.h"

#include <gtest/gtest.h>

#include <string>

namespace verisub::ruledb {
namespace {

TEST(RuleTextTest, SidesInputsAndRanks) {
  auto ast = ParseRuleTextAst("(frob ?y (relu ?x)) ; ?x => (relu ?x) ; ?y where ?x:2 ?y:4");
  ASSERT_TRUE(ast.ok()) << ast.status().message();
  ASSERT_EQ(ast->src.size(), 2u);
  ASSERT_EQ(ast->dst.size(), 2u);
  EXPECT_EQ(ast->src[0].head, "frob");
  EXPECT_EQ(ast->inputs.at("?y"), 0);
  EXPECT_EQ(ast->inputs.at("?x"), 1);
  EXPECT_EQ(ast->src_inputs, 2);
  ASSERT_TRUE(ast->input_ranks.has_value());
  EXPECT_EQ(*ast->input_ranks, (std::vector<int>{4, 2}));

  auto no_where = ParseRuleTextAst("(relu ?a) => ?a");
  ASSERT_TRUE(no_where.ok()) << no_where.status().message();
  EXPECT_FALSE(no_where->input_ranks.has_value());
}

TEST(RuleTextTest, TargetOnlyInputsAreCountedApart) {
  auto ast = ParseRuleTextAst("(relu ?a) => (ewadd ?a ?b)");
  ASSERT_TRUE(ast.ok()) << ast.status().message();
  EXPECT_EQ(ast->src_inputs, 1);
  EXPECT_EQ(ast->inputs.size(), 2u);
}

TEST(RuleTextTest, ErrorsNameTheirPlace) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"(relu ?a)", "expected 'source => target'"},
           Case{"?a => ?a => ?a", "more than one '=>'"},
           Case{"(relu ?a) ; (relu => ?a ; ?a", "source output 1"},
           Case{"(relu ?a) => (relu", "target output 0"},
           Case{"(relu a) => ?a", "must be written ?name"},
           Case{"(relu ?a) => ?a where ?b:2", "not an input of the rule"},
           Case{"(relu ?a) => ?a where ?a:9", "bad rank"},
       }) {
    auto ast = ParseRuleTextAst(c.text);
    ASSERT_FALSE(ast.ok()) << c.text;
    EXPECT_NE(ast.status().message().find(c.message), std::string::npos)
        << c.text << ": " << ast.status().message();
  }
}

}  // namespace
}  // namespace verisub::ruledb
