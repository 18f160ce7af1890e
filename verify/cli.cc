// Command line of the verifier: flag parsing, then one library call per mode.
#include "verify/cli.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>

#include "base/file_io.h"
#include "ruledb/database.h"
#include "verify/candidates.h"
#include "verify/prover.h"
#include "verify/redundancy.h"
#include "verify/validate.h"

namespace verisub::verify {
namespace {

constexpr const char* kUsage =
    "usage: verisub-verify --verify CANDIDATES.txt [--out proved.txt] [--timeout-ms N]\n"
    "                      [--threads N] [--smt2-dir DIR] [--rlimit N] [--no-refute]\n"
    "                      [--rules-per-context N]\n"
    "           (defaults: --rlimit 30000, 0 for none; --timeout-ms 10000; --no-refute skips\n"
    "           the refutation by evaluation before Z3; --rules-per-context 32: consecutive\n"
    "           rules decided in one Z3 context)\n"
    "       verisub-verify --validate-axioms [--max-dim N] [--max-cases N] [--threads N]\n"
    "                      [--axioms NAME,NAME...]\n"
    "       every mode also takes --extra-axioms FILE (axioms under development)\n"
    "       verisub-verify --redundant-axioms [--timeout-ms N] [--threads N] [--smt2-dir DIR]\n";

struct Flags {
  std::string verify, out, smt2_dir;
  bool validate = false, redundant = false, refute = true;
  int timeout_ms = 0;  // 0: the mode's default
  int rlimit = static_cast<int>(kDefaultResourceLimit);
  int threads = 0;
  int rules_per_context = VerifyOptions().rules_per_context;
  int max_dim = 4;
  int max_cases = 0;
  std::string only_axioms;   // comma-separated names; empty: all
  std::string extra_axioms;  // file of axioms under development, added to the shipped ones
};

bool ParseInt(const char* s, int* out) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < 0 || v > 1000000000) return false;
  *out = static_cast<int>(v);
  return true;
}

