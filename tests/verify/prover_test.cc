// The prover: known-true candidates are proved with the expected axioms, known-false ones never
// are (the grouped-convolution trap included), timeouts and unknowns are not proofs, dumps
// replay, and results do not depend on the thread count.
#include "verify/prover.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/verify/rule_text.h"
#include "verify/candidates.h"

namespace verisub::verify {
namespace {

using ruledb::ProofStatus;

std::vector<ruledb::Rule> Load(const std::string& path) {
  auto rules = ReadCandidates(path);
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return rules.ok() ? *rules : std::vector<ruledb::Rule>{};
}

using testing::Rule;

VerifyOptions Quiet(int threads = 2) {
  VerifyOptions o;
  o.threads = threads;
  o.progress = false;
  return o;
}

bool Uses(const ruledb::ProofRecord& p, const std::string& axiom) {
  return std::find(p.axioms_used.begin(), p.axioms_used.end(), axiom) != p.axioms_used.end();
}

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("verisub_verify_test_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);  // the prover writes into it, never creates it
  return dir.string();
}

const char* kConv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
const char* kConvRelu = "conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1]";
const char* kConvGroup2 = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=2]";

TEST(ProverTest, KnownTrueCandidatesAreProved) {
  std::vector<ruledb::Rule> rules = Load("tests/verify/candidates_true.txt");
  ASSERT_GE(rules.size(), 30u);
  auto report = VerifyRules(rules, Quiet());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->proved, report->total);
  for (const ruledb::Rule& r : rules) {
    EXPECT_EQ(r.proof.status, ProofStatus::kProved) << r.ToText() << ": " << r.proof.reason;
    EXPECT_FALSE(r.proof.axioms_used.empty()) << r.ToText();
  }
}

TEST(ProverTest, ProofsNameTheAxiomsTheyUse) {
  std::vector<ruledb::Rule> rules = {
      Rule("(matmul[activation=none] (matmul[activation=none] ?a ?b) ?c) => "
           "(matmul[activation=none] ?a (matmul[activation=none] ?b ?c))"),
      Rule(std::string("(") + kConv + " (ewadd ?x ?y) ?w) => (ewadd (" + kConv + " ?x ?w) (" +
           kConv + " ?y ?w))"),
      Rule("(split.0[axis=1] (concat[axis=1] ?a ?b)) ; (split.1[axis=1] (concat[axis=1] ?a ?b)) "
           "=> ?a ; ?b"),
      Rule(std::string("(relu (") + kConv + " ?x ?w)) => (" + kConvRelu + " ?x ?w)"),
  };
  auto report = VerifyRules(rules, Quiet());
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->proved, 4);
  EXPECT_TRUE(Uses(rules[0].proof, "matmul_assoc"));
  EXPECT_TRUE(Uses(rules[1].proof, "conv_linear_input"));
  EXPECT_TRUE(Uses(rules[2].proof, "split0_concat"));
  EXPECT_TRUE(Uses(rules[2].proof, "split1_concat"));
  EXPECT_TRUE(Uses(rules[3].proof, "conv_relu_fusion"));
  EXPECT_FALSE(Uses(rules[3].proof, "matmul_assoc"));
}

TEST(ProverTest, KnownFalseCandidatesAreNeverProved) {
  std::vector<ruledb::Rule> rules = Load("tests/verify/candidates_false.txt");
  ASSERT_GE(rules.size(), 10u);
  auto report = VerifyRules(rules, Quiet());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->proved, 0);
  for (const ruledb::Rule& r : rules) {
    EXPECT_NE(r.proof.status, ProofStatus::kProved) << r.ToText();
    EXPECT_FALSE(r.proof.reason.empty()) << r.ToText();
    EXPECT_TRUE(r.proof.axioms_used.empty()) << r.ToText();
  }
}

