// A named list of graph passes run in order, with the graph checker between them (XLA's
// HloPassPipeline is the model): an invariant a pass breaks is reported as "failed after
// <pass>", and the graph can be dumped as text after any pass.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/phase_times.h"
#include "base/status.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

struct GraphPass {
  std::string name;
  std::function<Status(runtime::Graph* g)> run;
};

struct PassPipelineOptions {
  // runtime::CheckGraph after every pass; after the last one it always runs.
  bool check_after_each_pass = false;
  // A pass name: after it, *dump receives the graph's text form (runtime::PrintGraphText).
  std::string dump_after;
  // When set, each pass's wall time (the checker's included) is added under the pass's name.
  base::PhaseTimes* times = nullptr;
};

// Runs `passes` on *g. A pass's own error is returned as it is; a graph that fails the checker
// after pass P is an internal error "failed after P: <checker message>". A `dump_after` naming
// no pass is an InvalidArgument listing the pass names. `dump` may be null when no dump is asked.
Status RunPassPipeline(const std::vector<GraphPass>& passes, const PassPipelineOptions& options,
                       runtime::Graph* g, std::string* dump);

}  // namespace verisub::rewriter
