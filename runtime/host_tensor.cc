// HostTensor: element conversions, rounding and wrapping per ONNX element type.
#include "runtime/host_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "base/file_io.h"
#include "runtime/large_buffer.h"

namespace verisub::runtime {

Float32Storage Float32Storage::InFile(std::shared_ptr<const base::MappedFile> file,
                                      std::string_view bytes) {
  Float32Storage s;
  s.file_ = std::make_shared<Stored>();
  s.file_->file = std::move(file);
  s.file_->bytes = bytes;
  return s;
}

bool Float32Storage::InFile() const {
  return file_ && !file_->decoded_ready.load(std::memory_order_acquire);
}

std::string_view Float32Storage::Bytes() const {
  if (InFile()) return file_->bytes;
  const std::vector<float>& v = Floats();
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)};
}

void Float32Storage::WillReadBytes(size_t offset, size_t length) const {
  if (!InFile() || !file_->file || offset >= file_->bytes.size()) return;
  const std::string_view part = file_->bytes.substr(offset, length);
  file_->file->Populate(part.data(), part.size());
}

void Float32Storage::DoneReadingBytes(size_t offset, size_t length) const {
  if (!InFile() || !file_->file || offset >= file_->bytes.size()) return;
  const std::string_view part = file_->bytes.substr(offset, length);
  file_->file->Release(part.data(), part.size());
}

size_t Float32Storage::size() const {
  return file_ ? file_->bytes.size() / sizeof(float) : owned_.size();
}

const std::vector<float>& Float32Storage::Floats() const {
  if (!file_) return owned_;
  std::call_once(file_->decoded_once, [this] {
    // The file's pages mapped in one call, copied, then dropped from the process (the page
    // cache keeps them): the peak holds the floats only.
    file_->decoded = WithBytes(FloatsFromBytes);
    file_->decoded_ready.store(true, std::memory_order_release);
  });
  return file_->decoded;
}

std::vector<float> Float32Storage::Copy() const {
  return InFile() ? WithBytes(FloatsFromBytes) : Floats();
}

std::vector<float>& Float32Storage::Owned() {
  if (file_) {
    // The last holder takes the decoded floats; a shared one copies them.
    if (file_.use_count() == 1) {
      Floats();
      owned_ = std::move(file_->decoded);
    } else {
      owned_ = Floats();
    }
    file_.reset();
  }
  return owned_;
}

std::vector<float> FloatsFromBytes(std::string_view bytes) {
  const size_t n = bytes.size() / sizeof(float);
  std::vector<float> v;
  v.reserve(n);  // allocated, not touched: prepared, then written once
  PrepareLargeWrite(v.data(), n * sizeof(float));
  const char* p = bytes.data();
  if (reinterpret_cast<uintptr_t>(p) % alignof(float) == 0) {
    v.assign(reinterpret_cast<const float*>(p), reinterpret_cast<const float*>(p) + n);
  } else {
    v.resize(n);
    if (n) std::memcpy(v.data(), p, n * sizeof(float));
  }
  return v;
}

bool IsFloatType(int32_t t) {
  return t == kFloat || t == kDouble || t == kFloat16 || t == kBfloat16;
}
bool IsIntegerType(int32_t t) {
  switch (t) {
    case kUint8:
    case kInt8:
    case kUint16:
    case kInt16:
    case kInt32:
    case kInt64:
    case kBool:
    case kUint32:
    case kUint64:
      return true;
    default:
      return false;
  }
}
bool IsSupportedType(int32_t t) { return IsFloatType(t) || IsIntegerType(t); }

std::string ElemTypeName(int32_t t) {
  switch (t) {
    case kFloat:
      return "float";
    case kUint8:
      return "uint8";
    case kInt8:
      return "int8";
    case kUint16:
      return "uint16";
    case kInt16:
      return "int16";
    case kInt32:
      return "int32";
    case kInt64:
      return "int64";
    case kString:
      return "string";
    case kBool:
      return "bool";
    case kFloat16:
      return "float16";
    case kDouble:
      return "double";
    case kUint32:
      return "uint32";
    case kUint64:
      return "uint64";
    case kBfloat16:
      return "bfloat16";
    default:
      return "type" + std::to_string(t);
  }
}

int ElemTypeSize(int32_t t) {
  switch (t) {
    case kUint8:
    case kInt8:
    case kBool:
      return 1;
    case kUint16:
    case kInt16:
    case kFloat16:
    case kBfloat16:
      return 2;
    case kFloat:
    case kInt32:
    case kUint32:
      return 4;
    case kInt64:
    case kDouble:
    case kUint64:
      return 8;
    default:
      return 0;
  }
}

int64_t CountElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::string DimsToString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

uint16_t FloatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t mant = x & 0x7fffff;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(sign | half);
}

