// Depth-first enumeration of every graph of up to max_ops operators over the search space,
// evaluated incrementally in the modular-integer semantics and fingerprinted.
#pragma once

#include <cstdint>
#include <vector>

#include "gen/progress.h"
#include "gen/search_space.h"

namespace verisub::gen {

// One enumerated graph: its fingerprint and where its encoding lies (arena `task`, byte offset).
struct GraphEntry {
  uint64_t fingerprint = 0;
  uint32_t task = 0;
  uint32_t offset = 0;
  bool operator<(const GraphEntry& o) const {
    if (fingerprint != o.fingerprint) return fingerprint < o.fingerprint;
    return task != o.task ? task < o.task : offset < o.offset;
  }
};

struct EnumerationStats {
  uint64_t graphs = 0;  // graphs fingerprinted (identity graphs included)
  uint64_t identity_graphs = 0;
  uint64_t shape_rejected = 0;      // operator applications the shape rules refused (cached)
  uint64_t duplicate_rejected = 0;  // same operator on the same inputs twice
  uint64_t consumer_rejected = 0;   // an initial tensor in an argument its `consumers=` excludes
  uint64_t order_rejected = 0;      // not the canonical order of the same graph's operators
  uint64_t symmetry_rejected = 0;   // commutative operands or interchangeable inputs
  uint64_t memo_hits = 0;           // full-size graphs whose last operator's result was memoized
  uint64_t tasks = 0;               // subtrees run in parallel (one per first operator)
  bool stopped_early = false;       // max_graphs reached: the graph set is incomplete
};

struct Enumeration {
  std::vector<std::vector<uint8_t>> arenas;  // one per task, graph encodings
  std::vector<GraphEntry> graphs;            // sorted by (fingerprint, task, offset)
  EnumerationStats stats;
};

// Enumerates with up to `threads` threads (0: all cores); the result does not depend on it.
Enumeration Enumerate(const SearchSpace& s, int threads, ProgressCounters* progress);

// Hash of one tensor: type (shape, split trees) and data.
uint64_t HashTensor(const specs::Tensor<uint32_t>& t, uint64_t type_hash);
// Fingerprint from the sum of mixed output hashes and the number of outputs.
inline uint64_t FinishFingerprint(uint64_t sum, uint64_t count) { return HashCombine(sum, count); }

}  // namespace verisub::gen