TEST(ProverTest, GroupedConvolutionTrapIsNotProvedAndItsDumpReplays) {
  // concat1(conv(x,y), conv(z,w)) = conv[group=2](concat1(x,z), concat0(y,w)) is false when the
  // two convolutions have different numbers of output channels; TASO shipped such rules.
  std::string dir = TempDir("trap");
  std::vector<ruledb::Rule> rules = {
      Rule(std::string("(concat[axis=1] (") + kConv + " ?x ?y) (" + kConv + " ?z ?w)) => (" +
           kConvGroup2 + " (concat[axis=1] ?x ?z) (concat[axis=0] ?y ?w))"),
      // Its twin with one group per convolution is an axiom instance and is proved.
      Rule(std::string("(concat[axis=1] (") + kConv + " ?x ?y) (" + kConv + " ?x ?w)) => (" +
           kConv + " ?x (concat[axis=0] ?y ?w))"),
  };
  VerifyOptions opt = Quiet();
  opt.prover.smt2_dir = dir;
  auto report = VerifyRules(rules, opt);
  ASSERT_TRUE(report.ok());
  EXPECT_NE(rules[0].proof.status, ProofStatus::kProved);
  EXPECT_EQ(rules[1].proof.status, ProofStatus::kProved);
  std::string dump = dir + "/rule-00000.smt2";
  ASSERT_TRUE(std::filesystem::exists(dump));
  EXPECT_FALSE(std::filesystem::exists(dir + "/rule-00001.smt2"));  // proofs are not dumped
  std::string out = dir + "/replay.txt";
  ASSERT_EQ(std::system(("z3 " + dump + " > " + out + " 2>&1").c_str()), 0);
  std::ifstream in(out);
  std::string answer;
  std::getline(in, answer);
  EXPECT_TRUE(answer == "sat" || answer == "unknown") << answer;
}

TEST(ProverTest, TimeoutIsReportedAndNeverAProof) {
  // With model-based instantiation this false candidate keeps the solver busy (seconds); a
  // 50 ms budget must end it as a timeout, recorded with its reason and dumped.
  std::string dir = TempDir("timeout");
  std::vector<ruledb::Rule> rules = {
      Rule("(split.0[axis=0] (concat[axis=0] ?a ?b)) => ?b"),
      Rule(std::string("(") + kConvRelu + " (ewadd ?x ?y) ?w) => (ewadd (" + kConvRelu +
           " ?x ?w) (" + kConvRelu + " ?y ?w))"),
  };
  VerifyOptions opt = Quiet();
  opt.prover.timeout_ms = 50;
  opt.prover.resource_limit = 0;  // the wall clock alone
  opt.prover.model_based_instantiation = true;
  opt.prover.refute.enabled = false;  // both are refuted by evaluation before Z3 otherwise
  opt.prover.smt2_dir = dir;
  auto report = VerifyRules(rules, opt);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->proved, 0);
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_NE(rules[i].proof.status, ProofStatus::kProved);
    if (rules[i].proof.status == ProofStatus::kTimeout) {
      EXPECT_NE(rules[i].proof.reason.find("timeout after 50 ms"), std::string::npos);
    }
  }
  EXPECT_GE(report->timeout, 1);
  EXPECT_TRUE(std::filesystem::exists(dir + "/rule-00000.smt2"));
}

TEST(ProverTest, UnknownIsNeverAProof) {
  // Without model-based instantiation, E-matching saturates on a false candidate and Z3
  // answers unknown: not a proof, with the solver's reason.
  std::vector<ruledb::Rule> rules = {Rule("(relu (ewadd ?a ?b)) => (ewadd (relu ?a) (relu ?b))")};
  VerifyOptions opt = Quiet(1);
  opt.prover.refute.enabled = false;  // it is refuted by evaluation before Z3 otherwise
  auto report = VerifyRules(rules, opt);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(rules[0].proof.status, ProofStatus::kUnknown);
  EXPECT_NE(rules[0].proof.reason.find("incomplete quantifiers"), std::string::npos);
  EXPECT_EQ(report->proved, 0);
  EXPECT_EQ(report->unknown, 1);
}

