// The rational approximation of erf for float32 that the backend's passes (runtime/dnnl/
// vector_math.cc: Erf, GELU) and the generated kernels (fusion/halide_codegen.cc) share, so that
// an erf computes the same function wherever it runs: x clamped to [-kErfClamp, kErfClamp]
// (erf is 1 - 1.5e-8 there), then x p(x^2) / q(x^2), p and q by Horner's rule from their
// highest coefficient (the coefficients Eigen, XLA and TVM use); absolute error below 4e-7.
#ifndef VERISUB_RUNTIME_ERF_RATIONAL_H_
#define VERISUB_RUNTIME_ERF_RATIONAL_H_

namespace verisub::runtime {

inline constexpr float kErfClamp = 4.f;
inline constexpr float kErfP[7] = {
    -2.72614225801306e-10f, 2.77068142495902e-08f,  -2.10102402082508e-06f, -5.69250639462346e-05f,
    -7.34990630326855e-04f, -2.95459980854025e-03f, -1.60960333262415e-02f};
inline constexpr float kErfQ[5] = {-1.45660718464996e-05f, -2.13374055278905e-04f,
                                   -1.68282697438203e-03f, -7.37332916720468e-03f,
                                   -1.42647390514189e-02f};

}  // namespace verisub::runtime

#endif  // VERISUB_RUNTIME_ERF_RATIONAL_H_