float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  int32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      float v = std::ldexp(static_cast<float>(mant), -24);
      return sign ? -v : v;
    }
  } else if (exp == 0x1f) {
    x = sign | 0x7f800000 | (mant << 13);
  } else {
    x = sign | (static_cast<uint32_t>(exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

double RoundToFloat16(double v) { return HalfBitsToFloat(FloatToHalfBits(static_cast<float>(v))); }

double RoundToBfloat16(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) return v;
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  x = (x + rounding) & 0xffff0000u;
  std::memcpy(&f, &x, 4);
  return f;
}

namespace {

int64_t WrapInt(int32_t type, int64_t v) {
  switch (type) {
    case kUint8:
      return static_cast<uint8_t>(v);
    case kInt8:
      return static_cast<int8_t>(v);
    case kUint16:
      return static_cast<uint16_t>(v);
    case kInt16:
      return static_cast<int16_t>(v);
    case kInt32:
      return static_cast<int32_t>(v);
    case kUint32:
      return static_cast<uint32_t>(v);
    case kBool:
      return v != 0;
    default:
      return v;
  }
}

// Float to integer conversion as a C cast would do it, without undefined behaviour for
// out-of-range values.
int64_t SafeTrunc(int32_t type, double d) {
  if (type == kBool) return d != 0.0;
  if (std::isnan(d)) return 0;
  if (d >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (d <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

}  // namespace

int64_t HostTensor::NumElements() const { return CountElements(dims); }

double HostTensor::DoubleAt(int64_t i) const {
  if (elem_type == kFloat) return f32[i];
  if (IsFloatType(elem_type)) return f64[i];
  if (elem_type == kUint64) return static_cast<double>(static_cast<uint64_t>(ints[i]));
  return static_cast<double>(ints[i]);
}

int64_t HostTensor::IntAt(int64_t i) const {
  if (IsIntegerType(elem_type)) return ints[i];
  return SafeTrunc(kInt64, DoubleAt(i));
}

std::vector<double> HostTensor::ToDoubles() const {
  if (elem_type == kFloat) return {f32.begin(), f32.end()};
  if (IsFloatType(elem_type)) return f64;
  std::vector<double> out(ints.size());
  for (size_t i = 0; i < ints.size(); ++i) out[i] = DoubleAt(static_cast<int64_t>(i));
  return out;
}

std::vector<int64_t> HostTensor::ToInts() const {
  if (IsIntegerType(elem_type)) return ints;
  std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(NumElements(), 0)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = IntAt(static_cast<int64_t>(i));
  return out;
}

HostTensor HostTensor::FromDoubles(int32_t type, std::vector<int64_t> dims,
                                   const std::vector<double>& values) {
  HostTensor t;
  t.elem_type = type;
  t.dims = std::move(dims);
  if (type == kFloat) {
    t.f32.assign(values.begin(), values.end());
  } else if (type == kDouble) {
    t.f64 = values;
  } else if (type == kFloat16 || type == kBfloat16) {
    t.f64.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      t.f64[i] = type == kFloat16 ? RoundToFloat16(values[i]) : RoundToBfloat16(values[i]);
  } else {
    t.ints.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (type == kUint64 && values[i] >= 9.2e18) {
        t.ints[i] = static_cast<int64_t>(static_cast<uint64_t>(values[i]));
      } else {
        t.ints[i] = WrapInt(type, SafeTrunc(type, values[i]));
      }
    }
  }
  return t;
}

HostTensor HostTensor::FromInts(int32_t type, std::vector<int64_t> dims,
                                const std::vector<int64_t>& values) {
  if (IsFloatType(type)) {
    std::vector<double> d(values.begin(), values.end());
    return FromDoubles(type, std::move(dims), d);
  }
  HostTensor t;
  t.elem_type = type;
  t.dims = std::move(dims);
  t.ints.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) t.ints[i] = WrapInt(type, values[i]);
  return t;
}

HostTensor HostTensor::Gather(std::vector<int64_t> out_dims,
                              const std::vector<int64_t>& index) const {
  HostTensor t;
  t.elem_type = elem_type;
  t.dims = std::move(out_dims);
  if (elem_type == kFloat) {
    t.f32.resize(index.size());
    for (size_t i = 0; i < index.size(); ++i) t.f32[i] = f32[index[i]];
  } else if (IsFloatType(elem_type)) {
    t.f64.resize(index.size());
    for (size_t i = 0; i < index.size(); ++i) t.f64[i] = f64[index[i]];
  } else {
    t.ints.resize(index.size());
    for (size_t i = 0; i < index.size(); ++i) t.ints[i] = ints[index[i]];
  }
  return t;
}

HostTensor HostTensor::GatherBlocks(std::vector<int64_t> out_dims,
                                    const std::vector<int64_t>& starts, int64_t block) const {
  HostTensor t;
  t.elem_type = elem_type;
  t.dims = std::move(out_dims);
  const size_t n = static_cast<size_t>(block), total = starts.size() * n;
  auto copy = [&](const auto* from, auto* to) {
    if (total == 0) return;  // no element (and maybe no storage: memcpy takes no null)
    for (size_t k = 0; k < starts.size(); ++k)
      std::memcpy(to + k * n, from + starts[k], n * sizeof(*from));
  };
  if (elem_type == kFloat) {
    t.f32.resize(total);
    copy(f32.data(), t.f32.data());
  } else if (IsFloatType(elem_type)) {
    t.f64.resize(total);
    copy(f64.data(), t.f64.data());
  } else {
    t.ints.resize(total);
    copy(ints.data(), t.ints.data());
  }
  return t;
}

}  // namespace verisub::runtime
