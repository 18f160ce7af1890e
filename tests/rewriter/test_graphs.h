// Test helpers: small graphs built through the IR, and rule sets from rule text.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rewriter/rule_set.h"
#include "runtime/graph.h"
#include "runtime/spec_graph_builder.h"

namespace verisub::rewriter::testing {

// runtime::SpecGraphBuilder that fails the calling test on an error instead of returning it.
class GraphBuilder {
 public:
  int Input(const std::string& name, std::vector<int64_t> dims) { return b_.Input(name, dims); }
  // A weight with deterministic pseudo-random contents in [-1, 1].
  int Weight(const std::string& name, std::vector<int64_t> dims, uint64_t seed) {
    return b_.Weight(name, dims, seed);
  }
  // A spec operator; returns its output ids (dims inferred by Finish()).
  std::vector<int> Ops(std::string_view op_text, std::vector<int> inputs);
  int Op(std::string_view op_text, std::vector<int> inputs) {
    std::vector<int> outs = Ops(op_text, std::move(inputs));
    return outs.empty() ? runtime::kNoValue : outs[0];
  }
  // An opaque unary ONNX operator (e.g. "Neg"), output shaped like its input.
  int Opaque(const std::string& op_type, int input) { return b_.Opaque(op_type, input); }
  void Output(int v) { b_.Output(v); }
  // Infers spec types and checks invariants; fails the calling test on error.
  runtime::Graph Finish();
  // The same, returning the first error of the build instead.
  StatusOr<runtime::Graph> TryFinish();

 private:
  runtime::SpecGraphBuilder b_;
};

// Compiles rules given as text lines (no proof records needed).
std::shared_ptr<const RuleSet> Rules(const std::vector<std::string>& lines);
// The hand-written fixture data/rules/handwritten.txt.
std::shared_ptr<const RuleSet> HandwrittenRules();
// The shipped database (kDefaultRulesPath), compiled once per test program; null (and a test
// failure) when it does not load.
std::shared_ptr<const RuleSet> ShippedRules();

int CountOp(const runtime::Graph& g, const std::string& kind);

}  // namespace verisub::rewriter::testing
