// The cost-model interface: time of one operator instance on a device. Analytic, measured-CPU
// (oneDNN) and measured-GPU (cuDNN/cuBLAS) models all answer the same query, so searches and
// cost tables do not care where a number came from.
#pragma once

#include <string>
#include <vector>

#include "specs/op_spec.h"
#include "specs/params.h"
#include "base/status.h"

namespace verisub::runtime {

// One operator instance, independent of any graph: what a cost table is keyed by.
struct OpCostQuery {
  specs::OpKind op = specs::OpKind::kNumOps;  // kNumOps for an opaque (non-spec) operator
  std::string opaque_type;                    // ONNX op type of an opaque operator
  specs::Params params;
  std::vector<specs::Shape> inputs;
  std::vector<specs::Shape> outputs;
  std::string layout = "default";
  int bytes_per_element = 4;

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
};

}  // namespace verisub::runtime