TEST(ProverTest, ResultsDoNotDependOnThreadCount) {
  // A deterministic resource limit instead of the wall clock: outcomes must then be identical,
  // whatever the thread count and the load of the machine.
  std::vector<ruledb::Rule> a = Load("tests/verify/candidates_true.txt");
  std::vector<ruledb::Rule> extra = Load("tests/verify/candidates_false.txt");
  a.insert(a.end(), extra.begin(), extra.end());
  std::vector<ruledb::Rule> b = a;
  VerifyOptions one = Quiet(1), two = Quiet(2);
  for (VerifyOptions* o : {&one, &two}) {
    o->prover.timeout_ms = 600000;
    o->prover.resource_limit = 2000000;
    o->rules_per_context = 3;  // several batches, decided in parallel with two threads
  }
  ASSERT_TRUE(VerifyRules(a, one).ok());
  ASSERT_TRUE(VerifyRules(b, two).ok());
  int ranked = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ranked += !a[i].input_ranks.empty();
    EXPECT_EQ(a[i].ToText(), b[i].ToText());
    EXPECT_EQ(a[i].proof.status, b[i].proof.status) << a[i].ToText();
    EXPECT_EQ(a[i].proof.reason, b[i].proof.reason) << a[i].ToText();
    EXPECT_EQ(a[i].proof.axioms_used, b[i].proof.axioms_used) << a[i].ToText();
  }
  EXPECT_GE(ranked, 3);  // ranked candidates and proofs at input ranks among them
}

TEST(ProverTest, AnOutcomeDependsOnItsBatchOnly) {
  // Z3's search depends on the terms its context has seen, so contexts are shared only within
  // fixed batches of consecutive rules: with one rule per context a rule's record is the same
  // alone and after others, with any thread count. (With one context per thread, deciding
  // taso.cfg's candidates in another order changed 7 outcomes; reproducing that takes hundreds
  // of rules, so this checks the property on a rule that is proved just within its resource
  // limit.)
  std::string conv = kConv;
  std::vector<ruledb::Rule> rules = {
      Rule("(" + conv + " (concat[axis=1] (concat[axis=1] ?a ?b) ?c) (concat[axis=1] " +
           "(concat[axis=1] ?a ?b) ?c)) => (" + conv + " (concat[axis=1] ?a (concat[axis=1] ?c " +
           "?b)) (concat[axis=1] ?a (concat[axis=1] ?c ?b)))"),
      Rule("(" + conv + " (concat[axis=1] ?a (" + conv +
           " ?b (const_iconv[kernel_h=3,kernel_w=3] ?c))) (concat[axis=1] ?a (" + conv +
           " ?b (const_iconv[kernel_h=3,kernel_w=3] ?c)))) => (" + conv +
           " (concat[axis=1] ?b ?a) (concat[axis=1] ?b ?a))"),
      Rule("(" + conv + " (concat[axis=1] ?a ?b) (concat[axis=1] ?a ?b)) ; (split.0[axis=1] " +
           "(concat[axis=1] ?a ?b)) ; (split.1[axis=1] (concat[axis=1] ?a ?b)) => (" + conv +
           " (concat[axis=1] ?b ?a) (concat[axis=1] ?b ?a)) ; (split.1[axis=1] (concat[axis=1] " +
           "?b ?a)) ; (split.0[axis=1] (concat[axis=1] ?b ?a))"),
  };
  std::vector<ruledb::Rule> alone = {rules[2]};
  for (int threads : {1, 2}) {
    VerifyOptions opt = Quiet(threads);
    opt.prover.resource_limit = 3000;
    opt.rules_per_context = 1;
    std::vector<ruledb::Rule> after = rules;
    ASSERT_TRUE(VerifyRules(alone, opt).ok());
    ASSERT_TRUE(VerifyRules(after, opt).ok());
    EXPECT_EQ(alone[0].proof.status, after[2].proof.status) << threads;
    EXPECT_EQ(alone[0].proof.reason, after[2].proof.reason) << threads;
    EXPECT_EQ(alone[0].proof.axioms_used, after[2].proof.axioms_used) << threads;
  }
}

