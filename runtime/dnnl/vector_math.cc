// Host elementwise functions (vector_math.h).
#include "runtime/dnnl/vector_math.h"

#include <immintrin.h>

#include <cmath>
#include <cstring>

namespace verisub::runtime::dnnl_backend {

__attribute__((target_clones("avx512f", "avx2", "default"))) void ErfOf(const float* x, float* y,
                                                                        int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] < -4.f ? -4.f : x[i];
    v = v > 4.f ? 4.f : v;
    const float v2 = v * v;
    float p = -2.72614225801306e-10f;
    p = p * v2 + 2.77068142495902e-08f;
    p = p * v2 - 2.10102402082508e-06f;
    p = p * v2 - 5.69250639462346e-05f;
    p = p * v2 - 7.34990630326855e-04f;
    p = p * v2 - 2.95459980854025e-03f;
    p = p * v2 - 1.60960333262415e-02f;
    float q = -1.45660718464996e-05f;
    q = q * v2 - 2.13374055278905e-04f;
    q = q * v2 - 1.68282697438203e-03f;
    q = q * v2 - 7.37332916720468e-03f;
    q = q * v2 - 1.42647390514189e-02f;
    y[i] = v * p / q;
  }
}

namespace {

// SiLU's constants. exp(a) for a = -x clamped to [-88, 88]: k = round(a log2 e), r = a - k ln 2
// (ln 2 in two parts, Cephes' expf), e^r by a degree-7 polynomial, times 2^k built in the
// exponent bits (k within [-127, 127]: 2^-127 comes out 0, harmless beside 1). Below x = -88
// the result is 0 (x e^x underflows there; x / (1 + e^88) would not for large |x|).
constexpr float kExpClamp = 88.f, kSiluZeroBelow = -88.f;
constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = -0.693359375f, kLn2Lo = 2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

// The scalar form: the vector loops' very operations (fused multiply-adds where they fuse), so
// an element gets the same float wherever it falls.
float SiluScalar(float v) {
  float a = std::fmax(-v, -kExpClamp);  // NaN -> the clamp; v keeps the NaN
  a = std::fmin(a, kExpClamp);
  const float k = std::nearbyint(a * kLog2e);
  float r = std::fma(k, kLn2Hi, a);
  r = std::fma(k, kLn2Lo, r);
  float p = std::fma(kP0, r, kP1);
  p = std::fma(p, r, kP2);
  p = std::fma(p, r, kP3);
  p = std::fma(p, r, kP4);
  p = std::fma(p, r, kP5);
  p = std::fma(p, r * r, r + 1.f);
  const int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  const float s = v / std::fma(p, scale, 1.f);
  return v < kSiluZeroBelow ? 0.f : s;
}

// GELU's constants: erf(x / sqrt 2) by ErfOf's rational approximation (x / sqrt 2 clamped to
// [-4, 4]), then x/2 (1 + erf).
constexpr float kRsqrt2 = 0.70710678118654752f, kErfClamp = 4.f;
constexpr float kErfP[7] = {-2.72614225801306e-10f, 2.77068142495902e-08f,  -2.10102402082508e-06f,
                            -5.69250639462346e-05f, -7.34990630326855e-04f, -2.95459980854025e-03f,
                            -1.60960333262415e-02f};
constexpr float kErfQ[5] = {-1.45660718464996e-05f, -2.13374055278905e-04f, -1.68282697438203e-03f,
                            -7.37332916720468e-03f, -1.42647390514189e-02f};

// The scalar form of the vector loops' operations, as SiluScalar.
float GeluScalar(float x) {
  float v = std::fmax(x * kRsqrt2, -kErfClamp);  // NaN -> the clamp; x keeps the NaN
  v = std::fmin(v, kErfClamp);
  const float v2 = v * v;
  float p = std::fma(kErfP[0], v2, kErfP[1]);
  for (int k = 2; k < 7; ++k) p = std::fma(p, v2, kErfP[k]);
  float q = std::fma(kErfQ[0], v2, kErfQ[1]);
  for (int k = 2; k < 5; ++k) q = std::fma(q, v2, kErfQ[k]);
  const float e = (v * p) / q, h = x * 0.5f;
  return std::fma(h, e, h);
}

// GCC 12's AVX-512 headers start their intrinsics from _mm512_undefined_ps(), which
// -Wmaybe-uninitialized reports once inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) void SiluAvx512(const float* x, float* y, int64_t n) {
  const __m512 lo = _mm512_set1_ps(-kExpClamp), hi = _mm512_set1_ps(kExpClamp);
  const __m512 log2e = _mm512_set1_ps(kLog2e), ln2_hi = _mm512_set1_ps(kLn2Hi),
               ln2_lo = _mm512_set1_ps(kLn2Lo), one = _mm512_set1_ps(1.f),
               zero_below = _mm512_set1_ps(kSiluZeroBelow), zero = _mm512_setzero_ps();
  const __m512 p0 = _mm512_set1_ps(kP0), p1 = _mm512_set1_ps(kP1), p2 = _mm512_set1_ps(kP2),
               p3 = _mm512_set1_ps(kP3), p4 = _mm512_set1_ps(kP4), p5 = _mm512_set1_ps(kP5);
  const __m512i bias = _mm512_set1_epi32(127);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    __m512 a = _mm512_max_ps(_mm512_sub_ps(zero, v), lo);
    a = _mm512_min_ps(a, hi);
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(a, log2e),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fmadd_ps(k, ln2_hi, a);
    r = _mm512_fmadd_ps(k, ln2_lo, r);
    __m512 p = _mm512_fmadd_ps(p0, r, p1);
    p = _mm512_fmadd_ps(p, r, p2);
    p = _mm512_fmadd_ps(p, r, p3);
    p = _mm512_fmadd_ps(p, r, p4);
    p = _mm512_fmadd_ps(p, r, p5);
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, one));
    const __m512 scale =
        _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), bias), 23));
    const __m512 s = _mm512_div_ps(v, _mm512_fmadd_ps(p, scale, one));
    const __mmask16 under = _mm512_cmp_ps_mask(v, zero_below, _CMP_LT_OQ);
    _mm512_storeu_ps(y + i, _mm512_mask_blend_ps(under, s, zero));
  }
  for (; i < n; ++i) y[i] = SiluScalar(x[i]);
}
__attribute__((target("avx512f"))) void GeluAvx512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 xv = _mm512_loadu_ps(x + i);
    __m512 v =
        _mm512_max_ps(_mm512_mul_ps(xv, _mm512_set1_ps(kRsqrt2)), _mm512_set1_ps(-kErfClamp));
    v = _mm512_min_ps(v, _mm512_set1_ps(kErfClamp));
    const __m512 v2 = _mm512_mul_ps(v, v);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kErfP[0]), v2, _mm512_set1_ps(kErfP[1]));
    for (int k = 2; k < 7; ++k) p = _mm512_fmadd_ps(p, v2, _mm512_set1_ps(kErfP[k]));
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(kErfQ[0]), v2, _mm512_set1_ps(kErfQ[1]));
    for (int k = 2; k < 5; ++k) q = _mm512_fmadd_ps(q, v2, _mm512_set1_ps(kErfQ[k]));
    const __m512 e = _mm512_div_ps(_mm512_mul_ps(v, p), q);
    const __m512 h = _mm512_mul_ps(xv, _mm512_set1_ps(0.5f));
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(h, e, h));
  }
  for (; i < n; ++i) y[i] = GeluScalar(x[i]);
}
#pragma GCC diagnostic pop

