// The analytic (roofline) cost model: time from FLOPs and bytes moved against a device
// description, plus a per-kernel launch overhead. Deterministic; the default for tests.
#pragma once

#include <string>

#include "runtime/cost/cost_model.h"

namespace verisub::runtime {

struct DeviceDescription {
  std::string name;
  double peak_gflops = 0;         // sustained dense arithmetic, GFLOP/s
  double bandwidth_gbps = 0;      // memory bandwidth, GB/s
  double launch_overhead_us = 0;  // fixed cost of each kernel launch
};

// Presets: "cpu-2core" (our CI machines), "v100" (TASO's GPU), "h100".
StatusOr<DeviceDescription> DevicePreset(const std::string& name);

// Work of one operator instance. Constants and reshapes launch nothing (constants are folded
// at load, a reshape is a view); a fused activation adds no memory traffic.
struct OpWork {
  double flops = 0;
  double bytes = 0;
  bool launches_kernel = true;
};
StatusOr<OpWork> EstimateWork(const OpCostQuery& q);

// Floating-point operations that any algorithm computing `q` performs at the least: for a matmul
// one multiply-add per output element and reduced element (2MNK), for a convolution one
// multiply-add per output element and input channel it reads, its window counted as one tap
// (Winograd and FFT convolutions save the window's taps, not the channels'); 0 for every other
// operator. The work half of CostModel::LowerBoundUs.
double MinFlops(const OpCostQuery& q);

class AnalyticCostModel : public CostModel {
 public:
  explicit AnalyticCostModel(DeviceDescription device) : device_(std::move(device)) {}
  std::string Name() const override { return "analytic:" + device_.name; }
  StatusOr<double> OpTimeUs(const OpCostQuery& q) const override;
  const DeviceDescription& device() const { return device_; }

 private:
  DeviceDescription device_;
};

}  // namespace verisub::runtime
