// User-given input shapes.
#include "runtime/input_shapes.h"

#include <cerrno>
#include <cstdlib>
#include <set>

#include "onnx/onnx_pb.h"

namespace verisub::runtime {
namespace {

// "[batch,3,224,224]", "?" for a dimension with neither a size nor a name.
std::string DeclaredShape(const onnx::TensorShapeProto& shape) {
  std::string s = "[";
  for (int k = 0; k < shape.dim_size(); ++k) {
    const auto& d = shape.dim(k);
    s += (k ? "," : "") + (d.has_dim_value()   ? std::to_string(d.dim_value())
                           : d.has_dim_param() ? d.dim_param()
                                               : std::string("?"));
  }
  return s + "]";
}

std::set<std::string> InitializerNames(const onnx::GraphProto& g) {
  std::set<std::string> names;
  for (const auto& init : g.initializer()) names.insert(init.name());
  return names;
}

}  // namespace

Status ParseInputShapeFlag(const std::string& arg, InputShapes* shapes) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("--input-shape '" + arg + "': " + why +
                           " (expected NAME=D0,D1,..., e.g. input=1,3,224,224)");
  };
  size_t eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0) return bad("no input name");
  std::string name = arg.substr(0, eq), list = arg.substr(eq + 1);
  if (list.empty()) return bad("no dimensions");
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (true) {
    size_t comma = list.find(',', pos);
    std::string tok =
        list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(tok.c_str(), &end, 10);
    if (tok.empty() || *end != '\0' || errno == ERANGE || v < 1)
      return bad("dimension " + std::to_string(dims.size()) + " is '" + tok +
                 "', not a positive integer");
    dims.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (!shapes->emplace(name, dims).second) return bad("input '" + name + "' is given twice");
  return Status::Ok();
}

Status ApplyInputShapes(const InputShapes& shapes, onnx::GraphProto* g) {
  std::set<std::string> initializers = InitializerNames(*g);
  for (const auto& [name, dims] : shapes) {
    std::string what = "--input-shape " + name + "=";
    // A loop, not a lambda: clang 14 (`make fuzz`) cannot capture a structured binding.
    for (size_t k = 0; k < dims.size(); ++k) what += (k ? "," : "") + std::to_string(dims[k]);
    onnx::ValueInfoProto* input = nullptr;
    std::string inputs;
    for (auto& in : *g->mutable_input()) {
      if (initializers.count(in.name())) continue;
      inputs += (inputs.empty() ? "'" : ", '") + in.name() + "'";
      if (in.name() == name) input = &in;
    }
    if (!input) {
      std::string why =
          initializers.count(name) ? "an initializer, not a graph input" : "not a graph input";
      return NotFound(what + ": '" + name + "' is " + why +
                      " (graph inputs: " + (inputs.empty() ? "none" : inputs) + ")");
    }
    for (size_t k = 0; k < dims.size(); ++k)
      if (dims[k] < 1)
        return InvalidArgument(what + ": dimension " + std::to_string(k) + " is " +
                               std::to_string(dims[k]) + "; sizes must be positive");
    if (!input->type().has_tensor_type())
      return InvalidArgument(what + ": input '" + name + "' is not a tensor");
    const auto& tt = input->type().tensor_type();
    if (tt.has_shape()) {
      const auto& declared = tt.shape();
      if (declared.dim_size() != static_cast<int>(dims.size()))
        return InvalidArgument(what + ": input '" + name + "' has rank " +
                               std::to_string(declared.dim_size()) + " " + DeclaredShape(declared) +
                               " in the model, not " + std::to_string(dims.size()));
      for (size_t k = 0; k < dims.size(); ++k) {
        const auto& d = declared.dim(static_cast<int>(k));
        if (d.has_dim_value() && d.dim_value() >= 0 && d.dim_value() != dims[k])
          return InvalidArgument(what + ": dimension " + std::to_string(k) + " of input '" + name +
                                 "' is fixed at " + std::to_string(d.dim_value()) +
                                 " by the model " + DeclaredShape(declared));
      }
    }
    auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }
  // Stale intermediate shapes could contradict the new input shapes: infer them afresh.
  if (!shapes.empty()) g->clear_value_info();
  return Status::Ok();
}

Status CheckInputShapesStatic(const onnx::GraphProto& g) {
  std::set<std::string> initializers = InitializerNames(g);
  for (const auto& in : g.input()) {
    if (initializers.count(in.name()) || !in.type().has_tensor_type()) continue;
    const auto& tt = in.type().tensor_type();
    std::string where = "graph input '" + in.name() + "'";
    if (!tt.has_shape())
      return InvalidArgument(where + " has no shape (unknown rank): give it with --input-shape " +
                             in.name() + "=D0,D1,... (ImportOptions::input_shapes)");
    std::string fix;
    for (int k = 0; k < tt.shape().dim_size(); ++k) {
      const auto& d = tt.shape().dim(k);
      bool known = d.has_dim_value() && d.dim_value() >= 0;
      fix += (k ? "," : "") + std::to_string(known ? d.dim_value() : 1);
    }
    for (int k = 0; k < tt.shape().dim_size(); ++k) {
      const auto& d = tt.shape().dim(k);
      if (d.has_dim_value() && d.dim_value() >= 0) continue;
      std::string dim = d.has_dim_param() ? "symbolic dimension '" + d.dim_param() + "'"
                                          : std::string("an unknown dimension");
      return InvalidArgument(where + " has " + dim + " (dim " + std::to_string(k) + " of " +
                             DeclaredShape(tt.shape()) + "): give its size with --input-shape " +
                             in.name() + "=" + fix +
                             " or another size (ImportOptions::input_shapes)");
    }
  }
  return Status::Ok();
}

}  // namespace verisub::runtime