__attribute__((target("avx2,fma"))) void SiluAvx2(const float* x, float* y, int64_t n) {
  const __m256 lo = _mm256_set1_ps(-kExpClamp), hi = _mm256_set1_ps(kExpClamp);
  const __m256 log2e = _mm256_set1_ps(kLog2e), ln2_hi = _mm256_set1_ps(kLn2Hi),
               ln2_lo = _mm256_set1_ps(kLn2Lo), one = _mm256_set1_ps(1.f),
               zero_below = _mm256_set1_ps(kSiluZeroBelow), zero = _mm256_setzero_ps();
  const __m256 p0 = _mm256_set1_ps(kP0), p1 = _mm256_set1_ps(kP1), p2 = _mm256_set1_ps(kP2),
               p3 = _mm256_set1_ps(kP3), p4 = _mm256_set1_ps(kP4), p5 = _mm256_set1_ps(kP5);
  const __m256i bias = _mm256_set1_epi32(127);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    __m256 a = _mm256_max_ps(_mm256_sub_ps(zero, v), lo);
    a = _mm256_min_ps(a, hi);
    const __m256 k =
        _mm256_round_ps(_mm256_mul_ps(a, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fmadd_ps(k, ln2_hi, a);
    r = _mm256_fmadd_ps(k, ln2_lo, r);
    __m256 p = _mm256_fmadd_ps(p0, r, p1);
    p = _mm256_fmadd_ps(p, r, p2);
    p = _mm256_fmadd_ps(p, r, p3);
    p = _mm256_fmadd_ps(p, r, p4);
    p = _mm256_fmadd_ps(p, r, p5);
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, one));
    const __m256 scale =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), bias), 23));
    const __m256 s = _mm256_div_ps(v, _mm256_fmadd_ps(p, scale, one));
    const __m256 under = _mm256_cmp_ps(v, zero_below, _CMP_LT_OQ);
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(s, zero, under));
  }
  for (; i < n; ++i) y[i] = SiluScalar(x[i]);
}

