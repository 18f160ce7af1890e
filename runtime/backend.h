// The backend interface (ONNX Runtime's execution providers are the model): a backend says which
// nodes it can run, prepares a whole graph once (kernels chosen, weights reordered, buffers
// planned) and the prepared model runs many times. Backends own their kernels and memory; the
// caller owns the graph, which must outlive nothing: a prepared model keeps what it needs.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"
#include "runtime/host_tensor.h"
#include "runtime/kernel_generator.h"
#include "specs/layout.h"

namespace verisub::runtime {

struct PrepareOptions {
  // Threads for the backend's kernels; 0 keeps the backend's default (all cores).
  int num_threads = 0;
  // A layout per value id (empty: the backend's own policy). Values whose layout a backend
  // cannot honour are stored plain; graph inputs and outputs are always exchanged plain.
  std::vector<specs::Layout> layouts;
  // An element type per value id to store float values in (empty: as the graph says): kBfloat16
  // asks for bfloat16 storage, computed with float32 accumulation (precision as a layout). A
  // backend without such kernels refuses it; kernels that have no bfloat16 variant read a
  // float32 copy. Graph inputs and outputs are always exchanged in their own type.
  std::vector<int32_t> storage_types;
  // Generated kernels (fusion/, `--fusion subop`): when set, a backend that can runs the
  // generator's clusters of memory-bound nodes as one generated kernel each, where its library
  // does not already fuse them into a convolution or matmul. Null: library kernels only.
  std::shared_ptr<KernelGenerator> generator;
  // Off: nothing fused across nodes, not even the library's own patterns (a convolution's bias
  // and activation, a channel affine chain, an erf GELU): every node its own kernel (`--fusion
  // none`, for measuring what fusion buys). Backends without fusion ignore it.
  bool library_fusion = true;
};

// What a prepared model did at prepare time, for reports.
struct PrepareStats {
  int steps = 0;                               // executed kernels, reorders included
  int fused_nodes = 0;                         // graph nodes absorbed into another node's kernel
  int fallback_nodes = 0;                      // nodes run by the reference kernels
  std::map<std::string, int> fallback_kinds;   // their kinds ("onnx:Erf" -> 2)
  std::map<std::string, int> kernel_variants;  // kernels other than the default the backend
                                               // chose by timing ("winograd" -> 12)
  int reorders = 0;                            // layout conversions between kernels
  int in_place = 0;                            // steps writing over their dead input
  int64_t activation_bytes = 0;                // planned activation memory
  int64_t step_io_bytes = 0;                   // activations read and written by the steps of
                                               // one run (what crosses kernel boundaries)
  int64_t weight_bytes = 0;                    // weights as the kernels keep them
  int64_t shared_weight_bytes = 0;             // of which held with another model of the
                                               // process (the same bytes in the same layout)
  int generated_kernels = 0;                   // steps running a generated kernel
  int generated_nodes = 0;                     // graph nodes they compute
  int kernels_compiled = 0;                    // generated kernels compiled at this prepare
  int kernel_cache_hits = 0;                   // and those found compiled
  int subop_rule_rewrites = 0;                 // rewrites by sub-operator rules in their kernels
  std::string generator_error;                 // why some cluster runs on library kernels
                                               // instead (no compiler, no plugin), if one does
  double generator_plan_seconds = 0;           // the generator's partition into kernels
};

// The time of one executed step of a prepared model (a kernel, a fused group or a reorder).
struct StepProfile {
  std::string name;          // the step's name (its kernel node, or "reorder ...")
  std::string kind;          // the kernel node's kind ("conv2d", "onnx:Pad"), or "reorder"
  int nodes = 0;             // graph nodes it computes (fused groups: more than one)
  std::vector<int> members;  // those nodes (ids in the graph the backend prepared, after any
                             // folding of its own); a reorder's are those of the kernel it feeds
  bool reference = false;    // run by the reference kernels
  double seconds = 0;        // median over the profiled runs, each step timed in its place in a
                             // whole run (the caches as the previous steps leave them)
  double alone_seconds = 0;  // median of the step run again and again by itself (warm caches);
                             // 0 where the backend does not measure it
};

class PreparedModel {
 public:
  virtual ~PreparedModel() = default;
  // Runs the model on one tensor per graph input (in order); returns the graph outputs in order,
  // row-major. Errors name the input or the failing node.
  virtual StatusOr<std::vector<HostTensor>> Run(const std::vector<HostTensor>& inputs) = 0;
  // Median seconds of `runs` executions of the kernel that computes graph node `node` (the whole
  // fused kernel when the node was fused), on the buffers of the last Run.
  virtual StatusOr<double> TimeNode(int node, int runs) = 0;
  // Every step in execution order, on the buffers of the last Run: timed in its place in `runs`
  // whole runs and, with `alone` where the backend can, alone `runs` times (medians; see
  // StepProfile; alone_seconds stays 0 without). Backends without steps of their own return an
  // empty list.
  virtual StatusOr<std::vector<StepProfile>> Profile(int runs, bool alone) {
    (void)runs;
    (void)alone;
    return std::vector<StepProfile>();
  }
  virtual PrepareStats stats() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Name() const = 0;
  // True when the backend has a kernel for the node (shapes and attributes as in `g`). Nodes it
  // cannot run may still appear in a graph given to Prepare when the backend falls back itself.
  virtual bool CanRun(const Graph& g, const Node& n) const = 0;
  virtual StatusOr<std::unique_ptr<PreparedModel>> Prepare(const Graph& g,
                                                           const PrepareOptions& options) const = 0;
};

}  // namespace verisub::runtime
