// Tensors in files, for verisub-run's --input and --output: ONNX TensorProto files (.pb) and
// NumPy arrays (.npy, version 1-3, little-endian, C order), read through a size-capped memory
// map (a device or a FIFO is refused, never read without end) and matched to the model's inputs
// by name; outputs written as NAME.pb, each through a temporary file and a rename.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/graph.h"
#include "runtime/host_tensor.h"
#include "runtime/input_shapes.h"

namespace verisub {

struct NamedTensor {
  std::string name;  // the TensorProto's name, else the file name without .pb/.npy (may be "")
  runtime::HostTensor tensor;
};

// Reads one tensor file; errors name the file. `max_bytes` caps the file's size.
StatusOr<NamedTensor> ReadTensorFile(const std::string& path,
                                     uint64_t max_bytes = uint64_t{2} << 30);

// Parses .npy bytes (`source` names them in errors).
StatusOr<runtime::HostTensor> ParseNpy(std::string_view bytes, const std::string& source);

// One tensor per graph input of `g`, in its order, from `paths`: a file whose tensor names an
// input (TensorProto name or file stem) goes to that input; files naming no input are refused
// unless none of the files names one, when they are taken in order. Each tensor's type and
// shape must be the input's (a symbolic dimension takes any size).
StatusOr<std::vector<runtime::HostTensor>> ReadInputs(const std::vector<std::string>& paths,
                                                      const runtime::Graph& g);

// For --input without --input-shape: the shapes of `paths`' tensors given to the graph inputs
// of `model` that it declares with symbolic or unknown dimensions (a dynamic-axes export), matched
// as ReadInputs matches them; inputs already in `shapes`, or whose file's rank differs from the
// declared one, are left alone (ReadInputs and the import then say what is wrong).
Status ShapesFromInputFiles(const std::string& model, const std::vector<std::string>& paths,
                            runtime::InputShapes* shapes);

// The outputs of `g` as WriteOutputs wrote them into `dir` (DIR/NAME.pb each), checked against
// the outputs' types and shapes; errors name the file.
StatusOr<std::vector<runtime::HostTensor>> ReadOutputs(const std::string& dir,
                                                       const runtime::Graph& g);

// Writes output k of `g` as DIR/NAME.pb (NAME with '/' and other unsafe characters replaced by
// '_'); the directory must exist. Returns the paths written.
StatusOr<std::vector<std::string>> WriteOutputs(const std::string& dir, const runtime::Graph& g,
                                                const std::vector<runtime::HostTensor>& outputs);

}  // namespace verisub
