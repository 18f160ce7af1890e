// Elementwise functions the backend computes in host passes of its own where oneDNN 2.6's are
// slow or missing: erf (no eltwise in oneDNN), SiLU (its swish is exp-based and heavy inside a
// convolution's epilogue) and GELU (its gelu_erf eltwise takes twice the time of this one). Each
// works on n floats; x and y may be the same array.
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

// GELU, x/2 (1 + erf(x / sqrt 2)), with ErfOf's approximation: within 1e-6 of the exact value
// relative to max(|x|, 1); NaN kept. AVX-512, AVX2 or scalar with identical results.
void GeluOf(const float* x, float* y, int64_t n);

}  // namespace verisub::runtime::dnnl_backend

#endif  // VERISUB_RUNTIME_DNNL_VECTOR_MATH_H_
