// What verisub-onnx does: import a model, summarize it (nodes, opaque operators, weights,
// structural hash, operator counts), optionally run the reference executor on random inputs,
// and optionally export the imported graph.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "runtime/onnx_import.h"

namespace verisub::runtime {

struct InspectOptions {
  std::string model_path;
  ImportOptions import;  // its memory budget also bounds --run's executor
  bool run = false;         // run the reference executor on random inputs in [-1, 1)
  uint64_t seed = 1;        // of those inputs
  std::string output_path;  // export the imported graph here (empty: no export)
};

// Appends the summary to `report` as it goes (so what was done before an error is kept):
// `key: value` lines, one line per operator kind, and with `run` one line per output with its sum.
Status InspectModel(const InspectOptions& options, std::string* report);

}  // namespace verisub::runtime
