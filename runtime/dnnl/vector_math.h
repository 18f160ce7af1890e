// Elementwise functions the backend computes in host passes of its own where oneDNN 2.6's are
// slow or missing: erf (no eltwise in oneDNN) and SiLU (its swish is exp-based and heavy inside a
// convolution's epilogue). Each works on n floats, x and y may be the same array.
#ifndef VERISUB_RUNTIME_DNNL_VECTOR_MATH_H_
#define VERISUB_RUNTIME_DNNL_VECTOR_MATH_H_

#include <cstdint>

namespace verisub::runtime::dnnl_backend {

// erf(x): x P(x^2) / Q(x^2) over x clamped to [-4, 4], the rational approximation float32 erf has
// in Eigen, XLA and TVM (their coefficients); NaN stays NaN.
void ErfOf(const float* x, float* y, int64_t n);

// x * sigmoid(x) = x / (1 + exp(-x)): exp by Cephes' expf polynomial after range reduction,
// then one division; within 3e-7 relative of the exact value, 0 below x = -88, NaN kept.
// AVX-512 or AVX2 by what the CPU has (the same formula, the same results), else scalar.
void SiluOf(const float* x, float* y, int64_t n);

}  // namespace verisub::runtime::dnnl_backend

#endif  // VERISUB_RUNTIME_DNNL_VECTOR_MATH_H_
