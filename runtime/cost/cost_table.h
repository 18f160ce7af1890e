// Cost tables: measured times of operator instances (runtime::OpCostQuery::Key()), for one
// engine, CPU and thread count, kept in a versioned text file (protobuf text format of
// cost_table.proto) that can be shipped, merged and reloaded, so that an optimization is
// reproducible: the same model, rules and table give the same graph.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace verisub::costs::v1 {
class CostTable;
}  // namespace verisub::costs::v1

namespace verisub::runtime {

inline constexpr int kCostTableSchema = 1;
// Entries a table may hold (a development model needs a few hundred).
inline constexpr int64_t kMaxCostTableEntries = 1000000;
// The range of a kernel time a table holds (us): above 0 and at most an hour. Loading refuses
// entries outside it; Insert keeps a measurement inside it (a timer's 0 becomes the minimum).
inline constexpr double kMinKernelTimeUs = 1e-3;
inline constexpr double kMaxKernelTimeUs = 3.6e9;

struct CostTableHeader {
  std::string engine;          // "onednn"
  std::string engine_version;  // "2.6.0"
  std::string cpu_model;
  std::string isa;
  int threads = 1;
  int backend_revision = 0;  // verisub's kernels on the engine (runtime/dnnl/measured_cost.h)

  // Same engine, version, backend revision, CPU, instruction set and threads: times carry over.
  bool SameMachine(const CostTableHeader& o) const;
  // "onednn 2.6.0 (backend r2), avx2, 1 thread, AMD EPYC 7B13"
  std::string Describe() const;
  // A file name for a table of this machine: "onednn-2.6.0-r2-avx2-t1-amd-epyc-7b13.costs.txt".
  std::string FileName() const;
};

struct CostTableEntry {
  double time_us = 0;
  int runs = 0;
};

class CostTable {
 public:
  CostTable() = default;
  explicit CostTable(CostTableHeader header) : header_(std::move(header)) {}

  // Parses the text form; errors name `source` (a file name) and the entry at fault: a wrong
  // magic or schema, an empty or repeated key, a time that is negative or not finite.
  static StatusOr<CostTable> Parse(std::string_view text, const std::string& source);
  static StatusOr<CostTable> Load(const std::string& path);
  // The same, keeping a parsed copy in `parsed_dir` (when not empty): the table in protobuf's
  // binary form with a hash of the text it came from, one file per table path, so that the next
  // load of the unchanged text skips protobuf's text parse (0.1-0.2 s for one machine's shipped
  // and cached tables). The copy is written best-effort (the folder is made); a missing, stale or
  // damaged copy only costs the text parse, and the copy is checked as the text is.
  static StatusOr<CostTable> Load(const std::string& path, const std::string& parsed_dir);
  // The text form, entries sorted by key: byte-identical for equal tables.
  std::string Serialize() const;
  // Writes the table atomically (base::WriteFileAtomically). When `path` already holds a table of
  // the same machine, its entries that this table lacks are kept (two processes measuring at once
  // lose nothing but the race for the same key).
  Status Save(const std::string& path) const;

  const CostTableHeader& header() const { return header_; }
  std::optional<double> Find(const std::string& key) const;
  // Adds or replaces an entry; `time_us` must be finite and not negative.
  void Insert(const std::string& key, double time_us, int runs);
  // Adds the entries of `other` that this table lacks; returns how many.
  int MergeMissing(const CostTable& other);
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  const std::map<std::string, CostTableEntry>& entries() const { return entries_; }

 private:
  // The checks of Parse on a parsed message, whose keys are moved into the table; errors name
  // `source`.
  static StatusOr<CostTable> FromProto(costs::v1::CostTable* proto, const std::string& source);

  CostTableHeader header_;
  std::map<std::string, CostTableEntry> entries_;
};

}  // namespace verisub::runtime
