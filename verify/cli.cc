// Command line of the verifier: flag parsing, then one library call per mode.
#include "verify/cli.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "base/file_io.h"
#include "base/flags.h"
#include "ruledb/database.h"
#include "verify/candidates.h"
#include "verify/prover.h"
#include "verify/redundancy.h"
#include "verify/validate.h"

namespace verisub::verify {
namespace {

constexpr const char* kSynopsis =
    "--verify CANDIDATES.txt [--out PROVED.txt] [flags]\n"
    "       verisub-verify --validate-axioms [--max-dim N] [--max-cases N] [flags]\n"
    "       verisub-verify --redundant-axioms [flags]";

constexpr const char* kEpilog =
    "Exactly one mode: --verify, --validate-axioms or --redundant-axioms.\n"
    "Exit codes: 0 success, 1 the run found a problem (a wrong axiom), 2 bad usage or\n"
    "unreadable input.";

struct Flags {
  std::string verify, out, smt2_dir;
  bool validate = false, redundant = false, no_refute = false, no_index_level = false;
  int timeout_ms = 0;  // 0: the mode's default
  int rlimit = static_cast<int>(kDefaultResourceLimit);
  int threads = 0;
  int rules_per_context = VerifyOptions().rules_per_context;
  int max_dim = 4;
  int64_t max_cases = 0;     // 0: every case
  std::string only_axioms;   // comma-separated names; empty: all
  std::string extra_axioms;  // file of axioms under development, added to the shipped ones
};

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
  opt.prover.refute.enabled = !f.no_refute;
  opt.prover.index_level = !f.no_index_level;
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
  base::Flags flags("verisub-verify", kSynopsis, kEpilog);
  flags.Path("--verify", &f.verify, "candidate rules to prove, one per line")
      .Bool("--validate-axioms", &f.validate,
            "check every axiom against the reference kernels on small shapes")
      .Bool("--redundant-axioms", &f.redundant, "find axioms entailed by the others")
      .Path("--out", &f.out, "--verify: write the proved rules here")
      .Path("--smt2-dir", &f.smt2_dir, "write every query as an SMT-LIB file into this directory")
      .Int("--timeout-ms", &f.timeout_ms, 1, 1000000000, "Z3 time limit per query")
      .ShowDefault("--timeout-ms", "10000 for --verify, the mode's own otherwise")
      .Int("--rlimit", &f.rlimit, 0, 1000000000, "Z3 resource limit per query, 0 for none")
      .Bool("--no-refute", &f.no_refute, "skip the refutation by evaluation before Z3")
      .Bool("--no-index-level", &f.no_index_level,
            "decide from the axioms alone (no index-level normal forms where Z3 gives up)")
      .Int("--rules-per-context", &f.rules_per_context, 1, 1000000000,
           "consecutive rules decided in one Z3 context")
      .Int("--max-dim", &f.max_dim, 1, kMaxValidateDim,
           "--validate-axioms: every dimension ranges over 1..N")
      .Int64("--max-cases", &f.max_cases, 1, int64_t{1} << 40,
             "--validate-axioms: check only the N smallest shape cases per parameter assignment")
      .ShowDefault("--max-cases", "every case")
      .String("--axioms", &f.only_axioms, "NAME,NAME...", "only these axioms")
      .Path("--extra-axioms", &f.extra_axioms,
            "a file of axioms under development, added to the shipped ones")
      .Threads("--threads", &f.threads, 0, "worker threads, 0 for one per core");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  if (int{!f.verify.empty()} + int{f.validate} + int{f.redundant} != 1)
    return flags.UsageError("give exactly one of --verify, --validate-axioms, --redundant-axioms");
  if (!f.verify.empty()) return Verify(f);
  if (f.validate) return Validate(f);
  return Redundant(f);
}

}  // namespace verisub::verify
