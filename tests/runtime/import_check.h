// The check every import test starts with: a model imported onto spec operators computes what
// the same model imported all-opaque (the ONNX reference kernels) computes. Test code (gtest).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/graph.h"
#include "runtime/host_tensor.h"

namespace verisub::runtime::testing {

// Imports `bytes` mapped onto spec operators and, separately, with every node opaque (the ONNX
// reference kernels), and expects both imports to succeed and to compute the same outputs on
// random inputs (`seed`), max abs difference below 1e-5. Returns the mapped graph (an empty one
// when its import failed); `inputs` and `outputs`, when given, receive the inputs and the mapped
// graph's outputs (left empty when it did not run), for the caller's further checks.
Graph ImportMappedAndOpaque(const std::string& bytes, uint64_t seed,
                            std::vector<HostTensor>* inputs = nullptr,
                            std::vector<HostTensor>* outputs = nullptr);

}  // namespace verisub::runtime::testing
