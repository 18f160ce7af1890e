// A model prepared on oneDNN: steps (primitives with bound arguments, host steps), activation
// buffers planned so that a buffer is reused once its last reader is done (a graph input keeps
// its own), and the run loop.
#pragma once

#include <memory>
#include <vector>

#include "runtime/backend.h"
#include "runtime/dnnl/builder.h"

namespace verisub::runtime::dnnl_backend {

class DnnlPrepared : public PreparedModel {
 public:
  // Takes the draft's slots and steps; plans and allocates the buffers.
  static StatusOr<std::unique_ptr<DnnlPrepared>> Create(std::unique_ptr<Graph> graph,
                                                        ModelDraft draft, int num_threads,
                                                        PrepareStats stats);

  StatusOr<std::vector<HostTensor>> Run(const std::vector<HostTensor>& inputs) override;
  StatusOr<double> TimeNode(int node, int runs) override;
  StatusOr<std::vector<StepProfile>> Profile(int runs, bool alone) override;
  PrepareStats stats() const override { return stats_; }

 private:
  DnnlPrepared() = default;
  // The slot whose buffer slot `v` shares (following alias_of), `v` itself when none.
  int Root(int v) const;
  Status PlanBuffers();
  Status RunStep(size_t i);
  // The values step `i` writes into the buffer of a value it reads (in place).
  std::vector<int> InPlaceWrites(size_t i) const;
  // Checks `inputs` against the graph's and copies them into their slots.
  Status BindInputs(const std::vector<HostTensor>& inputs);

  std::unique_ptr<Graph> graph_;  // the folded graph the host steps read
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<std::unordered_map<int, memory>> args_;  // per step, bound to the buffers
  std::vector<std::shared_ptr<void>> buffers_;
  std::vector<std::shared_ptr<void>> constant_buffers_;  // the weights' memories (ModelDraft)
  std::vector<std::optional<dnnl::reorder>> output_reorders_;
  RunState state_;
  int num_threads_ = 0;
  PrepareStats stats_;
};

// Sets the OpenMP thread count oneDNN uses for the calling thread, restoring it on scope exit
// (0 leaves it alone).
class ThreadScope {
 public:
  explicit ThreadScope(int n);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_ = 0;
  bool set_ = false;
};

}  // namespace verisub::runtime::dnnl_backend
