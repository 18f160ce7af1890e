// Builds a small graph of spec operators node by node: the graph text form's parser and the
// tests use it. Operator text is `name[param=value,...]` as in rules.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"

namespace verisub::runtime {

class SpecGraphBuilder {
 public:
  int Input(const std::string& name, std::vector<int64_t> dims);
  // A float weight with deterministic pseudo-random contents in [-1, 1] drawn from `seed`.
  int Weight(const std::string& name, std::vector<int64_t> dims, uint64_t seed);
  // A weight holding `data`.
  int Weight(const std::string& name, std::shared_ptr<const HostTensor> data);
  // A spec operator; returns its output ids (dims are inferred by Finish()). Errors name the
  // operator or parameter that does not exist or does not parse.
  StatusOr<std::vector<int>> Ops(std::string_view op_text, std::vector<int> inputs);
  // The same with the operator and its parameters given directly.
  std::vector<int> Op(specs::OpKind op, const specs::Params& params, std::vector<int> inputs);
  // An opaque unary ONNX operator (e.g. "Neg"), output shaped like its input.
  int Opaque(const std::string& op_type, int input);
  void Output(int v) { g_.mutable_outputs().push_back(v); }
  // Infers spec types and checks the graph's invariants (CheckGraph).
  StatusOr<Graph> Finish() const;

 private:
  Graph g_;
  int counter_ = 0;
};

}  // namespace verisub::runtime
