// An order-independent key of search graphs that a rewrite updates in time proportional to the
// rewrite, so the search recognizes a graph it has already queued before building it.
#pragma once

#include <cstdint>
#include <vector>

#include "rewriter/apply.h"
#include "rewriter/matcher.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

// Values are identified by what they compute: a value of the search's input graph by its id, a
// value a rewrite creates to replace one by the replaced value's identity, any other value a
// rewrite creates by the structure that defines it (operator, parameters, identities of its
// inputs). A graph's key is the sum of its nodes' hashes (operator, parameters, identities of
// inputs and outputs; the operand order of commutative operators ignored) and of its outputs'
// identities. So rewrites that commute, a rewrite followed by its inverse, a rewrite that
// creates again what it removes, and different rules making the same change all give one key. Equal
// keys are taken for equal graphs (64-bit sums of mixed hashes); structurally equal graphs may
// still have different keys (a value of the input graph computed again by other nodes), which is
// why the search also hashes the graphs it builds.
class GraphKeys {
 public:
  // Keys of the search's input graph.
  static GraphKeys ForInput(const runtime::Graph& g);
  // Keys of `child`, the graph `plan` (planned on `parent`, whose keys these are) built.
  GraphKeys ForChild(const runtime::Graph& parent, const RewritePlan& plan,
                     const runtime::Graph& child) const;

  uint64_t key() const { return key_; }
  // The key of the graph `plan` would build from `g` (whose keys these are, `index` its
  // index), without building it.
  uint64_t KeyAfter(const runtime::Graph& g, const GraphIndex& index,
                    const RewritePlan& plan) const;

 private:
  // Identities of the values `plan` (planned on `g`) creates, in the order of plan.new_types.
  std::vector<uint64_t> NewIdentities(const runtime::Graph& g, const RewritePlan& plan) const;
  void HashNodes(const runtime::Graph& g);

  std::vector<uint64_t> ident_;      // per value id
  std::vector<uint64_t> node_hash_;  // per node of the graph these keys describe
  uint64_t key_ = 0;
};

}  // namespace verisub::rewriter
