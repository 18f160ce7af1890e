// The cost-model interface: time of one operator instance on a device. Analytic, measured-CPU
// (oneDNN) and measured-GPU (cuDNN/cuBLAS) models all answer the same query, so searches and
// cost tables do not care where a number came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "specs/op_spec.h"
#include "specs/params.h"

namespace verisub::runtime {

class Graph;

// One operator instance, independent of any graph: what a cost table is keyed by.
struct OpCostQuery {
  specs::OpKind op = specs::OpKind::kNumOps;  // kNumOps for an opaque (non-spec) operator
  std::string opaque_type;                    // ONNX op type of an opaque operator
  specs::Params params;
  std::vector<specs::Shape> inputs;
  std::vector<specs::Shape> outputs;
  std::string layout = "default";
  int bytes_per_element = 4;
  // Bit k: input k is a weight (constant at inference), which a measuring engine prepares once
  // (reordered at load) instead of reading it each run.
  uint32_t weight_inputs = 0;

  bool is_opaque() const { return op == specs::OpKind::kNumOps; }
  // Stable text key, e.g. "conv2d[stride_h=1,...] [1,64,56,56],[64,64,3,3] -> [1,64,56,56] @NCHW".
  std::string Key() const;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string Name() const = 0;
  // Estimated time in microseconds; deterministic for a given model.
  virtual StatusOr<double> OpTimeUs(const OpCostQuery& q) const = 0;
  // True when the engine this model prices runs some nodes inside another node's kernel (a
  // convolution's bias, activation and residual add as post-ops), so that a node's cost depends
  // on its neighbours: graph costs then come from AbsorbedNodes, and a search prices each graph
  // it builds as a whole instead of trusting per-node differences alone.
  virtual bool PricesFusion() const { return false; }
  // Per node of `g`: 1 when the engine computes it inside another node's kernel (it costs
  // nothing of its own). Empty when PricesFusion() is false.
  virtual std::vector<char> AbsorbedNodes(const Graph& g) const {
    (void)g;
    return {};
  }
  // Seconds spent so far timing kernels to answer queries (measured models): a search's time
  // limit counts its own work, not the one-time measurements.
  virtual double SecondsMeasuring() const { return 0; }
  // A time OpTimeUs(q) is never below, known without timing anything: a search discards a
  // candidate on it before it pays for a measurement (a model that times kernels would otherwise
  // time every candidate's, however absurd: a 9604x9604 product a rule made of a model's
  // attention scores took 43 s to time). 0 when the model knows no bound, as an analytic model,
  // whose answers cost nothing, need none.
  virtual double LowerBoundUs(const OpCostQuery& q) const {
    (void)q;
    return 0;
  }
};

}  // namespace verisub::runtime
