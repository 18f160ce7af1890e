// The oneDNN CPU backend: convolution, matmul, pooling, eltwise, binary, concat, normalization
// and softmax kernels with prepare-time fusion (bias, batch normalization, activations and a
// residual add into the convolution) and blocked layouts chosen by oneDNN; every other node runs
// on the reference kernels with reorders to and from plain around it.
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.h"

namespace verisub::runtime {

std::unique_ptr<Backend> MakeDnnlBackend();

namespace dnnl_backend {
// True when oneDNN on this CPU has native bfloat16 kernels (avx512_core_bf16 and above): only
// then does the backend accept PrepareOptions::storage_types with bfloat16.
bool HasBf16Kernels();
// True when this CPU has 8-bit dot-product instructions (AVX512-VNNI or AVX-VNNI): only then do
// quantized convolutions run in int8 (without them oneDNN's u8 x s8 products saturate 16-bit
// intermediate sums).
bool HasInt8DotKernels();
// HasInt8DotKernels() unless VERISUB_INT8=off (diagnosis): whether the int8 kernels of QDQ models
// are used.
bool Int8KernelsEnabled();
// oneDNN's effective ISA on this CPU: "avx2", "avx512_core_bf16", ...
std::string CpuIsaName();
}  // namespace dnnl_backend

}  // namespace verisub::runtime
