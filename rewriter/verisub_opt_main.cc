// verisub-opt: optimizes an ONNX model with a rules file and a cost model, prints a summary,
// optionally writes a JSON report and checks the outputs against the original.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "base/file_io.h"
#include "rewriter/optimize.h"
#include "rewriter/report_json.h"
#include "rewriter/rule_source.h"
#include "rewriter/verify_outputs.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"

namespace {

constexpr const char* kUsage =
    "usage: verisub-opt MODEL.onnx -o OUT.onnx [--rules FILE] [--allow-unproved]\n"
    "                   [--alpha A] [--budget N] [--time-limit SECONDS] [--max-queue N]\n"
    "                   [--device v100|cpu-2core|h100] [--report REPORT.json]\n"
    "                   [--verify-outputs] [--seed N]\n"
    "  --rules           rules database or plain rule list (default: the shipped\n"
    "                    data/rules/taso.pb, in the working directory or this checkout)\n"
    "  --allow-unproved  use rules without a proof record (hand-written text rules)\n"
    "exit status: 0 written, 1 error, 2 bad usage, 3 --verify-outputs found different\n"
    "outputs, 4 --verify-outputs could not run the comparison\n";

bool ParseDouble(const char* s, double* out) {
  if (!s) return false;
  char* end = nullptr;
  *out = std::strtod(s, &end);
  return end != s && *end == '\0';
}

bool ParseInt(const char* s, long long* out) {
  if (!s) return false;
  char* end = nullptr;
  *out = std::strtoll(s, &end, 10);
  return end != s && *end == '\0';
}

// Every applied rule that lacks a proof (only with --allow-unproved) is named on stderr: the
// written model is then not known to be equivalent to the input.
void WarnUnprovedRulesApplied(const verisub::rewriter::RuleSet& rules,
                              const verisub::OptimizeReport& report) {
  std::map<std::string, const verisub::ruledb::Rule*> by_id;
  for (int i = 0; i < rules.size(); ++i) by_id[rules.rule(i).id] = &rules.rule(i).rule;
  int unproved = 0;
  for (const verisub::rewriter::RuleUse& u : report.search.rules_applied) {
    auto it = by_id.find(u.id);
    if (it != by_id.end() && it->second->proof.status == verisub::ruledb::ProofStatus::kProved)
      continue;
    const char* status =
        it == by_id.end() ? "unknown" : verisub::ruledb::ProofStatusName(it->second->proof.status);
    std::fprintf(stderr, "WARNING: applied an UNPROVED rule (%s) %d time(s): %s %s\n", status,
                 u.count, u.id.c_str(), u.text.c_str());
    ++unproved;
  }
  if (unproved > 0)
    std::fprintf(stderr,
                 "WARNING: %d unproved rule(s) applied: the written model is NOT known to compute "
                 "what the input does (check it with --verify-outputs)\n",
                 unproved);
}

int Fail(const verisub::Status& st) {
  std::fprintf(stderr, "error: %s\n", st.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace verisub;  // NOLINT
  base::InstallTempFileCleanup();
  std::string model, output, report_path, rules_path = rewriter::FindDefaultRules();
  bool verify = false, allow_unproved = false;
  OptimizeOptions options;
  rewriter::VerifyOptions verify_options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    double d = 0;
    long long n = 0;
    if (a == "-o" || a == "--output") {
      const char* v = next();
      if (!v) return std::fprintf(stderr, "-o needs a path\n%s", kUsage), 2;
      output = v;
    } else if (a == "--rules") {
      const char* v = next();
      if (!v) return std::fprintf(stderr, "--rules needs a path\n%s", kUsage), 2;
      rules_path = v;
    } else if (a == "--allow-unproved") {
      allow_unproved = true;
    } else if (a == "--alpha") {
      if (!ParseDouble(next(), &d) || !(d >= 1.0))
        return std::fprintf(stderr, "--alpha needs a number >= 1\n%s", kUsage), 2;
      options.search.alpha = d;
    } else if (a == "--budget") {
      if (!ParseInt(next(), &n) || n < 0 || n > 1000000000)
        return std::fprintf(stderr, "--budget needs a count >= 0\n%s", kUsage), 2;
      options.search.budget = static_cast<int>(n);
    } else if (a == "--max-queue") {
      if (!ParseInt(next(), &n) || n < 1 || n > 1000000000)
        return std::fprintf(stderr, "--max-queue needs a count >= 1\n%s", kUsage), 2;
      options.search.max_queue = static_cast<int>(n);
    } else if (a == "--time-limit") {
      if (!ParseDouble(next(), &d) || !(d >= 0))
        return std::fprintf(stderr, "--time-limit needs seconds >= 0\n%s", kUsage), 2;
      options.search.time_limit_s = d;
    } else if (a == "--device") {
      const char* v = next();
      if (!v) return std::fprintf(stderr, "--device needs a name\n%s", kUsage), 2;
      options.device = v;
    } else if (a == "--report") {
      const char* v = next();
      if (!v) return std::fprintf(stderr, "--report needs a path\n%s", kUsage), 2;
      report_path = v;
    } else if (a == "--verify-outputs") {
      verify = true;
    } else if (a == "--seed") {
      if (!ParseInt(next(), &n)) return std::fprintf(stderr, "--seed needs a number\n"), 2;
      verify_options.seed = static_cast<uint64_t>(n);
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
  if (model.empty() || output.empty()) return std::fprintf(stderr, "%s", kUsage), 2;
  // Said before the work, not after it.
  for (const std::string& path : {output, report_path})
    if (Status st = base::CheckOutputPath(path); !st.ok()) return Fail(st);

  auto rules = rewriter::LoadRules(rules_path);
  if (!rules.ok()) return Fail(rules.status());
  rewriter::RuleSetOptions rule_options;
  rule_options.proved_only = !allow_unproved;
  auto rule_set = rewriter::RuleSet::Compile(std::move(rules).value(), rule_options);
  if (!rule_set.ok()) return Fail(rule_set.status());
  const rewriter::RuleSetStats& stats = (*rule_set)->stats();
  std::printf(
      "rules: %d loaded from %s, %d used (%d unproved, %d duplicate, %d unmatchable skipped)\n",
      stats.loaded, rules_path.c_str(), stats.compiled, stats.skipped_unproved,
      stats.skipped_duplicate, stats.skipped_unmatchable);
  if (stats.compiled == 0 && stats.skipped_unproved > 0)
    std::fprintf(stderr,
                 "warning: every rule lacks a proof record; pass --allow-unproved to use "
                 "hand-written rules\n");

  auto original = runtime::ImportOnnxFile(model);
  if (!original.ok()) return Fail(original.status());
  runtime::Graph optimized;
  OptimizeReport report;
  // Without --verify-outputs the original is not needed afterwards: the optimizer consumes it,
  // so weights the result replaces are freed rather than held twice.
  Status st = verify
                  ? Optimize(*original, **rule_set, options, &optimized, &report)
                  : Optimize(std::move(original).value(), **rule_set, options, &optimized, &report);
  if (!st.ok()) return Fail(st);
  std::printf("%s", rewriter::ReportSummary(report).c_str());
  WarnUnprovedRulesApplied(**rule_set, report);

  if (verify) {
    rewriter::VerifyReport vr;
    Status v = rewriter::CompareOutputs(*original, optimized, verify_options, &vr);
    if (!v.ok() && vr.outcome == rewriter::VerifyOutcome::kCouldNotRun) {
      std::fprintf(stderr,
                   "\n*** CANNOT VERIFY: the outputs could not be compared (nothing is known "
                   "about them) ***\n%s\nnothing was written\n",
                   v.message().c_str());
      return 4;
    }
    if (!v.ok()) {
      std::fprintf(stderr,
                   "\n*** VERIFY FAILED: the optimized model computes different outputs ***\n"
                   "%s\nnothing was written\n",
                   v.message().c_str());
      return 3;
    }
    std::printf("verify outputs:  ok (%d outputs, %lld elements, max abs diff %.3g)\n",
                vr.outputs_compared, static_cast<long long>(vr.elements_compared), vr.max_abs_diff);
  }
  st = runtime::ExportOnnxFile(optimized, output);
  if (!st.ok()) return Fail(st);
  if (!report_path.empty()) {
    st = base::WriteFileAtomically(report_path, rewriter::ReportToJson(report, model, output));
    if (!st.ok()) return Fail(st);
  }
  std::printf("wrote:           %s\n", output.c_str());
  return 0;
}
