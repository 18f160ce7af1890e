// Fuzz target: the ONNX importer (checker, attribute validation, shape inference, folding,
// mapping), then export and, for small graphs, the reference executor. Errors are expected and
// must name the source; nothing may crash, leak or hit undefined behaviour. With libFuzzer, a
// structure-aware mutator (onnx_mutator.cc) changes dims, attributes, initializers and wiring of
// valid models rather than bytes alone.
#include <cstddef>
#include <cstdint>
#include <string>

#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace verisub::runtime;  // NOLINT

bool SmallEnough(const Graph& g) {
  for (int v = 0; v < g.num_values(); ++v) {
    const Value& val = g.value(v);
    if (!val.StaticShape() || CountElements(val.dims) > 20000) return false;
  }
  return g.num_nodes() < 200;
}

std::vector<HostTensor> ZeroInputs(const Graph& g) {
  std::vector<HostTensor> inputs;
  for (int v : g.inputs()) {
    const Value& val = g.value(v);
    std::vector<double> data(CountElements(val.dims), 0.5);
    inputs.push_back(HostTensor::FromDoubles(val.elem_type, val.dims, data));
  }
  return inputs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (bool require_static : {true, false}) {
    ImportOptions options;
    options.require_static_shapes = require_static;
    options.memory.max_tensor_bytes = int64_t{1} << 26;  // the fuzzer's own memory
    auto g = ImportOnnxBytes(bytes, "fuzz.onnx", options);
    if (!g.ok()) {
      FUZZ_CHECK(g.status().message().rfind("fuzz.onnx", 0) == 0, g.status().message());
      continue;
    }
    onnx::ModelProto model;
    (void)ExportOnnxModel(*g, &model);
    if (SmallEnough(*g)) {
      bool typed = true;
      for (int v : g->inputs()) typed &= IsSupportedType(g->value(v).elem_type);
      if (typed) (void)Execute(*g, ZeroInputs(*g));
    }
  }
  return 0;
}
