// Where an optimization's costs come from: the analytic model (a device preset) or times measured
// on this CPU with oneDNN, kept in cost tables. A CostSource owns the model for one or more
// optimizations and, when they are done, saves what was measured, so that the next run on this
// machine measures nothing and gives the same graph.
//
// Tables for the measured model, in order: the one given (`table_path`, read when it exists and
// written back with new entries); else the shipped table of this machine (data/costs/, entries
// used only when engine, CPU, instruction set and threads match) merged with the per-user cache
// (`cache_dir`/<machine>.costs.txt), to which new entries go.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "runtime/cost/cost_model.h"

namespace verisub::rewriter {

struct CostOptions {
  // "analytic", "cpu-measured", or "auto": cpu-measured when this build has the oneDNN backend,
  // else analytic.
  std::string cost = "auto";
  // The analytic model's device preset: "v100", "cpu-2core" or "h100".
  std::string device = "v100";
  // A cost table to read and to merge new measurements into; empty: shipped table + user cache.
  std::string table_path;
  // An instance no table has: "measure", "analytic" (estimate it) or "error".
  std::string missing = "measure";
  // Kernel threads the measured model times with (part of the table's identity).
  int threads = 1;
  // Look for this machine's table in data/costs/.
  bool use_shipped_tables = true;
  // Per-user cache folder; empty: $XDG_CACHE_HOME/verisub, else $HOME/.cache/verisub; "none":
  // no cache (measurements are kept only in memory unless `table_path` is set).
  std::string cache_dir;
};

class CostSource {
 public:
  static StatusOr<std::unique_ptr<CostSource>> Create(const CostOptions& options);
  virtual ~CostSource() = default;

  virtual const runtime::CostModel& model() const = 0;
  // One line for a report: the model, where its table came from, entries used and measured.
  virtual std::string Summary() const = 0;
  // Writes newly measured entries to the table file (atomically, merged with what the file holds
  // by then). Nothing to do for the analytic model or when nothing was measured.
  virtual Status Save() = 0;
};

}  // namespace verisub::rewriter
