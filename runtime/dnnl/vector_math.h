// Elementwise functions the backend computes in host passes of its own where oneDNN 2.6's are
// slow or missing: erf (no eltwise in oneDNN), SiLU (its swish is exp-based and heavy inside a
// convolution's epilogue), GELU (its gelu_erf eltwise takes twice the time of this one) and
// softmax along rows (its jit softmax runs rows of a window attention's 49 at 2 ns an element).
// Each works on n floats; x and y may be the same array.
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
// relative to max(|x|, 1); NaN kept, NaN for -inf (-inf times 0, as the graph's erf
// decomposition computes it). AVX-512, AVX2 or scalar with identical results.
void GeluOf(const float* x, float* y, int64_t n);

// Softmax along each row of a rows x cols row-major array: the row's maximum subtracted, exp by
// SiluOf's polynomial (0 below -88), divided by the row's sum; within 1e-6 relative of the exact
// value. The sum is accumulated in 16 lanes (element i in lane i mod 16) added up in one fixed
// order, so AVX-512, AVX2 and scalar give identical results. A row holding NaN or +inf (or -inf
// only) comes out NaN, as exp(x - max) / sum does.
void SoftmaxRowsOf(const float* x, float* y, int64_t rows, int64_t cols);

}  // namespace verisub::runtime::dnnl_backend

#endif  // VERISUB_RUNTIME_DNNL_VECTOR_MATH_H_
