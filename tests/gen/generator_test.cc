// The generator end to end on small search spaces whose candidates are known by hand.
#include "gen/generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <regex>
#include <string>

#include "gen/rule_coverage.h"
#include "ruledb/pattern_eval.h"
#include "specs/registry.h"
#include "specs/semantics.h"

namespace verisub::gen {
namespace {

constexpr const char* kElementwise = R"(
max_ops 3
input x0 [2,3]
input x1 [2,3]
input x2 [2,3]
op ewadd
op ewmul
)";

constexpr const char* kConvRelu = R"(
max_ops 2
input a [1,2,3,3]
input w [2,2,3,3] consumers=conv2d.1
op conv2d stride_h=1 stride_w=1 padding=same activation=none,relu group=1
op relu
)";

// A mix of everything the enumeration treats specially: constants, enlarge, split trees,
// commutative operators, interchangeable inputs, multi-output operators.
constexpr const char* kMixed = R"(
max_ops 3
input x0 [2,4] m
input x1 [2,4] m
input y [4,4]
input z [4,4]
input a [1,4,3,3]
input w [4,4,1,3] consumers=conv2d.1,enlarge,ewadd
input s []
constant const_imatmul y consumers=matmul
constant const_iconv a kernel_h=3 kernel_w=3 consumers=conv2d.1
op matmul activation=none input_rank=2
op ewadd
op smul
op relu
op conv2d stride_h=1 stride_w=1 padding=same activation=none group=1
op enlarge kernel_h=3 kernel_w=3
op concat axis=0,1 input_rank=2
op split axis=0,1 input_rank=2
op transpose perm=[1,0]
)";

