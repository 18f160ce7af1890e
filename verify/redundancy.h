// Redundancy of the axioms: an axiom is redundant when the others entail it (every parameter
// assignment at once), decided by the same prover as candidate rules.
#pragma once

#include <string>
#include <vector>

#include "ruledb/rule.h"
#include "specs/axiom.h"

namespace verisub::verify {

struct RedundancyOptions {
  int timeout_ms = 2000;  // per axiom
  int threads = 0;        // 0: every core
  bool progress = true;
  std::string smt2_dir;              // dumps of the queries that did not prove redundancy
  std::vector<specs::Axiom> axioms;  // empty: specs::AllAxioms()
};

struct AxiomRedundancy {
  std::string name;
  // kProved: entailed by the others (listed in proof.axioms_used); anything else: not shown
  // redundant, with the reason.
  ruledb::ProofRecord proof;
};

struct RedundancyReport {
  std::vector<AxiomRedundancy> axioms;  // in axiom order
  int redundant = 0;
  double seconds = 0;
};

StatusOr<RedundancyReport> FindRedundantAxioms(const RedundancyOptions& options);

}  // namespace verisub::verify
