// verisub's embedding API, what `cmake --install` ships: a product loads an ONNX model at
// start-up, optimizes it with the proved rules shipped in share/verisub (or its own rules file),
// lays it out and prepares it once, then runs it many times. One header, no other verisub header
// needed; link with find_package(verisub) -> verisub::verisub, or pkg-config verisub.
//
//   std::string error;
//   auto s = verisub::InferenceSession::Create("model.onnx", {}, &error);
//   if (!s) { fprintf(stderr, "%s\n", error.c_str()); return 1; }
//   std::vector<verisub::Tensor> out;
//   if (!s->Run({input}, &out, &error)) ...
//
// Nothing here throws: failures return null or false with a message naming the file, node or
// rule at fault. A session may be used from one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#if defined(__GNUC__)
#define VERISUB_API __attribute__((visibility("default")))
#else
#define VERISUB_API
#endif

namespace verisub {

// ONNX element types (TensorProto.DataType values) that tensors are exchanged in.
enum class ElementType : int32_t {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kDouble = 11,
};

// A dense row-major tensor: floats in `floats`, doubles in `doubles`, integers and bools in
// `ints`.
struct Tensor {
  std::string name;
  ElementType type = ElementType::kFloat;
  std::vector<int64_t> dims;
  std::vector<float> floats;
  std::vector<double> doubles;
  std::vector<int64_t> ints;
};

struct TensorInfo {
  std::string name;
  ElementType type = ElementType::kFloat;
  std::vector<int64_t> dims;  // -1 where the model leaves a dimension open
};

struct SessionConfig {
  bool optimize = true;           // rewrite with the proved rules (costs measured here, cached)
  std::string rules_path;         // empty: the rules installed with verisub (share/verisub/rules)
  int threads = 0;                // kernel threads; 0: one per core
  std::string device = "cpu";     // "cpu" (oneDNN) or "cuda" (when built with CUDA)
  std::string layout = "auto";    // "auto", "backend", "dp", "joint", "plain"
  std::string precision = "f32";  // "f32"; "bf16" (CPU, GPU); "fp16" (GPU)
  std::map<std::string, std::vector<int64_t>> input_shapes;  // fixes symbolic dimensions
  // How a model with symbolic dimensions input_shapes leaves open runs at any shape: "auto"
  // (prepared once with them open, every shape runs on that, and prepared again for a shape
  // once that shape has run 3 times, for its faster kernels, at most 8 times in all), "dynamic"
  // (only the first) or "static" (prepared per shape at its first run, the last 8 kept).
  std::string shapes = "auto";
  // Kernels of the memory-bound operators: "library" (oneDNN's), "subop" (chains of them
  // generated with Halide, cached on disk), "auto" (each generated kernel timed at load against
  // oneDNN's steps for its nodes, the faster kept), "none" (nothing fused across nodes).
  std::string fusion = "library";
};

class VERISUB_API InferenceSession {
 public:
  // Null, with `*error` set, when the model or the rules cannot be loaded or prepared.
  static std::unique_ptr<InferenceSession> Create(const std::string& model_path,
                                                  const SessionConfig& config, std::string* error);
  ~InferenceSession();
  InferenceSession(const InferenceSession&) = delete;
  InferenceSession& operator=(const InferenceSession&) = delete;

  std::vector<TensorInfo> inputs() const;
  std::vector<TensorInfo> outputs() const;
  // One tensor per input, in inputs() order; `outputs` receives one per output. False, with
  // `*error` set, on a wrong input or a failed run.
  bool Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, std::string* error);
  // What the session did: backend, load/optimize/prepare times, rewrites, steps.
  std::string Summary() const;

 private:
  struct Impl;
  explicit InferenceSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "0.1.0".
VERISUB_API std::string Version();

}  // namespace verisub