GenResult Generate(const std::string& text, int threads, const std::string& extra = "") {
  auto config = ParseConfig(text + extra, "test.cfg");
  EXPECT_TRUE(config.ok()) << config.status().message();
  GenOptions options;
  options.threads = threads;
  auto result = RunGenerator(*config, options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return std::move(*result);
}

// Whether some candidate is `lhs => rhs` or `rhs => lhs`, up to a renaming of the inputs, the
// order of the outputs and the order of commutative operands (gen::RuleIndex).
bool HasRule(const std::vector<ruledb::Rule>& rules, const std::string& lhs,
             const std::string& rhs) {
  auto e = ruledb::ParseRule(lhs + " => " + rhs);
  if (!e.ok()) e = ruledb::ParseRule(rhs + " => " + lhs);
  EXPECT_TRUE(e.ok()) << "expected rule does not parse: " << lhs << " => " << rhs;
  return e.ok() && RuleIndex(rules).Contains(*e);
}

TEST(GeneratorTest, ElementwiseLawsAppear) {
  GenResult r = Generate(kElementwise, 1, "pairs all\n");
  const auto& texts = r.rules;
  EXPECT_TRUE(HasRule(texts, "(ewadd (ewadd ?a ?b) ?c)", "(ewadd ?a (ewadd ?b ?c))"));
  EXPECT_TRUE(HasRule(texts, "(ewmul (ewmul ?a ?b) ?c)", "(ewmul ?a (ewmul ?b ?c))"));
  EXPECT_TRUE(HasRule(texts, "(ewmul (ewadd ?a ?b) ?c)", "(ewadd (ewmul ?a ?c) (ewmul ?b ?c))"));
  // Commutativity shows inside larger graphs ...
  EXPECT_TRUE(HasRule(texts, "(ewadd (ewadd ?a ?b) ?c)", "(ewadd (ewadd ?a ?c) ?b)"));
  // ... and as a rule of its own once commutative operands are not put in canonical order.
  EXPECT_FALSE(std::any_of(texts.begin(), texts.end(), [](const ruledb::Rule& x) {
    return x.ToText() == "(ewadd ?a ?b) => (ewadd ?b ?a)";
  }));
  GenResult plain_result = Generate(kElementwise, 1, "pairs all\nbreak_commutative no\n");
  const auto& plain = plain_result.rules;
  for (const char* text : {"(ewadd ?a ?b) => (ewadd ?b ?a)", "(ewmul ?a ?b) => (ewmul ?b ?a)"})
    EXPECT_TRUE(std::any_of(plain.begin(), plain.end(), [&](const ruledb::Rule& x) {
      return x.ToText() == text;
    })) << text;
  // Must-not-fire twins: add and multiply do not distribute the other way round.
  EXPECT_FALSE(HasRule(texts, "(ewadd (ewmul ?a ?b) ?c)", "(ewmul (ewadd ?a ?c) (ewadd ?b ?c))"));
  EXPECT_FALSE(HasRule(texts, "(ewadd ?a ?b)", "(ewmul ?a ?b)"));
}

// Picks, for every rule input, a config input shape for which the source type-checks.
std::vector<specs::Shape> InputShapes(const ruledb::Rule& rule, const GenConfig& config) {
  std::vector<specs::Shape> options;
  for (const InputDecl& in : config.inputs)
    if (std::find(options.begin(), options.end(), in.shape) == options.end())
      options.push_back(in.shape);
  std::vector<size_t> pick(rule.num_inputs, 0);
  specs::ModIntSemantics mi;
  while (true) {
    std::vector<specs::Tensor<uint32_t>> in;
    for (size_t p : pick) {
      specs::Tensor<uint32_t> t{specs::TensorType(options[p]), {}};
      t.data.assign(options[p].NumElements(), 1);
      in.push_back(std::move(t));
    }
    if (ruledb::EvalPattern(mi, rule.src, in).ok() && ruledb::EvalPattern(mi, rule.dst, in).ok()) {
      std::vector<specs::Shape> out;
      for (size_t p : pick) out.push_back(options[p]);
      return out;
    }
    size_t i = 0;
    while (i < pick.size() && ++pick[i] == options.size()) pick[i++] = 0;
    if (i == pick.size()) return {};
  }
}

// Whether both sides' root is the same commutative operator on the same operand values in some
// order: a pair the congruence filter drops when a naming puts the equal operands in the same
// positions. Evaluated in double on inputs of shapes the config has.
bool CongruentUpToOperandOrder(const ruledb::Rule& r, const GenConfig& config) {
  if (r.src.outputs.size() != 1) return false;
  const ruledb::ValueRef s = r.src.outputs[0], d = r.dst.outputs[0];
  if (s.is_input() || d.is_input()) return false;
  const ruledb::PatternNode& a = r.src.nodes[s.node];
  const ruledb::PatternNode& b = r.dst.nodes[d.node];
  if (a.op != b.op || !(a.params == b.params) || !specs::GetOp(a.op).commutative) return false;
  std::vector<specs::Shape> shapes = InputShapes(r, config);
  if (shapes.size() != static_cast<size_t>(r.num_inputs)) return false;
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<specs::Tensor<double>> in;
  for (const specs::Shape& sh : shapes) {
    specs::Tensor<double> t{specs::TensorType(sh), {}};
    for (int64_t i = 0; i < sh.NumElements(); ++i) t.data.push_back(dist(rng));
    in.push_back(std::move(t));
  }
  ruledb::PatternGraph x = r.src, y = r.dst;
  x.outputs = a.inputs;
  y.outputs = b.inputs;
  specs::DoubleSemantics db;
  auto vx = ruledb::EvalPattern(db, x, in);
  auto vy = ruledb::EvalPattern(db, y, in);
  if (!vx.ok() || !vy.ok()) return false;
  return (Close((*vx)[0], (*vy)[0], 1e-6) && Close((*vx)[1], (*vy)[1], 1e-6)) ||
         (Close((*vx)[0], (*vy)[1], 1e-6) && Close((*vx)[1], (*vy)[0], 1e-6));
}

// Renaming interchangeable inputs maps equal graphs to equal graphs, and the graphs of a pair
// can be renamed together so that both use their groups' first members (the target's inputs are
// among the source's): with every pair of a class tried, a grouped space finds every ungrouped
// candidate up to renaming and operand order, except pairs it drops as congruent because its
// namings put equal operands in the same positions.
void ExpectGroupsLoseNoCandidate(const std::string& grouped, const std::string& plain) {
  GenResult g = Generate(grouped, 2, "pairs all\n");
  GenResult p = Generate(plain, 2, "pairs all\n");
  EXPECT_LT(g.report.enumeration.graphs, p.report.enumeration.graphs);
  EXPECT_GT(g.report.enumeration.interchangeable_skipped, 0u);
  EXPECT_FALSE(g.rules.empty());
  EXPECT_TRUE(MissingRules(p.rules, g.rules).empty());
  std::vector<std::string> lost = MissingRules(g.rules, p.rules);
  EXPECT_LT(lost.size(), p.rules.size() / 20);
  for (const std::string& text : lost) {
    auto rule = ruledb::ParseRule(text);
    ASSERT_TRUE(rule.ok());
    EXPECT_TRUE(CongruentUpToOperandOrder(*rule, *ParseConfig(plain, "plain.cfg"))) << text;
  }
}

TEST(GeneratorTest, InterchangeableInputsShrinkTheSearchAndLoseNoCandidate) {
  ExpectGroupsLoseNoCandidate(R"(
max_ops 3
input x0 [2,3] x
input x1 [2,3] x
input x2 [2,3] x
op ewadd
op ewmul
)",
                              kElementwise);
  // Kernels of one shape, as TASO has three of each. (No identity constant and no enlarge of a
  // 3x3 tensor here: a graph with two outputs of equal value maps outputs ambiguously.)
  const std::string space = R"(
max_ops 3
input a0 [1,2,4,4]
input a1 [1,2,4,4]
op conv2d stride_h=1 stride_w=1 padding=same activation=none group=1
op ewadd
op concat axis=0,1
op split axis=0,1
op enlarge kernel_h=3 kernel_w=3
)";
  ExpectGroupsLoseNoCandidate(space + R"(
input w0 [2,2,3,3] w consumers=conv2d.1,ewadd,concat
input w1 [2,2,3,3] w consumers=conv2d.1,ewadd,concat
input w2 [2,2,3,3] w consumers=conv2d.1,ewadd,concat
input v0 [2,2,1,3] v consumers=conv2d.1,enlarge
input v1 [2,2,1,3] v consumers=conv2d.1,enlarge
)",
                              space + R"(
