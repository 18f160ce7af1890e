// The generator's search space and settings, read from a line-based config file (see README.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "specs/op_spec.h"
#include "specs/params.h"
#include "specs/tensor.h"

namespace verisub::gen {

// A graph input. Inputs with the same group are interchangeable: they have the same shape and
// the enumeration builds each graph only once up to a renaming inside a group.
// An operator argument a tensor may feed: `conv2d.1` (the weight), or `ewmul` (any argument).
struct Consumer {
  specs::OpKind kind = specs::OpKind::kNumOps;
  int arg = -1;  // -1: any
};

struct InputDecl {
  std::string name;
  specs::Shape shape;
  std::string group;  // defaults to the input's own name
  // Operator arguments this input may feed; empty: any. Narrows the search (a kernel is a conv
  // weight, not an activation); tensors computed from it are not restricted.
  std::vector<Consumer> consumers;
};

// An operator with fixed parameters: one choice the enumeration tries at every step.
struct OpInstance {
  specs::OpKind kind = specs::OpKind::kNumOps;
  specs::Params params;
  // Ranks every input must have (bit r: rank r); 0 allows any. Not part of the operator's
  // meaning: it only narrows the search (TASO's "matmul of 2-D tensors").
  uint32_t input_ranks = 0;
  bool operator==(const OpInstance& o) const { return kind == o.kind && params == o.params; }
  bool operator<(const OpInstance& o) const {
    return kind != o.kind ? kind < o.kind : params < o.params;
  }
};

// A constant tensor: an is_constant operator applied to a graph input that supplies its shape
// (`constant` lines), or an operator applied to weights only (`fold` lines: two kernels or two
// biases concatenated, which an engine computes once at load). Constants are free initial
// tensors: they do not count towards max_ops, so a rule may merge two convolutions with their
// kernels and biases concatenated within the operator budget of the unmerged pair.
struct ConstantDecl {
  OpInstance op;
  std::vector<int> sources;         // indices into GenConfig::inputs, one per operand
  std::vector<Consumer> consumers;  // as for inputs
  bool folded = false;              // a `fold` line
  // The first operand: a `constant` line's shape source.
  int source() const { return sources[0]; }
};

struct GenConfig {
  std::string source_name;  // file the config came from, for messages
  int max_ops = 3;
  int threads = 0;  // 0: one per core
  uint64_t seed = 1;
  int double_tests = 3;
  double tolerance = 1e-5;
  uint64_t max_graphs = 0;  // 0: no limit; otherwise the enumeration stops early (reported)
  bool break_commutative = true;
  bool identity_graphs = true;  // also bucket the 0-op graphs "output = input"
  // Decide what the axioms leave undecided by index-level normal forms (verify/index_level.h),
  // and generalize ranked proofs with them.
  bool index_level_proofs = true;
  // Pairs formed inside a class of equal graphs: a star around its smallest graph (as TASO,
  // which compared every graph with the first of its fingerprint), or all pairs.
  bool all_pairs = false;
  // Skip pairs that are compositions of smaller candidates: some output is the same term on
  // both sides (the rule without it is a candidate; TASO's pruning drops these), every output is
  // the same operator on equal inputs on both sides (implied by the inputs' smaller rules), or
  // the outputs split into groups computed by disjoint operators on both sides (a union of
  // smaller rules).
  // Graphs whose every partner is of this kind, or disconnected like themselves, are not even
  // evaluated in double.
  bool drop_composite_pairs = true;
  std::vector<InputDecl> inputs;
  std::vector<ConstantDecl> constants;
  std::vector<OpInstance> ops;  // sorted, unique
  // `candidate RULE` lines: identities the modular fingerprints cannot find (exp(a + b) =
  // exp(a) exp(b) has no counterpart in the integers modulo a prime), added to the generated
  // candidates and proved like them. Canonical texts, sorted, unique.
  std::vector<std::string> candidates;
};

// Parses config text; `source_name` prefixes every error ("taso.cfg:12: ...").
StatusOr<GenConfig> ParseConfig(std::string_view text, const std::string& source_name);
StatusOr<GenConfig> LoadConfig(const std::string& path);

// The config written back in its own format (sorted, expanded), for reports and rules headers.
std::string FormatConfig(const GenConfig& c);

}  // namespace verisub::gen
