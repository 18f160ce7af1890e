// Tensor files (see tensor_files.h).
#include "session/tensor_files.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "base/file_io.h"
#include "onnx/onnx_pb.h"
#include "runtime/onnx_import.h"
#include "runtime/tensor_proto.h"

namespace verisub {
namespace {

// DIR/NAME.pb of output k of `g`: NAME is the output's name with unsafe characters replaced.
std::string OutputPath(const std::string& dir, const runtime::Graph& g, size_t k) {
  std::string name = g.value(g.outputs()[k]).name;
  for (char& c : name)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  if (name.empty() || name[0] == '.') name = "output_" + std::to_string(k) + name;
  return dir + "/" + name + ".pb";
}

using runtime::HostTensor;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  for (const char* ext : {".pb", ".npy"})
    if (EndsWith(base, ext)) return base.substr(0, base.size() - std::strlen(ext));
  return base;
}

// The value of `key` in the .npy header's Python dict literal ("'descr': '<f4'"), or "".
std::string HeaderField(const std::string& header, const std::string& key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t v = header.find(':', k);
  if (v == std::string::npos) return "";
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  if (v >= header.size()) return "";
  const char open = header[v];
  const char close = open == '\'' ? '\'' : open == '(' ? ')' : ',';
  const size_t end = header.find(close, v + 1);
  if (end == std::string::npos) return "";
  return open == '\'' || open == '(' ? header.substr(v + 1, end - v - 1)
                                     : header.substr(v, end - v);
}

template <class T>
std::vector<T> Elements(const char* data, int64_t n) {
  std::vector<T> out(n);
  std::memcpy(out.data(), data, n * sizeof(T));
  return out;
}

}  // namespace

