// Test helpers: the hand-written TASO-style rule fixture and a header for test databases.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "ruledb/database.h"
#include "ruledb/rule.h"
#include "specs/registry.h"

namespace verisub::ruledb::testing {

inline constexpr char kFixturePath[] = "tests/ruledb/testdata/taso_rules.txt";

// Rules from a file of rule lines (`#` lines are comments), each with a proof record that
// varies with its position so round trips exercise every field.
inline StatusOr<std::vector<Rule>> LoadFixtureRules(const std::string& path = kFixturePath) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open");
  std::vector<Rule> rules;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto r = ParseRule(line);
    if (!r.ok()) return r.status().WithContext(path + ": " + line);
    r->proof.status = ProofStatus::kProved;
    r->proof.seconds = 0.001 * static_cast<double>(rules.size() + 1) / 3;
    if (rules.size() % 3 == 0) r->proof.axioms_used = {"matmul_assoc", "ewadd_comm"};
    if (rules.size() % 5 == 1) r->proof.axioms_used = {"split_concat_0"};
    rules.push_back(std::move(*r));
  }
  return rules;
}

inline DatabaseHeader TestHeader() {
  DatabaseHeader h;
  h.op_set_fingerprint = specs::OpSetFingerprintHex();
  h.generator_config = "max_ops = 3\nops = matmul, ewadd\t# \"quoted\" \\ and \x01\n";
  h.max_ops = 3;
  h.tool_version = "verisub-test 0.1";
  h.z3_version = "4.12.2";
  h.counts = {{"candidates", 1234}, {"proved", 43}};
  return h;
}

}  // namespace verisub::ruledb::testing
