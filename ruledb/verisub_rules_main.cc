// verisub-rules: stats, dump, diff and check for rule database files.
#include <cstdio>
#include <string>
#include <vector>

#include "ruledb/rules_tool.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string out, err;
  int code = verisub::ruledb::RunRulesTool(args, &out, &err);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fwrite(err.data(), 1, err.size(), stderr);
  return code;
}
