// Command line of the verifier: flag parsing, then one library call per mode.
#include "verify/cli.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "verify/candidates.h"
#include "verify/prover.h"

namespace verisub::verify {
namespace {

constexpr const char* kUsage =
    "usage: verisub-verify --verify CANDIDATES.txt [--out proved.txt] [--timeout-ms N]\n"
    "                      [--threads N] [--smt2-dir DIR]\n";

struct Flags {
  std::string verify, out, smt2_dir;
  int timeout_ms = 2000;
  int threads = 0;
};

bool ParseInt(const char* s, int* out) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < 0 || v > 1000000000) return false;
  *out = static_cast<int>(v);
  return true;
}

int Verify(const Flags& f) {
  auto rules = ReadCandidates(f.verify);
  if (!rules.ok()) {
    std::fprintf(stderr, "verisub-verify: %s\n", rules.status().message().c_str());
    return 2;
  }
  VerifyOptions opt;
  opt.prover.timeout_ms = f.timeout_ms;
  opt.prover.smt2_dir = f.smt2_dir;
  opt.threads = f.threads;
  auto report = VerifyRules(*rules, opt);
  if (!report.ok()) {
    std::fprintf(stderr, "verisub-verify: %s\n", report.status().message().c_str());
    return 2;
  }
  for (size_t i = 0; i < rules->size(); ++i) {
    const ruledb::Rule& r = (*rules)[i];
    if (r.proof.status == ruledb::ProofStatus::kProved) continue;
    std::printf("not proved #%zu (%s, %s): %s\n", i, ruledb::ProofStatusName(r.proof.status),
                r.proof.reason.c_str(), r.ToText().c_str());
  }
  std::printf("slowest queries:\n");
  for (const QueryTime& q : report->slowest)
    std::printf("  %8.1f ms  #%d %-10s %s\n", q.seconds * 1e3, q.rule,
                ruledb::ProofStatusName(q.status), (*rules)[q.rule].ToText().c_str());
  std::printf("%s\n", report->Summary().c_str());
  if (!f.out.empty()) {
    std::ofstream out(f.out);
    if (!out) {
      std::fprintf(stderr, "verisub-verify: cannot write '%s'\n", f.out.c_str());
      return 2;
    }
    for (const ruledb::Rule& r : *rules)
      if (r.proof.status == ruledb::ProofStatus::kProved) out << r.ToText() << "\n";
  }
  return 0;
}

}  // namespace

int RunCli(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--verify" && has_value) {
      f.verify = argv[++i];
    } else if (a == "--out" && has_value) {
      f.out = argv[++i];
    } else if (a == "--smt2-dir" && has_value) {
      f.smt2_dir = argv[++i];
    } else if (a == "--timeout-ms" && has_value) {
      if (!ParseInt(argv[++i], &f.timeout_ms) || f.timeout_ms == 0) {
        std::fprintf(stderr, "verisub-verify: --timeout-ms needs a positive integer\n%s", kUsage);
        return 2;
      }
    } else if (a == "--threads" && has_value) {
      if (!ParseInt(argv[++i], &f.threads)) {
        std::fprintf(stderr, "verisub-verify: --threads needs an integer\n%s", kUsage);
        return 2;
      }
    } else {
      std::fprintf(stderr, "verisub-verify: unexpected argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (!f.verify.empty()) return Verify(f);
  std::fprintf(stderr, "%s", kUsage);
  return 2;
}

}  // namespace verisub::verify
