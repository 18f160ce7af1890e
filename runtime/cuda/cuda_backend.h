// The CUDA backend: runs a whole graph on the GPU. Prepare folds constants, fuses each
// convolution with its channel scale, bias, residual add and activation (cuDNN; the algorithm
// chosen by measurement) and each matmul with its bias and activation (cuBLASLt epilogues), runs
// pooling on cuDNN and the other operators on the backend's own kernels (kernels.h), uploads the
// weights once and plans one device arena for the activations from their lifetimes (arena.h).
// From the second run on, the whole model replays as one captured CUDA graph. A node no GPU
// kernel covers runs on the CPU (the reference kernels) with its tensors copied across, counted
// in PrepareStats::fallback_nodes; such a model runs without graph capture. float32 only:
// values stored in another precision are refused at prepare.
#pragma once

#include <memory>

#include "base/status.h"
#include "runtime/backend.h"

namespace verisub::runtime {

// Ok when a CUDA device can be used; otherwise why not (no driver, no device).
Status CudaDeviceStatus();

std::unique_ptr<Backend> MakeCudaBackend();

}  // namespace verisub::runtime
