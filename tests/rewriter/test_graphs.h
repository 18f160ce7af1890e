// Test helpers: small graphs built through the IR, and rule sets from rule text.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rewriter/rule_set.h"
#include "runtime/graph.h"

namespace verisub::rewriter::testing {

// Builds a graph node by node; operator text is `name[param=value,...]` as in rules.
class GraphBuilder {
 public:
  // `report_to_gtest` false: errors are only collected (TryFinish returns the first), for the
  // graph-text fuzz target, which runs outside any test.
  explicit GraphBuilder(bool report_to_gtest = true) : report_(report_to_gtest) {}
  int Input(const std::string& name, std::vector<int64_t> dims);
  // A weight with deterministic pseudo-random contents in [-1, 1].
  int Weight(const std::string& name, std::vector<int64_t> dims, uint64_t seed);
  // A spec operator; returns its output ids (dims inferred by Finish()).
  std::vector<int> Ops(std::string_view op_text, std::vector<int> inputs);
  int Op(std::string_view op_text, std::vector<int> inputs) { return Ops(op_text, inputs)[0]; }
  // An opaque unary ONNX operator (e.g. "Neg"), output shaped like its input.
  int Opaque(const std::string& op_type, int input);
  void Output(int v) { g_.mutable_outputs().push_back(v); }
  // Infers spec types and checks invariants; fails the calling test on error.
  runtime::Graph Finish();
  // The same, returning the first error of the build instead.
  StatusOr<runtime::Graph> TryFinish();

 private:
  void Fail(const Status& st);
  bool report_ = true;
  Status status_;
  runtime::Graph finished_;  // what TryFinish built, also when it failed (Finish returns it)
  runtime::Graph g_;
  std::vector<std::vector<int64_t>> dims_;
  int counter_ = 0;
};

// Compiles rules given as text lines (no proof records needed).
std::shared_ptr<const RuleSet> Rules(const std::vector<std::string>& lines);
// The hand-written fixture data/rules/handwritten.txt.
std::shared_ptr<const RuleSet> HandwrittenRules();

int CountOp(const runtime::Graph& g, const std::string& kind);

}  // namespace verisub::rewriter::testing
