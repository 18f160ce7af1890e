// Conversion between ONNX TensorProto and HostTensor.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "runtime/host_tensor.h"

namespace onnx {
class TensorProto;
}
namespace verisub::base {
class MappedFile;
}

namespace verisub::runtime {

// Reads typed fields or raw_data; checks sizes, so a corrupt file gives an error, never a crash.
// External data and string/complex tensors are not supported.
StatusOr<HostTensor> FromTensorProto(const onnx::TensorProto& proto);
// The same with the raw data given apart (`raw`, when set, stands for proto.raw_data(): the
// importer leaves large weights in the mapped file rather than copying them into the proto).
StatusOr<HostTensor> FromTensorProto(const onnx::TensorProto& proto,
                                     std::optional<std::string_view> raw);
// The same with `raw` lying in `file`: a float32 tensor keeps its elements there (see
// Float32Storage), decoded only when something reads them as floats.
StatusOr<HostTensor> FromTensorProto(const onnx::TensorProto& proto,
                                     std::optional<std::string_view> raw,
                                     std::shared_ptr<const base::MappedFile> file);
// Writes raw_data (little-endian) in the tensor's own element type.
void ToTensorProto(const HostTensor& t, const std::string& name, onnx::TensorProto* proto);
// The bytes ToTensorProto would write as raw_data: a view of the tensor's own storage when it
// is already laid out so (float32, in its file or in memory), else converted into `*scratch`.
std::string_view RawTensorBytes(const HostTensor& t, std::string* scratch);

}  // namespace verisub::runtime
