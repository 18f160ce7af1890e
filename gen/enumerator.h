// Depth-first enumeration of every graph of up to max_ops operators over the search space,
// evaluated incrementally in the modular-integer semantics and fingerprinted.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gen/graph_code.h"
#include "gen/progress.h"
#include "gen/search_space.h"

namespace verisub::gen {

// One enumerated graph: its fingerprint and its code (GraphCodec). No member initializers, so an
// array of entries is not written (and its memory not touched) before it is filled.
struct GraphEntry {
  uint64_t fingerprint;
  uint64_t code;
  bool operator<(const GraphEntry& o) const {
    return fingerprint != o.fingerprint ? fingerprint < o.fingerprint : code < o.code;
  }
};

// A fixed-size array of entries whose memory is touched only where it is written.
class GraphEntries {
 public:
  GraphEntries() = default;
  explicit GraphEntries(size_t n) : data_(new GraphEntry[n]), size_(n) {}
  size_t size() const { return size_; }
  GraphEntry& operator[](size_t i) { return data_[i]; }
  const GraphEntry& operator[](size_t i) const { return data_[i]; }
  GraphEntry* begin() { return data_.get(); }
  GraphEntry* end() { return data_.get() + size_; }

 private:
  std::unique_ptr<GraphEntry[]> data_;
  size_t size_ = 0;
};

// Graphs are partitioned by the top bits of their fingerprint, so the partitions can be sorted
// and their buckets tested independently.
inline constexpr int kPartitionBits = 10;
inline size_t PartitionOf(uint64_t fingerprint) { return fingerprint >> (64 - kPartitionBits); }

struct EnumerationStats {
  uint64_t graphs = 0;  // graphs fingerprinted (identity graphs included)
  uint64_t identity_graphs = 0;
  uint64_t shape_rejected = 0;      // operator applications the shape rules refused (cached)
  uint64_t duplicate_rejected = 0;  // same operator on the same inputs twice; idempotent on x, x
  uint64_t consumer_rejected = 0;   // an initial tensor in an argument its `consumers=` excludes
  uint64_t order_rejected = 0;      // not the canonical order of the same graph's operators
  uint64_t symmetry_rejected = 0;   // commutative operands or interchangeable inputs
  // Graphs built but not kept: the members they use of an interchangeable group are not its
  // first ones (their extensions may still be kept).
  uint64_t interchangeable_skipped = 0;
  uint64_t memo_hits = 0;      // full-size graphs whose last operator's result was memoized
  uint64_t tasks = 0;          // subtrees run in parallel (one per first operator)
  bool stopped_early = false;  // max_graphs reached: the graph set is incomplete
};

struct Enumeration {
  GraphCodec codec;
  std::vector<std::vector<uint8_t>> arenas;  // one per task, when codes are arena references
  GraphEntries graphs;                       // sorted by (fingerprint, code)
  // Partition p holds graphs[partitions[p], partitions[p + 1]).
  std::vector<size_t> partitions;
  EnumerationStats stats;
};

// Enumerates with up to `threads` threads (0: all cores); the result does not depend on it.
// `pack_codes` false keeps graphs in arenas even when they fit in 64-bit codes (for tests).
Enumeration Enumerate(const SearchSpace& s, int threads, ProgressCounters* progress,
                      bool pack_codes = true);

// Hash of one tensor: type (shape, split trees) and data.
uint64_t HashTensor(const specs::Tensor<uint32_t>& t, uint64_t type_hash);
// Fingerprint from the sum of mixed output hashes and the number of outputs.
inline uint64_t FinishFingerprint(uint64_t sum, uint64_t count) { return HashCombine(sum, count); }

}  // namespace verisub::gen
