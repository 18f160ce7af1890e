// The oneDNN CPU backend: convolution, matmul, pooling, eltwise, binary, concat, normalization
// and softmax kernels with prepare-time fusion (bias, batch normalization, activations and a
// residual add into the convolution) and blocked layouts chosen by oneDNN; every other node runs
// on the reference kernels with reorders to and from plain around it.
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace verisub::runtime {

std::unique_ptr<Backend> MakeDnnlBackend();

}  // namespace verisub::runtime
