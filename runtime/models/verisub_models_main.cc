// verisub-models: writes the benchmark models as ONNX files (runtime/models/model_io.h).
//   verisub-models --list
//   verisub-models --out DIR [--seed N] [name...]   (no names: all models)
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "base/flags.h"
#include "runtime/models/model_io.h"
#include "runtime/models/models.h"

int main(int argc, char** argv) {
  namespace vm = verisub::runtime::models;
  verisub::base::InstallTempFileCleanup();  // an interrupted write leaves no temporary
  std::string out_dir;
  vm::BuildOptions options;
  std::vector<std::string> names;
  bool list = false;
  verisub::base::Flags flags("verisub-models", "--list | --out DIR [--seed N] [NAME...]",
                             "Exit codes: 0 written, 1 failed, 2 bad usage.");
  flags.Positionals("NAME", &names, "models to write (none: all of them)")
      .Bool("--list", &list, "list the models and exit")
      .Path("--out", &out_dir, "write NAME.onnx files into this directory (it must exist)")
      .Uint64("--seed", &options.seed, "seed of the random weights");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  if (list) {
    for (const vm::ModelEntry& m : vm::ListModels()) {
      std::printf("%-16s %.*s\n", std::string(m.name).c_str(),
                  static_cast<int>(m.description.size()), m.description.data());
    }
    return 0;
  }
  if (out_dir.empty()) return flags.UsageError("--out DIR is required (or --list)");
  // Both said before anything is written: an output directory must exist, as for every other
  // program of the tree (none creates one), and every name must be a model.
  if (verisub::Status st = verisub::base::CheckOutputDirectory(out_dir); !st.ok())
    return flags.UsageError("--out: " + st.message());
  for (const std::string& name : names) {
    bool known = false;
    for (const vm::ModelEntry& m : vm::ListModels()) known |= m.name == name;
    if (!known) return flags.UsageError("no model named '" + name + "' (see --list)");
  }
  std::string report;
  verisub::Status status = vm::WriteModels(names, out_dir, options, &report);
  std::fwrite(report.data(), 1, report.size(), stdout);
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
