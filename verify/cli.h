// The verifier's command line, shared by `verisub-verify` and `verisub-gen`.
#pragma once

namespace verisub::verify {

// Handles
//   --verify CANDIDATES.txt [--out proved.txt] [--timeout-ms N] [--threads N] [--smt2-dir DIR]
//   --validate-axioms [--max-dim N] [--max-cases N] [--threads N] [--timeout-ms N]
//   --redundant-axioms [--timeout-ms N] [--threads N]
// and returns the process exit code: 0 success, 1 the run found a problem (a wrong axiom),
// 2 bad usage or unreadable input.
int RunCli(int argc, char** argv);

}  // namespace verisub::verify
