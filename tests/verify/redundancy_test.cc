// Redundancy: an axiom derivable from the others is reported with the axioms that derive it;
// independent axioms are not.
#include "verify/redundancy.h"

#include <gtest/gtest.h>

namespace verisub::verify {
namespace {

TEST(RedundancyTest, DerivableAxiomIsReported) {
  const std::string text = R"(
ewadd_comm (x y) (ewadd x y) = (ewadd y x)
ewadd_assoc (x y z) (ewadd x (ewadd y z)) = (ewadd (ewadd x y) z)
ewadd_rotate (x y z) (ewadd x (ewadd y z)) = (ewadd (ewadd z x) y)
matmul_assoc (x:2 y:2 z:2) (matmul[activation=none] x (matmul[activation=none] y z)) = (matmul[activation=none] (matmul[activation=none] x y) z)
relu_transpose (x) (transpose (relu x)) = (relu (transpose x))
)";
  auto axioms = specs::ParseAxioms("fixture", text);
  ASSERT_TRUE(axioms.ok()) << axioms.status().message();
  RedundancyOptions opt;
  opt.axioms = *axioms;
  opt.threads = 2;
  opt.progress = false;
  auto report = FindRedundantAxioms(opt);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->axioms.size(), 5u);
  // ewadd_rotate follows from commutativity and associativity (and vice versa for assoc).
  EXPECT_EQ(report->axioms[2].proof.status, ruledb::ProofStatus::kProved);
  EXPECT_EQ(report->axioms[2].proof.axioms_used,
            (std::vector<std::string>{"ewadd_assoc", "ewadd_comm"}));
  EXPECT_NE(report->axioms[3].proof.status, ruledb::ProofStatus::kProved);
  EXPECT_NE(report->axioms[4].proof.status, ruledb::ProofStatus::kProved);
}

TEST(RedundancyTest, ShippedAxiomsLoad) {
  RedundancyOptions opt;
  opt.threads = 2;
  opt.progress = false;
  auto report = FindRedundantAxioms(opt);
  ASSERT_TRUE(report.ok()) << report.status().message();
  auto all = specs::AllAxioms();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(report->axioms.size(), all->size());
  for (const AxiomRedundancy& r : report->axioms)
    EXPECT_NE(r.proof.status, ruledb::ProofStatus::kError) << r.name << ": " << r.proof.reason;
}

}  // namespace
}  // namespace verisub::verify
