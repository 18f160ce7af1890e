// Reference backend: Prepare keeps a copy of the graph (shared nodes and weights), Run is
// runtime::Execute.
#include "runtime/reference_backend.h"

#include <algorithm>
#include <chrono>

#include "runtime/executor.h"

namespace verisub::runtime {
namespace {

class ReferencePrepared : public PreparedModel {
 public:
  explicit ReferencePrepared(Graph g) : g_(std::move(g)) {}

  StatusOr<std::vector<HostTensor>> Run(const std::vector<HostTensor>& inputs) override {
    last_inputs_ = inputs;
    return Execute(g_, inputs);
  }

  StatusOr<double> TimeNode(int node, int runs) override {
    if (node < 0 || node >= g_.num_nodes())
      return InvalidArgument("no node " + std::to_string(node));
    if (last_inputs_.size() != g_.inputs().size())
      return FailedPrecondition("TimeNode needs a Run first");
    // Recomputes the values up to the node (Execute frees them as it goes).
    std::vector<std::shared_ptr<const HostTensor>> env(g_.num_values());
    for (int v = 0; v < g_.num_values(); ++v) env[v] = g_.value(v).constant;
    for (size_t k = 0; k < last_inputs_.size(); ++k)
      env[g_.inputs()[k]] = std::make_shared<const HostTensor>(last_inputs_[k]);
    for (int i = 0; i <= node; ++i) {
      const Node& n = g_.node(i);
      std::vector<const HostTensor*> in;
      for (int v : n.inputs) in.push_back(v == kNoValue ? nullptr : env[v].get());
      std::vector<double> times;
      for (int r = 0; r < (i == node ? std::max(runs, 1) : 1); ++r) {
        auto start = std::chrono::steady_clock::now();
        auto out = RunNode(g_, n, in);
        times.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (!out.ok()) return out.status().WithContext("node '" + n.name + "'");
        if (i == node) continue;
        for (size_t k = 0; k < n.outputs.size(); ++k)
          if (n.outputs[k] != kNoValue)
            env[n.outputs[k]] = std::make_shared<const HostTensor>(std::move((*out)[k]));
      }
      if (i == node) {
        std::sort(times.begin(), times.end());
        return times[times.size() / 2];
      }
    }
    return InternalError("unreachable");
  }

  PrepareStats stats() const override {
    PrepareStats s;
    s.steps = g_.num_nodes();
    s.fallback_nodes = g_.num_nodes();
    return s;
  }

 private:
  Graph g_;
  std::vector<HostTensor> last_inputs_;
};

class ReferenceBackend : public Backend {
 public:
  std::string Name() const override { return "reference"; }
  bool CanRun(const Graph&, const Node& n) const override { return HasKernel(n); }
  StatusOr<std::unique_ptr<PreparedModel>> Prepare(const Graph& g,
                                                   const PrepareOptions&) const override {
    VERISUB_RETURN_IF_ERROR(CheckGraph(g));
    for (const auto& n : g.nodes())
      if (!HasKernel(*n))
        return Unimplemented("node '" + n->name + "': no reference kernel for " + n->KindName());
    return std::unique_ptr<PreparedModel>(new ReferencePrepared(g));
  }
};

}  // namespace

std::unique_ptr<Backend> MakeReferenceBackend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace verisub::runtime