TEST(ProverTest, DumpsDoNotChangeOutcomes) {
  // Dumps are encoded in a context of their own: the batch's context, and so every later
  // outcome in it, is the same with and without --smt2-dir. (Encoded in the batch's context,
  // the dumps of this batch's first rules changed two later outcomes.)
  std::vector<ruledb::Rule> a = Load("tests/verify/candidates_batch.txt");
  std::vector<ruledb::Rule> b = a;
  VerifyOptions plain = Quiet(1), dumping = Quiet(1);
  for (VerifyOptions* o : {&plain, &dumping}) {
    o->rules_per_context = 32;
    o->prover.index_level = false;  // Z3's outcomes are the subject; the batch's unknowns stay
  }
  std::string dir = TempDir("dumps");
  dumping.prover.smt2_dir = dir;
  auto ra = VerifyRules(a, plain);
  auto rb = VerifyRules(b, dumping);
  ASSERT_TRUE(ra.ok() && rb.ok());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].ToText(), b[i].ToText());
    EXPECT_EQ(a[i].proof.status, b[i].proof.status) << a[i].ToText();
    EXPECT_EQ(a[i].proof.reason, b[i].proof.reason) << a[i].ToText();
    EXPECT_EQ(a[i].proof.axioms_used, b[i].proof.axioms_used) << a[i].ToText();
  }
  // Every rule that is not proved has its dump.
  int dumps = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    dumps += e.path().filename().string().find("-ranks") == std::string::npos;
  EXPECT_EQ(dumps, rb->total - rb->proved);
  EXPECT_GT(rb->total - rb->proved, 5);
}

TEST(ProverTest, RanksAreRecordedWhenTheProofNeedsThem) {
  const std::string mm = "matmul[activation=none]";
  std::vector<ruledb::Rule> rules = {
      // Needs matmul_concat_inner (2-D only): proved at its first base's ranks, recorded.
      Rule("(ewadd (" + mm + " ?a ?b) (" + mm + " ?c ?d)) => (" + mm +
           " (concat[axis=1] ?a ?c) (concat[axis=0] ?b ?d))"),
      // matmul_assoc is declared for every rank it type-checks at: no ranks.
      Rule("(" + mm + " (" + mm + " ?a ?b) ?c) => (" + mm + " ?a (" + mm + " ?b ?c))"),
      // Guarded (transpose_involution's right side is a bare variable), but the rule
      // type-checks at 2-D only: ranks that say nothing are left out.
      Rule("(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a)) => ?a"),
      // A ranked candidate keeps its ranks, even proved without them.
      Rule("(ewadd ?a ?b) => (ewadd ?b ?a) where ?a:3 ?b:3"),
  };
  auto report = VerifyRules(rules, Quiet());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->proved, 4);
  EXPECT_EQ(report->proved_ranked, 2);
  EXPECT_EQ(rules[0].input_ranks, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_TRUE(Uses(rules[0].proof, "matmul_concat_inner"));
  EXPECT_TRUE(rules[1].input_ranks.empty());
  EXPECT_TRUE(rules[2].input_ranks.empty());
  EXPECT_EQ(rules[3].ToText(), "(ewadd ?a ?b) => (ewadd ?b ?a) where ?a:3 ?b:3");
}

TEST(ProverTest, OnlyTheGivenAxiomsAreUsed) {
  // Without matmul_assoc, associativity is no longer provable.
  auto all = specs::AllAxioms();
  ASSERT_TRUE(all.ok());
  VerifyOptions opt = Quiet(1);
  for (const specs::Axiom& ax : *all)
    if (ax.name != "matmul_assoc") opt.axioms.push_back(ax);
  std::vector<ruledb::Rule> rules = {
      Rule("(matmul[activation=none] (matmul[activation=none] ?a ?b) ?c) => "
           "(matmul[activation=none] ?a (matmul[activation=none] ?b ?c))")};
  ASSERT_TRUE(VerifyRules(rules, opt).ok());
  EXPECT_NE(rules[0].proof.status, ProofStatus::kProved);
}

TEST(CandidatesTest, MalformedLinesNameFileAndLine) {
  auto r = ParseCandidates("# comment\n\n(relu ?a) => (relu ?a)\n(frobnicate ?a) => ?a\n", "c.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("c.txt:4"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("frobnicate"), std::string::npos);
  auto ok = ParseCandidates("# only a comment\n(relu ?a) => (relu ?a)\n", "d.txt");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 1u);
  EXPECT_FALSE(ReadCandidates("/nonexistent/candidates.txt").ok());
}

}  // namespace
}  // namespace verisub::verify
