// Conversion between ONNX TensorProto and HostTensor.
#include "runtime/tensor_proto.h"

#include <cstring>

#include "onnx/onnx_pb.h"
#include "runtime/large_buffer.h"
#include "runtime/memory_budget.h"

namespace verisub::runtime {
namespace {

template <typename T>
T LoadLe(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // the build targets little-endian hosts only
  return v;
}

double DecodeHalfLike(int32_t type, uint16_t bits) {
  if (type == kFloat16) return HalfBitsToFloat(bits);
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

HostTensor DecodeRaw(int32_t type, std::vector<int64_t> dims, std::string_view raw, int64_t n) {
  HostTensor t;
  t.elem_type = type;
  t.dims = std::move(dims);
  const char* p = raw.data();
  int sz = ElemTypeSize(type);
  if (type == kFloat) {
    t.f32 = FloatsFromBytes(raw);  // its size checked against the dims
  } else if (type == kDouble) {
    t.f64.resize(n);
    if (n) std::memcpy(t.f64.data(), p, n * 8);
  } else if (type == kFloat16 || type == kBfloat16) {
    t.f64.resize(n);
    for (int64_t i = 0; i < n; ++i) t.f64[i] = DecodeHalfLike(type, LoadLe<uint16_t>(p + 2 * i));
  } else {
    t.ints.resize(n);
    for (int64_t i = 0; i < n; ++i) {
      const char* q = p + sz * i;
      switch (type) {
        case kUint8:
          t.ints[i] = LoadLe<uint8_t>(q);
          break;
        case kInt8:
          t.ints[i] = LoadLe<int8_t>(q);
          break;
        case kBool:
          t.ints[i] = LoadLe<uint8_t>(q) != 0;
          break;
        case kUint16:
          t.ints[i] = LoadLe<uint16_t>(q);
          break;
        case kInt16:
          t.ints[i] = LoadLe<int16_t>(q);
          break;
        case kInt32:
          t.ints[i] = LoadLe<int32_t>(q);
          break;
        case kUint32:
          t.ints[i] = LoadLe<uint32_t>(q);
          break;
        default:
          t.ints[i] = LoadLe<int64_t>(q);
          break;
      }
    }
  }
  return t;
}

}  // namespace

StatusOr<HostTensor> FromTensorProto(const onnx::TensorProto& proto) {
  return FromTensorProto(proto, std::nullopt);
}

StatusOr<HostTensor> FromTensorProto(const onnx::TensorProto& proto,
                                     std::optional<std::string_view> given_raw) {
  return FromTensorProto(proto, given_raw, nullptr);
}

StatusOr<HostTensor> FromTensorProto(const onnx::TensorProto& proto,
                                     std::optional<std::string_view> given_raw,
                                     std::shared_ptr<const base::MappedFile> file) {
  const std::string what = "tensor '" + proto.name() + "'";
  int32_t type = proto.data_type();
  if (!IsSupportedType(type))
    return Unimplemented(what + " has unsupported element type " + ElemTypeName(type));
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return FailedPrecondition(what +
                              " keeps its data in another file (ONNX external data): "
                              "import the model from its file, so the data beside it is found");
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  int64_t n = CountElements(dims);
  if (n < 0) return DataLoss(what + " has invalid dimensions " + DimsToString(dims));
  // Checked: the byte count of a huge shape overflowed here (found by fuzzing, UBSan).
  const int64_t bytes = TensorBytes(dims, ElemTypeSize(type));
  if (bytes < 0)
    return DataLoss(what + " has dimensions whose size overflows " + DimsToString(dims));
  if (given_raw || proto.has_raw_data()) {
    const std::string_view raw = given_raw ? *given_raw : std::string_view(proto.raw_data());
    if (static_cast<uint64_t>(raw.size()) != static_cast<uint64_t>(bytes))
      return DataLoss(what + " of shape " + DimsToString(dims) + " and type " + ElemTypeName(type) +
                      " needs " + std::to_string(bytes) + " bytes of raw data, has " +
                      std::to_string(raw.size()));
    if (file && given_raw && type == kFloat) {  // float32 is its own raw form: left where it lies
      HostTensor t;
      t.elem_type = type;
      t.dims = std::move(dims);
      t.f32 = Float32Storage::InFile(std::move(file), raw);
      return t;
    }
    return DecodeRaw(type, std::move(dims), raw, n);
  }
  auto size_error = [&](int64_t have) {
    return DataLoss(what + " of shape " + DimsToString(dims) + " has " + std::to_string(have) +
                    " values, expected " + std::to_string(n));
  };
  switch (type) {
    case kFloat: {
      if (proto.float_data_size() != n) return size_error(proto.float_data_size());
      HostTensor t;
      t.elem_type = type;
      t.dims = std::move(dims);
      t.f32.assign(proto.float_data().begin(), proto.float_data().end());
      return t;
    }
    case kDouble: {
      if (proto.double_data_size() != n) return size_error(proto.double_data_size());
      std::vector<double> v(proto.double_data().begin(), proto.double_data().end());
      return HostTensor::FromDoubles(type, std::move(dims), v);
    }
    case kFloat16:
    case kBfloat16: {
      if (proto.int32_data_size() != n) return size_error(proto.int32_data_size());
      std::vector<double> v(n);
      for (int64_t i = 0; i < n; ++i)
        v[i] = DecodeHalfLike(type, static_cast<uint16_t>(proto.int32_data(i)));
      HostTensor t;
      t.elem_type = type;
      t.dims = std::move(dims);
      t.f64 = std::move(v);
      return t;
    }
    case kInt64: {
      if (proto.int64_data_size() != n) return size_error(proto.int64_data_size());
      std::vector<int64_t> v(proto.int64_data().begin(), proto.int64_data().end());
      return HostTensor::FromInts(type, std::move(dims), v);
    }
    case kUint32:
    case kUint64: {
      if (proto.uint64_data_size() != n) return size_error(proto.uint64_data_size());
      std::vector<int64_t> v(n);
      for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(proto.uint64_data(i));
      return HostTensor::FromInts(type, std::move(dims), v);
    }
    default: {
      if (proto.int32_data_size() != n) return size_error(proto.int32_data_size());
      std::vector<int64_t> v(proto.int32_data().begin(), proto.int32_data().end());
      return HostTensor::FromInts(type, std::move(dims), v);
    }
  }
}

std::string_view RawTensorBytes(const HostTensor& t, std::string* scratch) {
  const int64_t n = t.NumElements();
  // Float32 storage is the raw form already (x86-64 and ARM hosts are little-endian).
  if (t.elem_type == kFloat && static_cast<int64_t>(t.f32.size()) == n) return t.f32.Bytes();
  int sz = ElemTypeSize(t.elem_type);
  std::string& raw = *scratch;
  raw.assign(static_cast<size_t>(n * sz), '\0');
  char* p = raw.data();
  for (int64_t i = 0; i < n; ++i) {
    char* q = p + sz * i;
    switch (t.elem_type) {
      case kFloat:
        std::memcpy(q, &t.f32[i], 4);
        break;
      case kDouble:
        std::memcpy(q, &t.f64[i], 8);
        break;
      case kFloat16: {
        uint16_t h = FloatToHalfBits(static_cast<float>(t.f64[i]));
        std::memcpy(q, &h, 2);
        break;
      }
      case kBfloat16: {
        float f = static_cast<float>(t.f64[i]);
        uint32_t x;
        std::memcpy(&x, &f, 4);
        uint16_t h = static_cast<uint16_t>(x >> 16);
        std::memcpy(q, &h, 2);
        break;
      }
      default: {
        int64_t v = t.ints[i];
        std::memcpy(q, &v, sz);  // little-endian: the low bytes come first
        break;
      }
    }
  }
  return raw;
}

void ToTensorProto(const HostTensor& t, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(t.elem_type);
  for (int64_t d : t.dims) proto->add_dims(d);
  std::string scratch;
  const std::string_view raw = RawTensorBytes(t, &scratch);
  if (raw.empty()) return;  // no elements: no data field (the checker refuses one)
  if (raw.data() == scratch.data())
    proto->set_raw_data(std::move(scratch));
  else
    proto->set_raw_data(raw.data(), raw.size());
}

}  // namespace verisub::runtime