// The shipped axioms plus those of --extra-axioms (same syntax as in specs/ops), restricted to
// the names of --axioms when given.
StatusOr<std::vector<specs::Axiom>> SelectAxioms(const Flags& f) {
  auto all = specs::AllAxioms();
  if (!all.ok()) return all;
  if (!f.extra_axioms.empty()) {
    auto text = base::ReadFile(f.extra_axioms, base::kDefaultMaxReadBytes);
    if (!text.ok()) return text.status().WithContext("--extra-axioms");
    auto extra = specs::ParseAxioms(f.extra_axioms, *text);
    if (!extra.ok()) return extra.status();
    for (specs::Axiom& a : *extra) {
      for (const specs::Axiom& b : *all)
        if (a.name == b.name) return InvalidArgument("axiom '" + a.name + "' is already defined");
      all->push_back(std::move(a));
    }
  }
  if (f.only_axioms.empty()) return all;
  const std::string& names = f.only_axioms;
  std::vector<specs::Axiom> out;
  size_t start = 0;
  while (start <= names.size()) {
    size_t comma = names.find(',', start);
    std::string name = names.substr(start, comma == std::string::npos ? comma : comma - start);
    auto it = std::find_if(all->begin(), all->end(),
                           [&](const specs::Axiom& a) { return a.name == name; });
    if (it == all->end()) return NotFound("no axiom named '" + name + "'");
    out.push_back(*it);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

int Verify(const Flags& f) {
  // Say so before the proofs, not after: the output goes next to an existing directory.
  if (Status st = base::CheckOutputPath(f.out); !st.ok()) {
    std::fprintf(stderr, "verisub-verify: %s\n", st.message().c_str());
    return 2;
  }
  // The dump directory must exist, as every output's directory: no tree is ever created.
  if (!f.smt2_dir.empty()) {
    if (Status st = base::CheckOutputDirectory(f.smt2_dir); !st.ok()) {
      std::fprintf(stderr, "verisub-verify: --smt2-dir: %s\n", st.message().c_str());
      return 2;
    }
  }
  auto rules = ReadCandidates(f.verify);
  if (!rules.ok()) {
    std::fprintf(stderr, "verisub-verify: %s\n", rules.status().message().c_str());
    return 2;
  }
  auto axioms = SelectAxioms(f);
  if (!axioms.ok()) {
    std::fprintf(stderr, "verisub-verify: %s\n", axioms.status().message().c_str());
    return 2;
  }
  VerifyOptions opt;
  opt.axioms = std::move(*axioms);
  if (f.timeout_ms > 0) opt.prover.timeout_ms = f.timeout_ms;
  opt.prover.smt2_dir = f.smt2_dir;
  opt.prover.resource_limit = static_cast<unsigned>(f.rlimit);
  opt.prover.refute.enabled = f.refute;
  opt.threads = f.threads;
  opt.rules_per_context = f.rules_per_context;
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
    std::string text;
    for (const ruledb::Rule& r : *rules)
      if (r.proof.status == ruledb::ProofStatus::kProved) text += r.ToText() + "\n";
    Status written = base::WriteFileAtomically(f.out, text);  // never half-written
    if (!written.ok()) {
      std::fprintf(stderr, "verisub-verify: %s\n", written.message().c_str());
      return 2;
    }
  }
  return 0;
}

int Validate(const Flags& f) {
  auto axioms = SelectAxioms(f);
  if (!axioms.ok()) {
    std::fprintf(stderr, "verisub-verify: %s\n", axioms.status().message().c_str());
    return 2;
  }
  ValidateOptions opt;
  opt.axioms = std::move(*axioms);
  opt.max_dim = f.max_dim;
  opt.max_cases_per_assignment = f.max_cases;
  opt.threads = f.threads;
  auto report = ValidateAxioms(opt);
  if (!report.ok()) {
    std::fprintf(stderr, "verisub-verify: %s\n", report.status().message().c_str());
    return 2;
  }
  std::printf("%-28s %-10s %6s %10s %10s %8s %s\n", "axiom", "verdict", "params", "cases",
              "elements", "solver", "coverage");
  for (const AxiomValidation& v : report->axioms) {
    std::printf("%-28s %-10s %6d %10lld %10lld %8lld %s\n", v.name.c_str(),
                AxiomVerdictName(v.verdict), v.assignments, static_cast<long long>(v.cases_checked),
                static_cast<long long>(v.elements_compared), static_cast<long long>(v.solver_calls),
                v.complete ? "complete" : "partial");
    if (!v.detail.empty()) std::printf("    %s\n", v.detail.c_str());
  }
  std::printf("%s (dimensions 1..%d, kernels 1 and 3%s)\n", report->Summary().c_str(), f.max_dim,
              f.max_cases ? ", capped" : "");
  return report->wrong > 0 ? 1 : 0;
}

int Redundant(const Flags& f) {
  auto axioms = SelectAxioms(f);
  if (!axioms.ok()) {
    std::fprintf(stderr, "verisub-verify: %s\n", axioms.status().message().c_str());
    return 2;
  }
  RedundancyOptions opt;
  opt.axioms = std::move(*axioms);
  if (f.timeout_ms > 0) opt.timeout_ms = f.timeout_ms;
  opt.threads = f.threads;
  opt.smt2_dir = f.smt2_dir;
  auto report = FindRedundantAxioms(opt);
  if (!report.ok()) {
    std::fprintf(stderr, "verisub-verify: %s\n", report.status().message().c_str());
    return 2;
  }
  for (const AxiomRedundancy& r : report->axioms) {
    if (r.proof.status != ruledb::ProofStatus::kProved) continue;
    std::string from;
    for (const std::string& a : r.proof.axioms_used) from += " " + a;
    std::printf("redundant: %s follows from%s\n", r.name.c_str(), from.c_str());
  }
  std::printf("%d of %zu axioms are entailed by the others (timeout %d ms each, %.1f s)\n",
              report->redundant, report->axioms.size(), opt.timeout_ms, report->seconds);
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
    } else if (a == "--validate-axioms") {
      f.validate = true;
    } else if (a == "--redundant-axioms") {
      f.redundant = true;
    } else if (a == "--no-refute") {
      f.refute = false;
    } else if (a == "--max-dim" && has_value) {
      if (!ParseInt(argv[++i], &f.max_dim) || f.max_dim == 0) {
        std::fprintf(stderr, "verisub-verify: --max-dim needs a positive integer\n%s", kUsage);
        return 2;
      }
    } else if (a == "--max-cases" && has_value) {
      if (!ParseInt(argv[++i], &f.max_cases)) {
        std::fprintf(stderr, "verisub-verify: --max-cases needs an integer\n%s", kUsage);
        return 2;
      }
    } else if (a == "--extra-axioms" && has_value) {
      f.extra_axioms = argv[++i];
    } else if (a == "--axioms" && has_value) {
      f.only_axioms = argv[++i];
    } else if (a == "--out" && has_value) {
      f.out = argv[++i];
    } else if (a == "--smt2-dir" && has_value) {
      f.smt2_dir = argv[++i];
    } else if (a == "--timeout-ms" && has_value) {
      if (!ParseInt(argv[++i], &f.timeout_ms) || f.timeout_ms == 0) {
        std::fprintf(stderr, "verisub-verify: --timeout-ms needs a positive integer\n%s", kUsage);
        return 2;
      }
    } else if (a == "--rlimit" && has_value) {
      if (!ParseInt(argv[++i], &f.rlimit)) {
        std::fprintf(stderr, "verisub-verify: --rlimit needs an integer\n%s", kUsage);
        return 2;
      }
    } else if (a == "--rules-per-context" && has_value) {
      if (!ParseInt(argv[++i], &f.rules_per_context) || f.rules_per_context == 0) {
        std::fprintf(stderr, "verisub-verify: --rules-per-context needs a positive integer\n%s",
                     kUsage);
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
  if (int{!f.verify.empty()} + int{f.validate} + int{f.redundant} != 1) {
    std::fprintf(stderr,
                 "verisub-verify: give exactly one of --verify, --validate-axioms, "
                 "--redundant-axioms\n%s",
                 kUsage);
    return 2;
  }
  if (!f.verify.empty()) return Verify(f);
  if (f.validate) return Validate(f);
  if (f.redundant) return Redundant(f);
  std::fprintf(stderr, "%s", kUsage);
  return 2;
}

}  // namespace verisub::verify
