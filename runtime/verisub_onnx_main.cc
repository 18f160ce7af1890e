// verisub-onnx: imports an ONNX model, prints a summary, optionally runs the reference executor
// on random inputs and exports the imported graph (runtime/inspect.h).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "base/flags.h"
#include "runtime/input_shapes.h"
#include "runtime/inspect.h"
#include "runtime/memory_budget.h"

int main(int argc, char** argv) {
  verisub::base::InstallTempFileCleanup();  // an interrupted write leaves no temporary
  verisub::runtime::InspectOptions options;
  bool no_fold = false, no_map = false;
  int64_t max_memory_mb = 0;
  std::vector<std::string> shapes;
  verisub::base::Flags flags("verisub-onnx", "MODEL.onnx [flags]",
                             "Exit codes: 0 success, 1 failed, 2 bad usage.");
  flags.Positional("MODEL.onnx", &options.model_path, "the model to import")
      .Repeated("--input-shape", &shapes, "NAME=D0,D1,...", "the shape of a dynamic input")
      .Bool("--no-fold", &no_fold, "keep constant subgraphs")
      .Bool("--no-map", &no_map, "keep ONNX operators instead of mapping them to spec operators")
      .Bool("--run", &options.run, "run the reference executor on random inputs")
      .Uint64("--seed", &options.seed, "--run: random seed for the inputs")
      .Int64("--max-memory-mb", &max_memory_mb, 0, int64_t{1} << 40,
             "memory budget in MiB for a tensor and for all together (the model file and "
             "weights at import, the reference executor's live tensors with --run); over it, "
             "the run stops naming the tensor or node")
      .ShowDefault("--max-memory-mb", "0: 4096 MiB a tensor, no total")
      .Path("--output", &options.output_path, "export the imported graph here")
      .Alias("-o", "--output");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  for (const std::string& shape : shapes)
    if (verisub::Status st =
            verisub::runtime::ParseInputShapeFlag(shape, &options.import.input_shapes);
        !st.ok())
      return flags.UsageError(st.message());
  options.import.fold_constants = !no_fold;
  options.import.memory = verisub::runtime::MemoryBudgetFromMb(max_memory_mb);
  options.import.map_to_spec_ops = !no_map;
  std::string report;
  verisub::Status st = verisub::runtime::InspectModel(options, &report);
  std::fwrite(report.data(), 1, report.size(), stdout);
  if (!st.ok()) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}
