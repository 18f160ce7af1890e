// Host elementwise functions (vector_math.h).
#include "runtime/dnnl/vector_math.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/erf_rational.h"

namespace verisub::runtime::dnnl_backend {

__attribute__((target_clones("avx512f", "avx2", "default"))) void ErfOf(const float* x, float* y,
                                                                        int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] < -kErfClamp ? -kErfClamp : x[i];
    v = v > kErfClamp ? kErfClamp : v;
    const float v2 = v * v;
    float p = kErfP[0];
    for (int k = 1; k < 7; ++k) p = p * v2 + kErfP[k];
    float q = kErfQ[0];
    for (int k = 1; k < 5; ++k) q = q * v2 + kErfQ[k];
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
// e^a for a within [-88, 88] as the polynomial's value p (e^r) and the power of two 2^k it is
// scaled by; the vector forms compute the very same operations.
void ExpParts(float a, float* p_out, float* scale_out) {
  const float k = std::nearbyint(a * kLog2e);
  float r = std::fma(k, kLn2Hi, a);
  r = std::fma(k, kLn2Lo, r);
  float p = std::fma(kP0, r, kP1);
  p = std::fma(p, r, kP2);
  p = std::fma(p, r, kP3);
  p = std::fma(p, r, kP4);
  p = std::fma(p, r, kP5);
  *p_out = std::fma(p, r * r, r + 1.f);
  const int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  std::memcpy(scale_out, &bits, sizeof(float));
}

float SiluScalar(float v) {
  float a = std::fmax(-v, -kExpClamp);  // NaN -> the clamp; v keeps the NaN
  a = std::fmin(a, kExpClamp);
  float p, scale;
  ExpParts(a, &p, &scale);
  const float s = v / std::fma(p, scale, 1.f);
  return v < kSiluZeroBelow ? 0.f : s;
}

// GELU's constant: erf(x / sqrt 2) by ErfOf's rational approximation (x / sqrt 2 clamped to
// [-4, 4]), then x/2 (1 + erf).
constexpr float kRsqrt2 = 0.70710678118654752f;

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

// Softmax: exp(d) for d = x - max <= 0 (NaN where the row holds one: the caller tells), 0 from
// d = -88 down (2^-127 comes out 0).
float SoftmaxExp(float d) {
  float p, scale;
  ExpParts(std::fmax(d, -kExpClamp), &p, &scale);
  return p * scale;
}

// The 16 lanes' partial sums of a softmax row, added up in the one order every form uses.
float SumOfLanes(const float* lanes) {
  float t[8];
  for (int i = 0; i < 8; ++i) t[i] = lanes[i] + lanes[i + 8];
  for (int i = 0; i < 4; ++i) t[i] += t[i + 4];
  for (int i = 0; i < 2; ++i) t[i] += t[i + 2];
  return t[0] + t[1];
}

// The exps of the row's elements from `from` on (the vector loops' tail): stored, added to
// their lanes; whether one is NaN.
bool SoftmaxExpTail(const float* x, float* y, int64_t from, int64_t cols, float max, float* lanes) {
  bool bad = false;
  for (int64_t i = from; i < cols; ++i) {
    const float d = x[i] - max;
    bad |= std::isnan(d);
    y[i] = SoftmaxExp(d);
    lanes[i % 16] += y[i];
  }
  return bad;
}

// A softmax row's end from `from` on: y times the reciprocal of the lanes' sum.
void SoftmaxFinishScalar(float* y, int64_t from, int64_t cols, float inv) {
  for (int64_t i = from; i < cols; ++i) y[i] *= inv;
}

void SoftmaxPortable(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r, x += cols, y += cols) {
    float max = -INFINITY;
    for (int64_t i = 0; i < cols; ++i) max = std::fmax(max, x[i]);
    float lanes[16] = {};
    if (SoftmaxExpTail(x, y, 0, cols, max, lanes))
      std::fill(y, y + cols, NAN);
    else
      SoftmaxFinishScalar(y, 0, cols, 1.f / SumOfLanes(lanes));
  }
}

// GCC 12's AVX-512 headers start their intrinsics from _mm512_undefined_ps(), which
// -Wmaybe-uninitialized reports once inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"), always_inline)) inline __m512 ExpParts512(__m512 a,
                                                                            __m512* scale) {
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(a, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(k, _mm512_set1_ps(kLn2Hi), a);
  r = _mm512_fmadd_ps(k, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kP0), r, _mm512_set1_ps(kP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP5));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  *scale = _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23));
  return p;
}

