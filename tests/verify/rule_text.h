// The verify tests' rules, written as canonical rule text.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ruledb/rule.h"

namespace verisub::verify::testing {

// `text` parsed; a parse error fails the calling test and gives an empty rule.
inline ruledb::Rule Rule(const std::string& text) {
  auto r = ruledb::ParseRule(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : ruledb::Rule();
}

}  // namespace verisub::verify::testing