input w0 [2,2,3,3] consumers=conv2d.1,ewadd,concat
input w1 [2,2,3,3] consumers=conv2d.1,ewadd,concat
input w2 [2,2,3,3] consumers=conv2d.1,ewadd,concat
input v0 [2,2,1,3] consumers=conv2d.1,enlarge
input v1 [2,2,1,3] consumers=conv2d.1,enlarge
)");
}

TEST(GeneratorTest, ConvReluFusionAppears) {
  GenResult r = Generate(kConvRelu, 1);
  const auto& texts = r.rules;
  const std::string conv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=";
  EXPECT_TRUE(HasRule(texts, "(" + conv + "relu,group=1] ?a ?b)",
                      "(relu (" + conv + "none,group=1] ?a ?b))"));
  EXPECT_FALSE(
      HasRule(texts, "(" + conv + "relu,group=1] ?a ?b)", "(" + conv + "none,group=1] ?a ?b)"));
  EXPECT_FALSE(HasRule(texts, "(relu ?a)", "?a"));
}

// Operators of three inputs are enumerated: a convolution with its bias (and activation) is
// the unfused chain, a layer normalization's scale and shift read as the affine after it.
constexpr const char* kThreeInputs = R"(
max_ops 3
input a [1,2,3,3]
input w [2,2,1,1] consumers=conv2d.1,conv2d_bias.1
input b [2] consumers=bias_add.1,conv2d_bias.2
op conv2d stride_h=1 stride_w=1 padding=valid activation=none group=1
op conv2d_bias stride_h=1 stride_w=1 padding=valid activation=none,relu group=1
op bias_add axis=1
op relu
)";