__attribute__((target("avx2,fma"))) void GeluAvx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    __m256 v =
        _mm256_max_ps(_mm256_mul_ps(xv, _mm256_set1_ps(kRsqrt2)), _mm256_set1_ps(-kErfClamp));
    v = _mm256_min_ps(v, _mm256_set1_ps(kErfClamp));
    const __m256 v2 = _mm256_mul_ps(v, v);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kErfP[0]), v2, _mm256_set1_ps(kErfP[1]));
    for (int k = 2; k < 7; ++k) p = _mm256_fmadd_ps(p, v2, _mm256_set1_ps(kErfP[k]));
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(kErfQ[0]), v2, _mm256_set1_ps(kErfQ[1]));
    for (int k = 2; k < 5; ++k) q = _mm256_fmadd_ps(q, v2, _mm256_set1_ps(kErfQ[k]));
    const __m256 e = _mm256_div_ps(_mm256_mul_ps(v, p), q);
    const __m256 h = _mm256_mul_ps(xv, _mm256_set1_ps(0.5f));
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(h, e, h));
  }
  for (; i < n; ++i) y[i] = GeluScalar(x[i]);
}

void GeluPortable(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = GeluScalar(x[i]);
}

void SiluPortable(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = SiluScalar(x[i]);
}

using FloatFn = void (*)(const float*, float*, int64_t);

// The form of a function for this CPU: AVX-512, else AVX2 with FMA, else scalar.
FloatFn ForThisCpu(FloatFn avx512, FloatFn avx2, FloatFn portable) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return avx2;
  return portable;
}

}  // namespace

void SiluOf(const float* x, float* y, int64_t n) {
  static const FloatFn silu = ForThisCpu(SiluAvx512, SiluAvx2, SiluPortable);
  silu(x, y, n);
}

void GeluOf(const float* x, float* y, int64_t n) {
  static const FloatFn gelu = ForThisCpu(GeluAvx512, GeluAvx2, GeluPortable);
  gelu(x, y, n);
}

}  // namespace verisub::runtime::dnnl_backend
