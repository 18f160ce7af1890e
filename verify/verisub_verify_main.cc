// verisub-verify: proves candidate rules and validates the axioms (see verify/cli.h).
#include "verify/cli.h"

int main(int argc, char** argv) { return verisub::verify::RunCli(argc, argv); }