StatusOr<runtime::HostTensor> ParseNpy(std::string_view bytes, const std::string& source) {
  auto bad = [&](const std::string& why) {
    return DataLoss(source + ": not a .npy array: " + why);
  };
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY") return bad("no magic string");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i)
      header_len |= size_t{static_cast<unsigned char>(bytes[8 + i])} << (8 * i);
    offset = 12;
  } else {
    return bad("version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) return bad("truncated header");
  const std::string header(bytes.substr(offset, header_len));
  const std::string descr = HeaderField(header, "descr");
  if (HeaderField(header, "fortran_order") != "False")
    return bad("only C-order arrays (fortran_order False)");
  std::vector<int64_t> dims;
  const std::string shape = HeaderField(header, "shape");
  for (size_t at = 0; at < shape.size();) {
    while (at < shape.size() && (shape[at] == ' ' || shape[at] == ',')) ++at;
    if (at >= shape.size()) break;
    size_t end = at;
    while (end < shape.size() && shape[end] >= '0' && shape[end] <= '9') ++end;
    if (end == at || end - at > 15) return bad("shape (" + shape + ")");
    dims.push_back(std::stoll(shape.substr(at, end - at)));
    at = end;
  }
  static const std::map<std::string, std::pair<int32_t, int>> kTypes = {
      {"<f4", {runtime::kFloat, 4}},   {"<f8", {runtime::kDouble, 8}},
      {"<f2", {runtime::kFloat16, 2}}, {"<i8", {runtime::kInt64, 8}},
      {"<i4", {runtime::kInt32, 4}},   {"<i2", {runtime::kInt16, 2}},
      {"|i1", {runtime::kInt8, 1}},    {"|u1", {runtime::kUint8, 1}},
      {"|b1", {runtime::kBool, 1}},    {"<u2", {runtime::kUint16, 2}},
      {"<u4", {runtime::kUint32, 4}},  {"<u8", {runtime::kUint64, 8}}};
  auto type = kTypes.find(descr);
  if (type == kTypes.end()) return bad("element type '" + descr + "' is not supported");
  const int64_t n = runtime::CountElements(dims);
  if (n < 0) return bad("shape (" + shape + ")");
  const size_t data_at = offset + header_len;
  const uint64_t need = static_cast<uint64_t>(n) * type->second.second;
  if (bytes.size() - data_at != need)
    return bad(std::to_string(bytes.size() - data_at) + " data bytes for shape (" + shape + "), " +
               std::to_string(need) + " expected");
  const char* p = bytes.data() + data_at;
  const int32_t t = type->second.first;
  switch (t) {
    case runtime::kFloat: {
      HostTensor h;
      h.elem_type = t;
      h.dims = dims;
      h.f32 = Elements<float>(p, n);
      return h;
    }
    case runtime::kDouble:
      return HostTensor::FromDoubles(t, dims, Elements<double>(p, n));
    case runtime::kFloat16: {
      std::vector<double> v(n);
      const auto bits = Elements<uint16_t>(p, n);
      for (int64_t i = 0; i < n; ++i) v[i] = runtime::HalfBitsToFloat(bits[i]);
      return HostTensor::FromDoubles(t, dims, v);
    }
    default: {
      std::vector<int64_t> v(n);
      for (int64_t i = 0; i < n; ++i) {
        const char* e = p + i * type->second.second;
        switch (t) {
          case runtime::kInt64: {
            int64_t x;
            std::memcpy(&x, e, 8);
            v[i] = x;
            break;
          }
          case runtime::kInt32: {
            int32_t x;
            std::memcpy(&x, e, 4);
            v[i] = x;
            break;
          }
          case runtime::kInt16: {
            int16_t x;
            std::memcpy(&x, e, 2);
            v[i] = x;
            break;
          }
          case runtime::kInt8:
            v[i] = static_cast<int8_t>(*e);
            break;
          case runtime::kUint8:
          case runtime::kBool:
            v[i] = static_cast<uint8_t>(*e);
            break;
          case runtime::kUint16: {
            uint16_t x;
            std::memcpy(&x, e, 2);
            v[i] = x;
            break;
          }
          case runtime::kUint32: {
            uint32_t x;
            std::memcpy(&x, e, 4);
            v[i] = x;
            break;
          }
          default: {
            uint64_t x;
            std::memcpy(&x, e, 8);
            v[i] = static_cast<int64_t>(x);
            break;
          }
        }
      }
      return HostTensor::FromInts(t, dims, v);
    }
  }
}

StatusOr<NamedTensor> ReadTensorFile(const std::string& path, uint64_t max_bytes) {
  auto file = base::MappedFile::Open(path, max_bytes);
  if (!file.ok()) return file.status();
  const std::string_view bytes(static_cast<const char*>(file->data()), file->size());
  NamedTensor out;
  out.name = Stem(path);
  if (EndsWith(path, ".npy")) {
    auto t = ParseNpy(bytes, path);
    if (!t.ok()) return t.status();
    out.tensor = std::move(t).value();
    return out;
  }
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return DataLoss(path + ": not an ONNX TensorProto (nor a .npy file)");
  auto t = runtime::FromTensorProto(proto);
  if (!t.ok()) return t.status().WithContext(path);
  if (!proto.name().empty()) out.name = proto.name();
  out.tensor = std::move(t).value();
  return out;
}

namespace {

// The tensors of `paths` and, per file, the index in `inputs` of the graph input it is for: the
// input it names (tensor name or file stem) when any file names one, else its position; -1 for a
// file naming no input while others do, or past the inputs.
struct MatchedFiles {
  std::vector<NamedTensor> files;
  std::vector<int> input;
};

StatusOr<MatchedFiles> ReadAndMatch(const std::vector<std::string>& paths,
                                    const std::vector<std::string>& inputs) {
  MatchedFiles m;
  bool any_named = false;
  for (const std::string& p : paths) {
    auto t = ReadTensorFile(p);
    if (!t.ok()) return t.status();
    any_named |= std::find(inputs.begin(), inputs.end(), t->name) != inputs.end();
    m.files.push_back(std::move(t).value());
  }
  for (size_t f = 0; f < m.files.size(); ++f) {
    int k = !any_named && f < inputs.size() ? static_cast<int>(f) : -1;
    for (size_t i = 0; any_named && i < inputs.size(); ++i)
      if (inputs[i] == m.files[f].name) k = static_cast<int>(i);
    m.input.push_back(k);
  }
  return m;
}

}  // namespace

StatusOr<std::vector<runtime::HostTensor>> ReadInputs(const std::vector<std::string>& paths,
                                                      const runtime::Graph& g) {
  const std::vector<int>& ins = g.inputs();
  if (paths.size() != ins.size())
    return InvalidArgument("the model has " + std::to_string(ins.size()) + " inputs, got " +
                           std::to_string(paths.size()) + " input files");
  std::string names;
  std::vector<std::string> input_names;
  for (int v : ins) {
    names += (names.empty() ? "'" : ", '") + g.value(v).name + "'";
    input_names.push_back(g.value(v).name);
  }
  VERISUB_ASSIGN_OR_RETURN(MatchedFiles matched, ReadAndMatch(paths, input_names));
  const std::vector<NamedTensor>& files = matched.files;
  std::vector<runtime::HostTensor> out(ins.size());
  std::vector<bool> bound(ins.size(), false);
  for (size_t f = 0; f < files.size(); ++f) {
    const int k = matched.input[f];
    if (k < 0)
      return InvalidArgument(paths[f] + ": names input '" + files[f].name +
                             "', which the model does not have (its inputs: " + names + ")");
    if (bound[k])
      return InvalidArgument(paths[f] + ": a second file for input '" + g.value(ins[k]).name + "'");
    bound[k] = true;
    const runtime::Value& v = g.value(ins[k]);
    const HostTensor& t = files[f].tensor;
    if (t.elem_type != v.elem_type || !v.Accepts(t.dims))
      return InvalidArgument(
          paths[f] + ": input '" + v.name + "' is " + runtime::ElemTypeName(v.elem_type) + " " +
          runtime::DimsToString(v.dims) + ", the file holds " + runtime::ElemTypeName(t.elem_type) +
          " " + runtime::DimsToString(t.dims));
    out[k] = t;
  }
  return out;
}

Status ShapesFromInputFiles(const std::string& model, const std::vector<std::string>& paths,
                            runtime::InputShapes* shapes) {
  auto declared = runtime::ReadDeclaredInputs(model);
  if (!declared.ok()) return declared.status();
  std::vector<std::string> input_names;
  for (const auto& d : *declared) input_names.push_back(d.name);
  VERISUB_ASSIGN_OR_RETURN(MatchedFiles matched, ReadAndMatch(paths, input_names));
  for (size_t f = 0; f < matched.files.size(); ++f) {
    if (matched.input[f] < 0) continue;
    const runtime::DeclaredInput* in = &(*declared)[matched.input[f]];
    if (shapes->count(in->name)) continue;
    const std::vector<int64_t>& dims = matched.files[f].tensor.dims;
    const bool symbolic =
        !in->ranked || std::find(in->dims.begin(), in->dims.end(), -1) != in->dims.end();
    if (symbolic && (!in->ranked || in->dims.size() == dims.size())) (*shapes)[in->name] = dims;
  }
  return Status::Ok();
}

StatusOr<std::vector<runtime::HostTensor>> ReadOutputs(const std::string& dir,
                                                       const runtime::Graph& g) {
  std::vector<runtime::HostTensor> out;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const std::string path = OutputPath(dir, g, k);
    auto t = ReadTensorFile(path);
    if (!t.ok()) return t.status();
    const runtime::Value& v = g.value(g.outputs()[k]);
    if (t->tensor.elem_type != v.elem_type || !v.Accepts(t->tensor.dims))
      return InvalidArgument(
          path + ": output '" + v.name + "' is " + runtime::ElemTypeName(v.elem_type) + " " +
          runtime::DimsToString(v.dims) + ", the file holds " +
          runtime::ElemTypeName(t->tensor.elem_type) + " " + runtime::DimsToString(t->tensor.dims));
    out.push_back(std::move(t->tensor));
  }
  return out;
}

StatusOr<std::vector<std::string>> WriteOutputs(const std::string& dir, const runtime::Graph& g,
                                                const std::vector<runtime::HostTensor>& outputs) {
  VERISUB_RETURN_IF_ERROR(base::CheckOutputDirectory(dir));
  if (outputs.size() != g.outputs().size())
    return InternalError("outputs: " + std::to_string(outputs.size()) + " for " +
                         std::to_string(g.outputs().size()) + " graph outputs");
  std::vector<std::string> written;
  for (size_t k = 0; k < outputs.size(); ++k) {
    onnx::TensorProto proto;
    runtime::ToTensorProto(outputs[k], g.value(g.outputs()[k]).name, &proto);
    std::string bytes;
    if (!proto.SerializeToString(&bytes))
      return InternalError("output '" + g.value(g.outputs()[k]).name + "' cannot be serialized");
    const std::string path = OutputPath(dir, g, k);
    VERISUB_RETURN_IF_ERROR(base::WriteFileAtomically(path, bytes));
    written.push_back(path);
  }
  return written;
}

}  // namespace verisub
