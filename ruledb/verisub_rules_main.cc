// verisub-rules: stats, dump, diff and check for rule database files; `check --reprove` proves
// the rules again with the verifier (which is why this program, not ruledb, links verify).
#include <cstdio>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "ruledb/rules_tool.h"
#include "verify/prover.h"

namespace {

verisub::StatusOr<std::string> Reprove(std::vector<verisub::ruledb::Rule>* rules) {
  verisub::verify::VerifyOptions options;
  options.progress = false;
  auto report = verisub::verify::VerifyRules(*rules, options);
  if (!report.ok()) return report.status();
  return report->Summary();
}

}  // namespace

int main(int argc, char** argv) {
  verisub::base::InstallTempFileCleanup();  // an interrupted write leaves no temporary
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string out, err;
  int code = verisub::ruledb::RunRulesTool(args, &out, &err, Reprove);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fwrite(err.data(), 1, err.size(), stderr);
  return code;
}
