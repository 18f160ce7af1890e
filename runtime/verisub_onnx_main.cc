// verisub-onnx: imports an ONNX model, prints a summary, optionally runs the reference executor
// on random inputs and exports the imported graph.
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <string>

#include "base/file_io.h"
#include "base/flags.h"
#include "runtime/executor.h"
#include "runtime/input_shapes.h"
#include "runtime/memory_budget.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "runtime/opaque_stats.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  verisub::base::InstallTempFileCleanup();  // an interrupted write leaves no temporary
  using namespace verisub::runtime;         // NOLINT
  std::string model, output;
  bool run = false, no_fold = false, no_map = false;
  uint64_t seed = 1;
  int64_t max_memory_mb = 0;
  std::vector<std::string> shapes;
  ImportOptions options;
  verisub::base::Flags flags("verisub-onnx", "MODEL.onnx [flags]",
                             "Exit codes: 0 success, 1 failed, 2 bad usage.");
  flags.Positional("MODEL.onnx", &model, "the model to import")
      .Repeated("--input-shape", &shapes, "NAME=D0,D1,...", "the shape of a dynamic input")
      .Bool("--no-fold", &no_fold, "keep constant subgraphs")
      .Bool("--no-map", &no_map, "keep ONNX operators instead of mapping them to spec operators")
      .Bool("--run", &run, "run the reference executor on random inputs")
      .Uint64("--seed", &seed, "--run: random seed for the inputs")
      .Int64("--max-memory-mb", &max_memory_mb, 0, int64_t{1} << 40,
             "memory budget in MiB for a tensor and for all together (the model file and "
             "weights at import, the reference executor's live tensors with --run); over it, "
             "the run stops naming the tensor or node")
      .ShowDefault("--max-memory-mb", "0: 4096 MiB a tensor, no total")
      .Path("--output", &output, "export the imported graph here")
      .Alias("-o", "--output");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  for (const std::string& shape : shapes)
    if (verisub::Status st = ParseInputShapeFlag(shape, &options.input_shapes); !st.ok())
      return flags.UsageError(st.message());
  options.fold_constants = !no_fold;
  options.memory = MemoryBudgetFromMb(max_memory_mb);
  options.map_to_spec_ops = !no_map;

  auto t0 = std::chrono::steady_clock::now();
  auto graph = ImportOnnxFile(model, options);
  if (!graph.ok()) {
    std::fprintf(stderr, "error: %s\n", graph.status().message().c_str());
    return 1;
  }
  double import_s = Seconds(t0);
  const Graph& g = *graph;
  int weights = 0;
  for (int v = 0; v < g.num_values(); ++v) weights += g.value(v).constant != nullptr;
  OpaqueStats opaque = MeasureOpaque(g);
  std::printf(
      "model: %s\nnodes: %d\n%s\ndynamic shapes: %d values\nweights: %d\ninputs: %zu\n"
      "outputs: %zu\n",
      model.c_str(), g.num_nodes(), OpaqueSummaryLine(opaque).c_str(), opaque.dynamic_values,
      weights, g.inputs().size(), g.outputs().size());
  std::printf("hash: %016llx\nimport_seconds: %.3f\n",
              static_cast<unsigned long long>(StructuralHash(g)), import_s);
  for (const auto& [op, count] : OpCounts(g)) std::printf("  %-28s %d\n", op.c_str(), count);

  if (run) {
    // Refused before the random inputs are made, not by bad_alloc while making them.
    if (verisub::Status st = CheckMemoryBudget(g, options.memory, /*executor=*/true); !st.ok()) {
      std::fprintf(stderr, "error: --run: %s\n", st.message().c_str());
      return 1;
    }
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<HostTensor> inputs;
    for (int v : g.inputs()) {
      const Value& val = g.value(v);
      if (!val.StaticShape()) {
        std::fprintf(stderr, "error: input '%s' has no static shape\n", val.name.c_str());
        return 1;
      }
      std::vector<double> data(CountElements(val.dims));
      for (double& d : data) d = IsFloatType(val.elem_type) ? dist(rng) : 0.0;
      inputs.push_back(HostTensor::FromDoubles(val.elem_type, val.dims, data));
    }
    auto t1 = std::chrono::steady_clock::now();
    auto outputs = Execute(g, inputs, options.memory);
    if (!outputs.ok()) {
      std::fprintf(stderr, "error: %s\n", outputs.status().message().c_str());
      return 1;
    }
    std::printf("run_seconds: %.3f\n", Seconds(t1));
    for (size_t k = 0; k < outputs->size(); ++k) {
      std::vector<double> d = (*outputs)[k].ToDoubles();
      double sum = 0;
      for (double x : d) sum += x;
      std::printf("output %s %s sum=%.6g\n", g.value(g.outputs()[k]).name.c_str(),
                  DimsToString((*outputs)[k].dims).c_str(), sum);
    }
  }
  if (!output.empty()) {
    auto t2 = std::chrono::steady_clock::now();
    verisub::Status st = ExportOnnxFile(g, output);
    if (!st.ok()) {
      std::fprintf(stderr, "error: %s\n", st.message().c_str());
      return 1;
    }
    std::printf("export_seconds: %.3f\nwrote: %s\n", Seconds(t2), output.c_str());
  }
  return 0;
}