TEST(GeneratorTest, OperatorsOfThreeInputsAreEnumerated) {
  GenResult one = Generate(kThreeInputs, 1);
  GenResult two = Generate(kThreeInputs, 2);
  const std::string conv = "conv2d[stride_h=1,stride_w=1,padding=valid,activation=none,group=1]";
  const std::string with_bias = "conv2d_bias[stride_h=1,stride_w=1,padding=valid,activation=";
  EXPECT_TRUE(HasRule(one.rules, "(" + with_bias + "none,group=1] ?a ?b ?c)",
                      "(bias_add[axis=1] (" + conv + " ?a ?b) ?c)"));
  EXPECT_TRUE(HasRule(one.rules, "(" + with_bias + "relu,group=1] ?a ?b ?c)",
                      "(relu (bias_add[axis=1] (" + conv + " ?a ?b) ?c))"));
  EXPECT_TRUE(HasRule(one.rules, "(" + with_bias + "relu,group=1] ?a ?b ?c)",
                      "(relu (" + with_bias + "none,group=1] ?a ?b ?c))"));
  EXPECT_EQ(CandidatesText(one.rules), CandidatesText(two.rules));
  EXPECT_EQ(one.report.enumeration.graphs, two.report.enumeration.graphs);
}

// Folds: kernels and biases concatenated at load are free, so two biased convolutions of one
// input (2 operators) equal one on the concatenated weights and a split (2): the merge of
// Inception's parallel branches, found and proved within two operators.
constexpr const char* kFoldedMerge = R"(
max_ops 2
input a [1,2,3,3]
input k0 [2,2,1,1] consumers=conv2d_bias.1
input k1 [2,2,1,1] consumers=conv2d_bias.1
input b0 [2] consumers=conv2d_bias.2
input b1 [2] consumers=conv2d_bias.2
fold concat k0 k1 axis=0 consumers=conv2d_bias.1
fold concat b0 b1 axis=0 consumers=conv2d_bias.2
op conv2d_bias stride_h=1 stride_w=1 padding=valid activation=relu group=1
op split axis=1
)";

TEST(GeneratorTest, FoldedWeightsMergeBiasedConvolutions) {
  GenResult r = Generate(kFoldedMerge, 2);
  const std::string conv =
      "conv2d_bias[stride_h=1,stride_w=1,padding=valid,activation=relu,group=1]";
  const std::string merged = "(" + conv + " ?a (concat[axis=0] ?b ?d) (concat[axis=0] ?c ?e))";
  EXPECT_TRUE(HasRule(r.rules, "(" + conv + " ?a ?b ?c) ; (" + conv + " ?a ?d ?e)",
                      "(split.0[axis=1] " + merged + ") ; (split.1[axis=1] " + merged + ")"))
      << CandidatesText(r.rules);
}

// Every candidate holds on fresh random inputs, and reads back from its text.
void ExpectAllHoldInDouble(const std::string& text) {
  auto config = ParseConfig(text, "test.cfg");
  ASSERT_TRUE(config.ok());
  GenResult r = Generate(text, 2);
  ASSERT_FALSE(r.rules.empty());
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  specs::DoubleSemantics db;
  for (const ruledb::Rule& rule : r.rules) {
    auto parsed = ruledb::ParseRule(rule.ToText());
    ASSERT_TRUE(parsed.ok()) << rule.ToText() << ": " << parsed.status().message();
    EXPECT_EQ(parsed->ToText(), rule.ToText());
    EXPECT_TRUE(ruledb::ValidateRule(rule).ok()) << rule.ToText();
    std::vector<specs::Shape> shapes = InputShapes(rule, *config);
    ASSERT_EQ(shapes.size(), static_cast<size_t>(rule.num_inputs)) << rule.ToText();
    for (int trial = 0; trial < 2; ++trial) {
      std::vector<specs::Tensor<double>> in;
      for (const specs::Shape& sh : shapes) {
        specs::Tensor<double> t{specs::TensorType(sh), {}};
        for (int64_t i = 0; i < sh.NumElements(); ++i) t.data.push_back(dist(rng));
        in.push_back(std::move(t));
      }
      auto a = ruledb::EvalPattern(db, rule.src, in);
      auto b = ruledb::EvalPattern(db, rule.dst, in);
      ASSERT_TRUE(a.ok() && b.ok()) << rule.ToText();
      ASSERT_EQ(a->size(), b->size());
      for (size_t o = 0; o < a->size(); ++o)
        EXPECT_TRUE(Close((*a)[o], (*b)[o], 1e-6)) << rule.ToText() << " output " << o;
    }
  }
}

