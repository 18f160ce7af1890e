// verisub-models: writes the benchmark models as ONNX files.
//   verisub-models --list
//   verisub-models --out DIR [--seed N] [name...]   (no names: all models)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "runtime/models/model_io.h"
#include "runtime/models/models.h"

namespace {

namespace vm = verisub::runtime::models;

int Usage() {
  std::fprintf(stderr, "usage: verisub-models --list | --out DIR [--seed N] [name...]\n");
  return 2;
}

verisub::Status WriteOne(const std::string& name, const std::string& dir,
                         const vm::BuildOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  VERISUB_ASSIGN_OR_RETURN(onnx::ModelProto model, vm::BuildModel(name, options));
  const double build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  VERISUB_RETURN_IF_ERROR(vm::ValidateModel(model));
  const std::string path = (std::filesystem::path(dir) / (name + ".onnx")).string();
  VERISUB_RETURN_IF_ERROR(vm::WriteModelFile(model, path));
  std::printf("%-16s %5d nodes %10.1f MiB  built in %6.0f ms  %s\n", name.c_str(),
              model.graph().node_size(),
              static_cast<double>(std::filesystem::file_size(path)) / (1024.0 * 1024.0), build_ms,
              path.c_str());
  return verisub::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  verisub::base::InstallTempFileCleanup();  // an interrupted write leaves no temporary
  std::string out_dir;
  vm::BuildOptions options;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--list") {
      for (const vm::ModelEntry& m : vm::ListModels()) {
        std::printf("%-16s %.*s\n", std::string(m.name).c_str(),
                    static_cast<int>(m.description.size()), m.description.data());
      }
      return 0;
    } else if (arg == "--out" && i + 1 < argc) {
      out_dir = argv[++i];
    } else if (arg == "--seed" && i + 1 < argc) {
      char* end = nullptr;
      options.seed = std::strtoull(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0') return Usage();
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage();
    } else {
      names.push_back(arg);
    }
  }
  if (out_dir.empty()) return Usage();
  if (names.empty()) {
    for (const vm::ModelEntry& m : vm::ListModels()) names.emplace_back(m.name);
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    std::fprintf(stderr, "error: cannot create '%s': %s\n", out_dir.c_str(), ec.message().c_str());
    return 1;
  }
  for (const std::string& name : names) {
    verisub::Status status = WriteOne(name, out_dir, options);
    if (!status.ok()) {
      std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
      return 1;
    }
  }
  return 0;
}
