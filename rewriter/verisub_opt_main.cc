// verisub-opt: optimizes an ONNX model with a rules file and a cost model, prints a summary,
// optionally writes a JSON report and checks the outputs against the original.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

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
    "                   [--verify-outputs] [--seed N] [--input-shape NAME=D0,D1,...]...\n"
    "  --rules           rules database or plain rule list (default: the shipped\n"
    "                    data/rules/taso.pb, in the working directory or this checkout)\n"
    "  --allow-unproved  use rules without a proof record (hand-written text rules)\n"
    "  --input-shape     fixes a graph input's symbolic dimensions, e.g. input=1,3,224,224\n";

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

// Writes through a temporary file and a rename, so a failed write leaves nothing behind.
verisub::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return verisub::InvalidArgument("cannot write '" + tmp + "'");
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return verisub::InvalidArgument("cannot write '" + tmp + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return verisub::InvalidArgument("cannot rename '" + tmp + "' to '" + path +
                                    "': " + ec.message());
  }
  return verisub::Status::Ok();
}

int Fail(const verisub::Status& st) {
  std::fprintf(stderr, "error: %s\n", st.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace verisub;  // NOLINT
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
    } else if (a == "--input-shape") {
      const char* v = next();
      Status st = v ? runtime::ParseInputShapeFlag(v, &options.import.input_shapes)
                    : InvalidArgument("--input-shape needs NAME=D0,D1,...");
      if (!st.ok()) return std::fprintf(stderr, "error: %s\n%s", st.message().c_str(), kUsage), 2;
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

  auto original = runtime::ImportOnnxFile(model, options.import);
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

  if (verify) {
    rewriter::VerifyReport vr;
    Status v = rewriter::CompareOutputs(*original, optimized, verify_options, &vr);
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
    st = WriteFileAtomically(report_path, rewriter::ReportToJson(report, model, output));
    if (!st.ok()) return Fail(st);
  }
  std::printf("wrote:           %s\n", output.c_str());
  return 0;
}