TEST(GeneratorTest, NoCandidateIsFalseInDouble) {
  ExpectAllHoldInDouble(kElementwise);
  ExpectAllHoldInDouble(kConvRelu);
  ExpectAllHoldInDouble(kMixed);
}

TEST(GeneratorTest, SameOutputForOneAndTwoThreadsAndAcrossRuns) {
  GenResult one = Generate(kMixed, 1);
  GenResult two = Generate(kMixed, 2);
  GenResult again = Generate(kMixed, 2);
  std::string text = CandidatesText(one.rules);
  EXPECT_FALSE(one.rules.empty());
  EXPECT_EQ(text, CandidatesText(two.rules));
  EXPECT_EQ(text, CandidatesText(again.rules));
  EXPECT_EQ(one.report.enumeration.graphs, two.report.enumeration.graphs);
  EXPECT_EQ(one.report.pairs.distinct_fingerprints, two.report.pairs.distinct_fingerprints);
  EXPECT_TRUE(std::is_sorted(
      one.rules.begin(), one.rules.end(),
      [](const ruledb::Rule& a, const ruledb::Rule& b) { return a.ToText() < b.ToText(); }));
}

TEST(GeneratorTest, KnownTasoRulesOfTheMixedSpace) {
  GenResult r = Generate(kMixed, 2);
  const auto& texts = r.rules;
  // Fusing two matmuls that share an input, through concat and split.
  EXPECT_TRUE(HasRule(texts, "(matmul[activation=none] ?a ?b) ; (matmul[activation=none] ?a ?c)",
                      "(split.0[axis=1] (matmul[activation=none] ?a (concat[axis=1] ?b ?c))) ; "
                      "(split.1[axis=1] (matmul[activation=none] ?a (concat[axis=1] ?b ?c)))"));
  // Identity constants, which need the 0-operator identity graphs.
  EXPECT_TRUE(HasRule(texts, "(matmul[activation=none] ?a (const_imatmul ?a))", "?a"));
  EXPECT_TRUE(HasRule(texts, "(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a))", "?a"));
  // A 1x3 kernel enlarged to 3x3 computes the same convolution.
  EXPECT_TRUE(HasRule(texts,
                      "(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] ?a ?b)",
                      "(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] ?a "
                      "(enlarge[kernel_h=3,kernel_w=3] ?b))"));
}

TEST(GeneratorTest, EveryStageIsCounted) {
  GenResult r = Generate(kMixed, 2);
  const GenReport& rep = r.report;
  EXPECT_EQ(rep.stop_reason, "complete");
  EXPECT_GT(rep.enumeration.graphs, rep.pairs.distinct_fingerprints);
  EXPECT_GE(rep.pairs.distinct_fingerprints, rep.pairs.buckets);
  EXPECT_EQ(rep.pairs.candidates, r.rules.size());
  EXPECT_GT(rep.peak_rss_kb, 0u);
  std::string report = FormatReport(rep);
  EXPECT_NE(report.find("graphs visited: " + std::to_string(rep.enumeration.graphs)),
            std::string::npos);
  EXPECT_NE(report.find("candidate rules: " + std::to_string(r.rules.size())), std::string::npos);
}

