// ValidateModel, SerializeModel and WriteModelFile.
#include "runtime/models/model_io.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>

#include "base/file_io.h"

namespace verisub::runtime::models {
namespace {

std::string ModelName(const onnx::ModelProto& model) {
  return "model '" + model.graph().name() + "'";
}

// A tensor type with a known element type and every dimension a concrete positive value.
bool IsStatic(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return false;
  const onnx::TypeProto_Tensor& t = type.tensor_type();
  if (t.elem_type() == onnx::TensorProto::UNDEFINED || !t.has_shape()) return false;
  for (const onnx::TensorShapeProto_Dimension& d : t.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() <= 0) return false;
  }
  return true;
}

}  // namespace

StatusOr<onnx::ModelProto> InferModelShapes(const onnx::ModelProto& model) {
  // The ONNX library reports problems by throwing; the library API must not, so they become
  // Status values here.
  onnx::ModelProto inferred = model;
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return InvalidArgument(ModelName(model) + ": ONNX checker: " + e.what());
  }
  try {
    onnx::ShapeInferenceOptions strict(/*check_type_val=*/true, /*strict_mode_val=*/1,
                                       /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), strict);
  } catch (const std::exception& e) {
    return InvalidArgument(ModelName(model) + ": shape inference: " + e.what());
  }
  const onnx::GraphProto& g = inferred.graph();
  std::map<std::string, const onnx::TypeProto*> types;
  for (const auto& v : g.input()) types[v.name()] = &v.type();
  for (const auto& v : g.value_info()) types[v.name()] = &v.type();
  for (const auto& v : g.output()) {
    if (!IsStatic(v.type())) {
      return InvalidArgument(ModelName(model) + ": graph output '" + v.name() +
                             "' has no static shape");
    }
    types[v.name()] = &v.type();
  }
  for (const onnx::NodeProto& node : g.node()) {
    for (const std::string& out : node.output()) {
      auto it = types.find(out);
      if (it == types.end() || !IsStatic(*it->second)) {
        return InvalidArgument(ModelName(model) + ": node '" + node.name() + "' (" +
                               node.op_type() + "): output '" + out +
                               "' has no inferred static shape");
      }
    }
  }
  return inferred;
}

Status ValidateModel(const onnx::ModelProto& model) {
  StatusOr<onnx::ModelProto> inferred = InferModelShapes(model);
  return inferred.status();
}

StatusOr<std::string> SerializeModel(const onnx::ModelProto& model) {
  if (model.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidArgument(ModelName(model) + " exceeds protobuf's 2 GiB message limit");
  }
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!model.SerializeToCodedStream(&coded)) {
      return InternalError(ModelName(model) + ": protobuf serialization failed");
    }
  }
  return bytes;
}

Status WriteModelFile(const onnx::ModelProto& model, const std::string& path) {
  VERISUB_ASSIGN_OR_RETURN(const std::string bytes, SerializeModel(model));
  return base::WriteFileAtomically(path, bytes);
}

Status WriteModels(const std::vector<std::string>& names, const std::string& dir,
                   const BuildOptions& options, std::string* report) {
  std::vector<std::string> all;
  if (names.empty())
    for (const ModelEntry& m : ListModels()) all.emplace_back(m.name);
  VERISUB_RETURN_IF_ERROR(base::CheckOutputDirectory(dir));
  for (const std::string& name : names.empty() ? all : names) {
    const auto start = std::chrono::steady_clock::now();
    VERISUB_ASSIGN_OR_RETURN(onnx::ModelProto model, BuildModel(name, options));
    const double build_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    VERISUB_RETURN_IF_ERROR(ValidateModel(model));
    const std::string path = (std::filesystem::path(dir) / (name + ".onnx")).string();
    VERISUB_RETURN_IF_ERROR(WriteModelFile(model, path));
    char line[512];
    std::snprintf(line, sizeof line, "%-16s %5d nodes %10.1f MiB  built in %6.0f ms  ",
                  name.c_str(), model.graph().node_size(),
                  static_cast<double>(std::filesystem::file_size(path)) / (1024.0 * 1024.0),
                  build_ms);
    *report += line + path + "\n";
  }
  return Status::Ok();
}

}  // namespace verisub::runtime::models
