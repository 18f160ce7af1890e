// RunPassPipeline: passes in order, the checker between them, the optional text dump.
#include "rewriter/pass_pipeline.h"

#include "runtime/graph_text.h"

namespace verisub::rewriter {

Status RunPassPipeline(const std::vector<GraphPass>& passes, const PassPipelineOptions& options,
                       runtime::Graph* g, std::string* dump) {
  if (!options.dump_after.empty()) {
    bool found = false;
    std::string names;
    for (const GraphPass& p : passes) {
      found |= p.name == options.dump_after;
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (!found)
      return InvalidArgument("no pass named '" + options.dump_after + "' (passes: " + names + ")");
    VERISUB_CHECK(dump != nullptr);
  }
  base::PhaseTimes local;
  base::PhaseTimes& times = options.times ? *options.times : local;
  times.Start();
  for (size_t i = 0; i < passes.size(); ++i) {
    const GraphPass& pass = passes[i];
    VERISUB_RETURN_IF_ERROR(pass.run(g));
    if (options.check_after_each_pass || i + 1 == passes.size()) {
      Status check = runtime::CheckGraph(*g);
      if (!check.ok()) return InternalError("failed after " + pass.name + ": " + check.message());
    }
    if (pass.name == options.dump_after) *dump = runtime::PrintGraphText(*g);
    times.Mark(pass.name);
  }
  return Status::Ok();
}

}  // namespace verisub::rewriter