TEST(GeneratorTest, TextsAreTheRulesAndRulesAreOptional) {
  GenResult r = Generate(kMixed, 2);
  ASSERT_EQ(r.texts.size(), r.rules.size());
  for (size_t i = 0; i < r.texts.size(); ++i) EXPECT_EQ(r.texts[i], r.rules[i].ToText());
  auto config = ParseConfig(kMixed, "test.cfg");
  ASSERT_TRUE(config.ok());
  GenOptions options;
  options.threads = 1;
  options.rules = false;
  auto texts_only = RunGenerator(*config, options);
  ASSERT_TRUE(texts_only.ok());
  EXPECT_TRUE(texts_only->rules.empty());
  EXPECT_EQ(texts_only->texts, r.texts);
}

constexpr const char* kMaxMin = R"(
max_ops 3
input x0 [2,3]
input x1 [2,3]
input x2 [2,3]
op ewmax
op ewmin
op neg
)";

// max and min are idempotent: no graph applies them to one tensor twice (every rule through
// max(x, x) is one through x, with an operator less), and their other laws still appear.
TEST(GeneratorTest, IdempotentOperatorsAreNotAppliedToOneTensorTwice) {
  GenResult r = Generate(kMaxMin, 1);
  const std::regex self(R"(\((ewmax|ewmin) (\?[a-z]) \2\))");
  for (const std::string& text : r.texts) EXPECT_FALSE(std::regex_search(text, self)) << text;
  EXPECT_GT(r.report.enumeration.duplicate_rejected, 0u);
  EXPECT_TRUE(HasRule(r.rules, "(neg (ewmin ?a ?b))", "(ewmax (neg ?a) (neg ?b))"));
  EXPECT_TRUE(HasRule(r.rules, "(ewmax (ewmax ?a ?b) ?c)", "(ewmax ?a (ewmax ?b ?c))"));
}

// `candidate` lines join the generated candidates, sorted in; one the enumeration finds itself
// is counted once.
TEST(GeneratorTest, ConfigCandidatesJoinTheGenerated) {
  GenResult base = Generate(kElementwise, 1);
  ASSERT_FALSE(base.texts.empty());
  const std::string found = base.texts.front();
  const std::string commuted = "(ewadd ?a ?b) => (ewadd ?b ?a)";  // never generated (symmetry)
  ASSERT_FALSE(std::binary_search(base.texts.begin(), base.texts.end(), commuted));
  GenResult r = Generate(kElementwise, 1, "candidate " + commuted + "\ncandidate " + found + "\n");
  EXPECT_EQ(r.report.config_candidates, 1);
  EXPECT_EQ(r.texts.size(), base.texts.size() + 1);
  EXPECT_TRUE(std::is_sorted(r.texts.begin(), r.texts.end()));
  EXPECT_TRUE(std::binary_search(r.texts.begin(), r.texts.end(), commuted));
  ASSERT_EQ(r.rules.size(), r.texts.size());
  EXPECT_NE(FormatReport(r.report).find("candidates from the config: 1"), std::string::npos);
}

TEST(GeneratorTest, GraphLimitStopsEarlyAndSaysSo) {
  GenResult r = Generate(kMixed, 1, "max_graphs 100\n");
  EXPECT_TRUE(r.report.enumeration.stopped_early);
  EXPECT_NE(r.report.stop_reason.find("max_graphs"), std::string::npos);
  GenResult full = Generate(kMixed, 1);
  EXPECT_LT(r.report.enumeration.graphs, full.report.enumeration.graphs);
}

TEST(GeneratorTest, WritesTheDumpAtomically) {
  GenResult r = Generate(kConvRelu, 1);
  std::string path = ::testing::TempDir() + "gen_candidates_test.txt";
  ASSERT_TRUE(WriteCandidates(r.texts, path).ok());
  FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string content;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) content.append(buf, n);
  std::fclose(f);
  EXPECT_EQ(content, CandidatesText(r.rules));
  EXPECT_EQ(std::fopen((path + ".tmp").c_str(), "rb"), nullptr);
  std::remove(path.c_str());
  EXPECT_FALSE(WriteCandidates(r.texts, "/no/such/dir/out.txt").ok());
}

}  // namespace
}  // namespace verisub::gen
