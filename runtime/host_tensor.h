// HostTensor: a dense row-major tensor in CPU memory with an ONNX element type, used for weights
// and by the reference executor.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace verisub::base {
class MappedFile;
}

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

// Float32 elements: owned, or a weight's little-endian bytes where they lie in its mapped model
// file (kept open by the storage), copied out the first time something reads or writes them as
// floats. Readers that want bytes (the export, weight hashes, transposes folded at import) take
// Bytes() and copy nothing: a weight the optimizer does not change is never decoded (VGG-16's 553
// MB written by verisub-opt straight from the file it read). The vector interface is the part of
// std::vector the project uses; a const reader materializes the floats once, thread-safely.
class Float32Storage {
 public:
  Float32Storage() = default;
  Float32Storage(std::vector<float> v) : owned_(std::move(v)) {}  // NOLINT: a vector is one
  Float32Storage(std::initializer_list<float> v) : owned_(v) {}
  // `bytes` (a multiple of 4) inside `file`, which stays mapped while any copy refers to it.
  static Float32Storage InFile(std::shared_ptr<const base::MappedFile> file,
                               std::string_view bytes);

  // True while the elements lie in a file only (nothing has read them as floats yet).
  bool InFile() const;
  // The elements' little-endian bytes, wherever they lie; never copies.
  std::string_view Bytes() const;
  // For a reader of Bytes() in a file: maps the pages of bytes [offset, offset + length) in one
  // call before it reads them, and drops them from the process after (the page cache keeps
  // them), so a weight written out or transposed straight from its file does not stay in the
  // process's memory. No-ops for owned floats.
  void WillReadBytes(size_t offset = 0, size_t length = SIZE_MAX) const;
  void DoneReadingBytes(size_t offset = 0, size_t length = SIZE_MAX) const;
  // f(Bytes()) between the two calls above: a reader of all the bytes (a hash, a write).
  template <class F>
  auto WithBytes(F&& f) const {
    WillReadBytes();
    auto result = f(Bytes());
    DoneReadingBytes();
    return result;
  }

  size_t size() const;
  bool empty() const { return size() == 0; }
  const float* data() const { return Floats().data(); }
  float* data() { return Owned().data(); }
  const float& operator[](size_t i) const { return Floats()[i]; }
  float& operator[](size_t i) { return Owned()[i]; }
  const float* begin() const { return data(); }
  const float* end() const { return data() + size(); }
  float* begin() { return data(); }
  float* end() { return data() + size(); }
  void resize(size_t n) { Owned().resize(n); }
  void resize(size_t n, float v) { Owned().resize(n, v); }
  void reserve(size_t n) { Owned().reserve(n); }
  void clear() { Owned().clear(); }
  void push_back(float v) { Owned().push_back(v); }
  template <class It>
  void assign(It first, It last) {
    file_.reset();
    owned_.assign(first, last);
  }
  void assign(size_t n, float v) {
    file_.reset();
    owned_.assign(n, v);
  }
  template <class It>
  void insert(const float* pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - begin());
    std::vector<float>& v = Owned();
    v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), first, last);
  }
  // A copy of the elements for a writer of its own (a weight with a scale folded into it): read
  // from the file where they lie there only, without decoding them into the shared floats.
  std::vector<float> Copy() const;
  // The elements as a vector (materialized once for a stored weight), or the owned vector.
  const std::vector<float>& Floats() const;
  operator const std::vector<float>&() const { return Floats(); }  // NOLINT: reads as a vector
  std::vector<float>& Owned();  // for writers: a stored weight is copied out first

  friend bool operator==(const Float32Storage& a, const Float32Storage& b) {
    return a.Floats() == b.Floats();
  }
  friend bool operator==(const Float32Storage& a, const std::vector<float>& b) {
    return a.Floats() == b;
  }

 private:
  struct Stored {
    std::shared_ptr<const base::MappedFile> file;
    std::string_view bytes;
    std::once_flag decoded_once;
    std::atomic<bool> decoded_ready{false};
    std::vector<float> decoded;
  };
  std::vector<float> owned_;
  std::shared_ptr<Stored> file_;  // set while the elements lie in a file
};

// Float32 elements from their little-endian bytes (any alignment), into a vector whose pages are
// prepared for the write and written once (large_buffer.h): weights are most of a model's bytes.
std::vector<float> FloatsFromBytes(std::string_view bytes);

// Storage follows the element class: float32 in `f32` (the common case, kept compact), the
// other floating types in `f64` (float16 and bfloat16 values already rounded), integers and bools
// in `ints` (uint64 stored bit for bit).
struct HostTensor {
  int32_t elem_type = kFloat;
  std::vector<int64_t> dims;
  Float32Storage f32;
  std::vector<double> f64;
  std::vector<int64_t> ints;
  // 0: the elements lie in row-major order. B > 0: a float [N, C, H, W] value (C a multiple of B)
  // whose elements lie in channel blocks of B, [N, C/B, H, W, B] (oneDNN's aBcd16b for 16), as a
  // convolution of run-time shape leaves them for the next one. Only the oneDNN backend's host
  // steps make such tensors, and only for readers that take them (dynamic_ops.h); nothing else
  // ever sees one.
  int32_t channel_block = 0;

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
  // The same for runs of `block` consecutive elements: run k starts at element starts[k] (an
  // embedding's rows, a Gather's slices).
  HostTensor GatherBlocks(std::vector<int64_t> out_dims, const std::vector<int64_t>& starts,
                          int64_t block) const;
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
