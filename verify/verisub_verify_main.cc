// verisub-verify: proves candidate rules and validates the axioms (see verify/cli.h).
#include "base/file_io.h"
#include "verify/cli.h"

int main(int argc, char** argv) {
  verisub::base::InstallTempFileCleanup();  // an interrupted write leaves no temporary
  return verisub::verify::RunCli(argc, argv);
}
