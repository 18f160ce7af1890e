// Test graph builder.
#include "tests/rewriter/test_graphs.h"

#include <gtest/gtest.h>

#include "rewriter/rule_source.h"
#include "specs/registry.h"

namespace verisub::rewriter::testing {

using runtime::Graph;

std::vector<int> GraphBuilder::Ops(std::string_view op_text, std::vector<int> inputs) {
  auto outs = b_.Ops(op_text, std::move(inputs));
  EXPECT_TRUE(outs.ok()) << outs.status().message();
  return outs.ok() ? *outs : std::vector<int>{};
}

Graph GraphBuilder::Finish() {
  auto g = b_.Finish();
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? std::move(g).value() : Graph();
}

std::shared_ptr<const RuleSet> Rules(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  auto rules = ParseRulesText(text, "test");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  if (!rules.ok()) return nullptr;
  RuleSetOptions options;
  options.proved_only = false;
  auto set = RuleSet::Compile(std::move(rules).value(), options);
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? *set : nullptr;
}

std::shared_ptr<const RuleSet> HandwrittenRules() {
  auto rules = LoadRules("data/rules/handwritten.txt");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  if (!rules.ok()) return nullptr;
  RuleSetOptions options;
  options.proved_only = false;
  auto set = RuleSet::Compile(std::move(rules).value(), options);
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? *set : nullptr;
}

std::shared_ptr<const RuleSet> ShippedRules() {
  static const std::shared_ptr<const RuleSet> shipped = [] {
    auto rules = LoadRules(kDefaultRulesPath);
    EXPECT_TRUE(rules.ok()) << rules.status().message();
    if (!rules.ok()) return std::shared_ptr<const RuleSet>();
    auto set = RuleSet::Compile(std::move(rules).value());
    EXPECT_TRUE(set.ok()) << set.status().message();
    return set.ok() ? *set : nullptr;
  }();
  EXPECT_NE(shipped, nullptr) << kDefaultRulesPath << " did not load";
  return shipped;
}

int CountOp(const Graph& g, const std::string& kind) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->KindName() == kind;
  return n;
}

}  // namespace verisub::rewriter::testing
