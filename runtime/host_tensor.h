// HostTensor: a dense row-major tensor in CPU memory with an ONNX element type, used for weights
// and by the reference executor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace verisub::runtime {

// ONNX element types (onnx::TensorProto::DataType values), restated so that headers need not
// include the protobuf headers.
enum ElemType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

bool IsFloatType(int32_t t);
bool IsIntegerType(int32_t t);  // signed/unsigned integers and bool
bool IsSupportedType(int32_t t);
std::string ElemTypeName(int32_t t);  // "float", "int64", ...
int ElemTypeSize(int32_t t);          // bytes per element; 0 for strings and unknown types

// Storage follows the element class: float32 in `f32` (the common case, kept compact), the
// other floating types in `f64` (float16 and bfloat16 values already rounded), integers and bools
// in `ints` (uint64 stored bit for bit).
struct HostTensor {
  int32_t elem_type = kFloat;
  std::vector<int64_t> dims;
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<int64_t> ints;

  int64_t NumElements() const;
  std::vector<double> ToDoubles() const;
  std::vector<int64_t> ToInts() const;
  double DoubleAt(int64_t i) const;
  int64_t IntAt(int64_t i) const;

  // Builds a tensor of `type` from values, rounding (float16, bfloat16, float32) or wrapping
  // (narrow integers, bool = nonzero) as that type does.
  static HostTensor FromDoubles(int32_t type, std::vector<int64_t> dims,
                                const std::vector<double>& values);
  static HostTensor FromInts(int32_t type, std::vector<int64_t> dims,
                             const std::vector<int64_t>& values);
  // Same element type and dims, elements picked from this tensor by index (data movement ops).
  HostTensor Gather(std::vector<int64_t> out_dims, const std::vector<int64_t>& index) const;
};

// Element count of a shape, or -1 when a dimension is negative or the count overflows.
int64_t CountElements(const std::vector<int64_t>& dims);
std::string DimsToString(const std::vector<int64_t>& dims);  // "[1,3,224,224]"

// IEEE half and bfloat16 conversions (round to nearest even).
double RoundToFloat16(double v);
double RoundToBfloat16(double v);
uint16_t FloatToHalfBits(float f);
float HalfBitsToFloat(uint16_t h);

}  // namespace verisub::runtime
