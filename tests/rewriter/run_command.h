// Runs a program of the tree through the shell for the command-line tests, capturing its exit
// code and its stdout and stderr together.
#pragma once

#include <string>

namespace verisub::rewriter::testing {

struct CommandResult {
  int code = -1;  // -1 when the program did not exit normally
  std::string output;
};

CommandResult RunCommand(const std::string& cmd);

}  // namespace verisub::rewriter::testing
