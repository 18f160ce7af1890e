// verisub-gen: the offline half. For now it lists the operator set.
#include <cstdio>
#include <cstring>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list-ops") == 0) return ListOps();
  std::fprintf(stderr, "usage: verisub-gen --list-ops\n");
  return 2;
}