__attribute__((target("avx512f"))) void SiluAvx512(const float* x, float* y, int64_t n) {
  const __m512 lo = _mm512_set1_ps(-kExpClamp), hi = _mm512_set1_ps(kExpClamp),
               one = _mm512_set1_ps(1.f), zero_below = _mm512_set1_ps(kSiluZeroBelow),
               zero = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    __m512 a = _mm512_max_ps(_mm512_sub_ps(zero, v), lo);
    a = _mm512_min_ps(a, hi);
    __m512 scale;
    const __m512 p = ExpParts512(a, &scale);
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

__attribute__((target("avx512f"))) void SoftmaxAvx512(const float* x, float* y, int64_t rows,
                                                      int64_t cols) {
  const int64_t full = cols / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (cols - full)) - 1u);
  const __m512 lo = _mm512_set1_ps(-kExpClamp);
  for (int64_t r = 0; r < rows; ++r, x += cols, y += cols) {
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int64_t i = 0; i < full; i += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(x + i));
    if (tail) m = _mm512_mask_max_ps(m, tail, m, _mm512_maskz_loadu_ps(tail, x + full));
    const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(m));
    __m512 sum = _mm512_setzero_ps(), scale;
    __mmask16 bad = 0;
    for (int64_t i = 0; i < full; i += 16) {
      const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i), max);
      bad |= _mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q);
      const __m512 poly = ExpParts512(_mm512_max_ps(d, lo), &scale);
      const __m512 e = _mm512_mul_ps(poly, scale);
      _mm512_storeu_ps(y + i, e);
      sum = _mm512_add_ps(sum, e);
    }
    if (tail) {
      const __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + full), max);
      bad |= _mm512_mask_cmp_ps_mask(tail, d, d, _CMP_UNORD_Q);
      const __m512 poly = ExpParts512(_mm512_max_ps(d, lo), &scale);
      const __m512 e = _mm512_mul_ps(poly, scale);
      _mm512_mask_storeu_ps(y + full, tail, e);
      sum = _mm512_mask_add_ps(sum, tail, sum, e);
    }
    if (bad) {
      std::fill(y, y + cols, NAN);
      continue;
    }
    // SumOfLanes' order: lanes i and i + 8, then i and i + 4, i and i + 2, the last two.
    const __m256 t =
        _mm256_add_ps(_mm512_castps512_ps256(sum),
                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sum), 1)));
    const __m128 u = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    const __m128 v = _mm_add_ps(u, _mm_movehl_ps(u, u));
    const float total = _mm_cvtss_f32(_mm_add_ss(v, _mm_shuffle_ps(v, v, 1)));
    const __m512 inv = _mm512_set1_ps(1.f / total);
    for (int64_t i = 0; i < full; i += 16)
      _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
    if (tail)
      _mm512_mask_storeu_ps(y + full, tail,
                            _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + full), inv));
  }
}
#pragma GCC diagnostic pop

__attribute__((target("avx2,fma"), always_inline)) inline __m256 ExpParts256(__m256 a,
                                                                             __m256* scale) {
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(a, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(k, _mm256_set1_ps(kLn2Hi), a);
  r = _mm256_fmadd_ps(k, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kP0), r, _mm256_set1_ps(kP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP5));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  *scale = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23));
  return p;
}

__attribute__((target("avx2,fma"))) void SiluAvx2(const float* x, float* y, int64_t n) {
  const __m256 lo = _mm256_set1_ps(-kExpClamp), hi = _mm256_set1_ps(kExpClamp),
               one = _mm256_set1_ps(1.f), zero_below = _mm256_set1_ps(kSiluZeroBelow),
               zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    __m256 a = _mm256_max_ps(_mm256_sub_ps(zero, v), lo);
    a = _mm256_min_ps(a, hi);
    __m256 scale;
    const __m256 p = ExpParts256(a, &scale);
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

__attribute__((target("avx2,fma"))) void SoftmaxAvx2(const float* x, float* y, int64_t rows,
                                                     int64_t cols) {
  const int64_t full = cols / 16 * 16;
  const __m256 lo = _mm256_set1_ps(-kExpClamp);
  for (int64_t r = 0; r < rows; ++r, x += cols, y += cols) {
    __m256 m = _mm256_set1_ps(-INFINITY);
    for (int64_t i = 0; i < full; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
    alignas(32) float lanes[16];
    _mm256_store_ps(lanes, m);
    float row_max = -INFINITY;
    for (int k = 0; k < 8; ++k) row_max = std::fmax(row_max, lanes[k]);
    for (int64_t i = full; i < cols; ++i) row_max = std::fmax(row_max, x[i]);
    const __m256 max = _mm256_set1_ps(row_max);
    __m256 sum[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()}, scale;
    int bad = 0;
    for (int64_t i = 0; i < full; i += 8) {
      const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), max);
      bad |= _mm256_movemask_ps(_mm256_cmp_ps(d, d, _CMP_UNORD_Q));
      const __m256 poly = ExpParts256(_mm256_max_ps(d, lo), &scale);
      const __m256 e = _mm256_mul_ps(poly, scale);
      _mm256_storeu_ps(y + i, e);
      sum[(i / 8) % 2] = _mm256_add_ps(sum[(i / 8) % 2], e);
    }
    _mm256_store_ps(lanes, sum[0]);
    _mm256_store_ps(lanes + 8, sum[1]);
    if (SoftmaxExpTail(x, y, full, cols, row_max, lanes) || bad) {
      std::fill(y, y + cols, NAN);
      continue;
    }
    const float inv_sum = 1.f / SumOfLanes(lanes);
    const __m256 inv = _mm256_set1_ps(inv_sum);
    for (int64_t i = 0; i < full; i += 8)
      _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
    SoftmaxFinishScalar(y, full, cols, inv_sum);
  }
}

void GeluPortable(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = GeluScalar(x[i]);
}

void SiluPortable(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = SiluScalar(x[i]);
}

using FloatFn = void (*)(const float*, float*, int64_t);
using RowsFn = void (*)(const float*, float*, int64_t, int64_t);

// The form of a function for this CPU: AVX-512, else AVX2 with FMA, else scalar.
template <typename Fn>
Fn ForThisCpu(Fn avx512, Fn avx2, Fn portable) {
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

void SoftmaxRowsOf(const float* x, float* y, int64_t rows, int64_t cols) {
  static const RowsFn softmax = ForThisCpu(SoftmaxAvx512, SoftmaxAvx2, SoftmaxPortable);
  softmax(x, y, rows, cols);
}

}  // namespace verisub::runtime::dnnl_backend
