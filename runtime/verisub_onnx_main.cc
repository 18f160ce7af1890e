// verisub-onnx: imports an ONNX model, prints a summary, optionally runs the reference executor
// on random inputs and exports the imported graph.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "base/file_io.h"
#include "runtime/executor.h"
#include "runtime/memory_budget.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"

namespace {

constexpr const char* kUsage =
    "usage: verisub-onnx MODEL.onnx [--input-shape NAME=D0,D1,...]... [--no-fold] [--no-map]\n"
    "                    [--run] [--seed N] [-o OUT.onnx]\n";

bool ParseShape(const std::string& arg, verisub::runtime::ImportOptions* options) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  std::vector<int64_t> dims;
  std::string rest = arg.substr(eq + 1);
  size_t pos = 0;
  while (pos <= rest.size() && !rest.empty()) {
    size_t comma = rest.find(',', pos);
    std::string tok =
        rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    long long v = std::strtoll(tok.c_str(), &end, 10);
    if (tok.empty() || *end != '\0' || v < 0) return false;
    dims.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  options->input_shapes[arg.substr(0, eq)] = dims;
  return true;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  verisub::base::InstallTempFileCleanup();  // an interrupted write leaves no temporary
  using namespace verisub::runtime;         // NOLINT
  std::string model, output;
  bool run = false;
  uint64_t seed = 1;
  ImportOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--input-shape") {
      const char* v = next();
      if (!v || !ParseShape(v, &options)) {
        std::fprintf(stderr, "bad --input-shape\n%s", kUsage);
        return 2;
      }
    } else if (a == "--no-fold") {
      options.fold_constants = false;
    } else if (a == "--no-map") {
      options.map_to_spec_ops = false;
    } else if (a == "--run") {
      run = true;
    } else if (a == "--seed") {
      const char* v = next();
      if (!v) return std::fprintf(stderr, "%s", kUsage), 2;
      seed = std::strtoull(v, nullptr, 10);
    } else if (a == "-o" || a == "--output") {
      const char* v = next();
      if (!v) return std::fprintf(stderr, "%s", kUsage), 2;
      output = v;
    } else if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (model.empty() && !a.empty() && a[0] != '-') {
      model = a;
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (model.empty()) return std::fprintf(stderr, "%s", kUsage), 2;

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
  std::printf("model: %s\nnodes: %d\nopaque: %d\nweights: %d\ninputs: %zu\noutputs: %zu\n",
              model.c_str(), g.num_nodes(), CountOpaque(g), weights, g.inputs().size(),
              g.outputs().size());
  std::printf("hash: %016llx\nimport_seconds: %.3f\n",
              static_cast<unsigned long long>(StructuralHash(g)), import_s);
  for (const auto& [op, count] : OpCounts(g)) std::printf("  %-28s %d\n", op.c_str(), count);

  if (run) {
    // Refused before the random inputs are made, not by bad_alloc while making them.
    if (verisub::Status st = CheckMemoryBudget(g, MemoryBudget{}, /*executor=*/true); !st.ok()) {
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
    auto outputs = Execute(g, inputs);
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
