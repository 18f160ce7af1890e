// The command-line tests' one way of running a program.
#include "tests/rewriter/run_command.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace verisub::rewriter::testing {

CommandResult RunCommand(const std::string& cmd) {
  CommandResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace verisub::rewriter::testing
