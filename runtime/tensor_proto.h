// Conversion between ONNX TensorProto and HostTensor.
#pragma once

#include <string>

#include "runtime/host_tensor.h"
#include "base/status.h"

namespace onnx {
class TensorProto;
}

namespace verisub::runtime {

// Reads typed fields or raw_data; checks sizes, so a corrupt file gives an error, never a crash.
// External data and string/complex tensors are not supported.
StatusOr<HostTensor> FromTensorProto(const onnx::TensorProto& proto);
// Writes raw_data (little-endian) in the tensor's own element type.
void ToTensorProto(const HostTensor& t, const std::string& name, onnx::TensorProto* proto);

}  // namespace verisub::runtime
