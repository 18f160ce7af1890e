// verisub-gen: the offline half. Lists the operator set, or generates candidate rules.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gen/config.h"
#include "gen/generator.h"
#include "specs/axiom.h"
#include "specs/registry.h"

namespace {

int ListOps() {
  using namespace verisub::specs;  // NOLINT
  auto axioms = AllAxioms();
  if (!axioms.ok()) {
    std::fprintf(stderr, "verisub-gen: %s\n", axioms.status().message().c_str());
    return 1;
  }
  std::printf("%-14s %-3s %-3s %s\n", "operator", "in", "out", "parameters {generator domain}");
  for (const OpSpec& op : AllOps()) {
    std::string params;
    for (const ParamDesc& d : op.params) {
      params += d.name + "{";
      for (size_t i = 0; i < d.domain.size(); ++i) {
        Params p;
        p[d.slot] = d.domain[i];
        params += (i ? "," : "") + FormatParamValue(d, p);
      }
      params += "} ";
    }
    std::printf("%-14s %-3d %-3d %s\n", op.name.c_str(), op.num_inputs, op.num_outputs,
                params.c_str());
  }
  std::printf("\n%zu operators, %zu axioms, op-set fingerprint %s\n", AllOps().size(),
              axioms->size(), OpSetFingerprintHex().c_str());
  return 0;
}

constexpr const char* kUsage =
    "usage: verisub-gen --list-ops\n"
    "       verisub-gen --config FILE --candidates OUT [--threads N] [--quiet]\n";

// Exit codes: 0 success, 1 generation failed, 2 usage or config error.
int Generate(const std::string& config_path, const std::string& out_path, int threads, bool quiet) {
  auto config = verisub::gen::LoadConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "verisub-gen: %s\n", config.status().message().c_str());
    return 2;
  }
  verisub::gen::GenOptions options;
  options.threads = threads;
  options.progress = !quiet;
  auto result = verisub::gen::RunGenerator(*config, options);
  if (!result.ok()) {
    std::fprintf(stderr, "verisub-gen: %s\n", result.status().message().c_str());
    return 2;
  }
  verisub::Status st = verisub::gen::WriteCandidates(result->rules, out_path);
  if (!st.ok()) {
    std::fprintf(stderr, "verisub-gen: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("%s", verisub::gen::FormatReport(result->report).c_str());
  std::printf("candidates written to %s\n", out_path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list-ops") == 0) return ListOps();
  std::string config, out;
  int threads = -1;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--config" && has_value) {
      config = argv[++i];
    } else if (a == "--candidates" && has_value) {
      out = argv[++i];
    } else if (a == "--threads" && has_value) {
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 0 || v > 1024) {
        std::fprintf(stderr, "verisub-gen: bad --threads value '%s'\n%s", argv[i], kUsage);
        return 2;
      }
      threads = static_cast<int>(v);
    } else if (a == "--quiet") {
      quiet = true;
    } else {
      std::fprintf(stderr, "verisub-gen: unknown or incomplete argument '%s'\n%s", a.c_str(),
                   kUsage);
      return 2;
    }
  }
  if (config.empty() || out.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  return Generate(config, out, threads, quiet);
}
