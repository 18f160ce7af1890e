// verisub-opt end to end: a model exported to ONNX, optimized, verified and reported; errors
// leave no output; the program links no Z3, TBB, gen/ or verify/ code.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "onnx/onnx_pb.h"
#include "rewriter/report_json.h"
#include "runtime/cost/cost_table.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "tests/rewriter/run_command.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

namespace fs = std::filesystem;
using testing::GraphBuilder;

using testing::CommandResult;
using testing::RunCommand;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class VerisubOptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("verisub_opt_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    GraphBuilder b;
    int x = b.Input("x", {1, 4, 8, 8});
    // The weight is a graph input: this branch's importer drops initializers (fixed on the
    // runtime branch), and the rule does not care where its inputs come from.
    int w = b.Input("w", {4, 4, 3, 3});
    int c = b.Op("conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]", {x, w});
    b.Output(b.Op("relu", {c}));
    runtime::Graph g = b.Finish();
    Status st = runtime::ExportOnnxFile(g, (dir_ / "in.onnx").string());
    ASSERT_TRUE(st.ok()) << st.message();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The default cost model is cpu-measured: its cache goes to the test's folder, not $HOME.
  std::string Opt(const std::string& args) {
    return std::string(VERISUB_OPT_PATH) + " " + (dir_ / "in.onnx").string() + " -o " +
           (dir_ / "out.onnx").string() + " --cost-cache " + (dir_ / "cache").string() + " " + args;
  }

  fs::path dir_;
};

TEST_F(VerisubOptTest, OptimizesVerifiesAndReports) {
  CommandResult r =
      RunCommand(Opt("--cost analytic --rules data/rules/handwritten.txt --allow-unproved "
                     "--verify-outputs --report " +
                     (dir_ / "report.json").string()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("cost before:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stop reason:     queue_empty"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("verify outputs:  ok"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x1  (relu (conv2d"), std::string::npos) << r.output;
  auto out = runtime::ImportOnnxFile((dir_ / "out.onnx").string());
  ASSERT_TRUE(out.ok()) << out.status().message();
  // The fused convolution is exported as the standard Conv + Relu pair.
  EXPECT_NE(r.output.find("nodes:           2 -> 1"), std::string::npos) << r.output;
  EXPECT_EQ(testing::CountOp(*out, "conv2d"), 1);
  std::string json = ReadFile(dir_ / "report.json");
  for (const char* key :
       {"\"cost_before_us\"", "\"rules_applied\"", "\"stop_reason\": \"queue_empty\"",
        "\"graphs_explored\"", "\"peak_rss_bytes\"", "\"nodes\": 2", "\"opaque_nodes\": 0",
        "\"opaque_ops\": {}"})
    EXPECT_NE(json.find(key), std::string::npos) << key << "\n" << json;
  EXPECT_FALSE(fs::exists(dir_ / "report.json.tmp"));
}

// --report-html writes one page: both graphs drawn (a node per graph node), the applied rule
// with its text, nothing fetched. Headless chromium renders it where Debian's is installed.
TEST_F(VerisubOptTest, WritesTheHtmlReport) {
  const std::string html = (dir_ / "report.html").string();
  CommandResult r =
      RunCommand(Opt("--cost analytic --rules data/rules/handwritten.txt "
                     "--allow-unproved --layout plain --report-html " +
                     html));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("report:          " + html), std::string::npos) << r.output;
  const std::string page = ReadFile(dir_ / "report.html");
  size_t nodes = 0;
  for (size_t at = page.find("<g class=\"node\">"); at != std::string::npos;
       at = page.find("<g class=\"node\">", at + 1))
    ++nodes;
  EXPECT_EQ(nodes, 2u + 1u);  // conv + relu before, the fused conv after
  EXPECT_NE(page.find("(relu (conv2d"), std::string::npos);
  EXPECT_NE(page.find("unchecked"), std::string::npos);  // a text rule carries no proof
  EXPECT_EQ(page.find("<script"), std::string::npos);
  if (std::system("command -v chromium > /dev/null 2>&1") == 0) {
    const std::string dom = (dir_ / "dom.html").string();
    CommandResult c =
        RunCommand("chromium --headless --no-sandbox --disable-gpu --dump-dom file://" + html +
                   " > " + dom + " 2> /dev/null");
    EXPECT_EQ(c.code, 0) << c.output;
    EXPECT_NE(ReadFile(dir_ / "dom.html").find("<svg"), std::string::npos);
  }
}

// --layout dp (the default) prices graphs by the layout DP and says which search's graph it
// kept; --layout plain runs the rewrites-only search; both write the same standard ONNX here.
TEST_F(VerisubOptTest, LayoutFlagChoosesTheSearchsPricing) {
  const std::string rules = "--cost analytic --rules data/rules/handwritten.txt --allow-unproved ";
  CommandResult dp = RunCommand(Opt(rules + "--verify-outputs"));
  ASSERT_EQ(dp.code, 0) << dp.output;
  EXPECT_NE(dp.output.find("layouts:         DP cost "), std::string::npos) << dp.output;
  EXPECT_NE(dp.output.find("(rewrites only): kept "), std::string::npos) << dp.output;
  EXPECT_NE(dp.output.find("verify outputs:  ok"), std::string::npos) << dp.output;
  CommandResult plain = RunCommand(Opt(rules + "--layout plain --verify-outputs"));
  ASSERT_EQ(plain.code, 0) << plain.output;
  EXPECT_EQ(plain.output.find("layouts:"), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find("verify outputs:  ok"), std::string::npos) << plain.output;
  CommandResult bad = RunCommand(Opt(rules + "--layout nhwc"));
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--layout"), std::string::npos) << bad.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx.tmp"));
}

// Issue 15: the measured costs are kept in a table; with the table complete, a second run measures
// nothing (--cost-missing error proves it) and writes the same model.
TEST_F(VerisubOptTest, MeasuredCostsAreSavedAndReproduce) {
  const std::string table = (dir_ / "costs.txt").string();
  CommandResult first = RunCommand(Opt("--cost cpu-measured --cost-table " + table));
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("cost model:      cpu-measured:onednn:t1"), std::string::npos)
      << first.output;
  auto t = runtime::CostTable::Load(table);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_GT(t->size(), 0);
  EXPECT_EQ(t->header().engine, "onednn");
  const std::string out1 = ReadFile(dir_ / "out.onnx");
  fs::remove(dir_ / "out.onnx");
  CommandResult again =
      RunCommand(Opt("--cost cpu-measured --cost-missing error --cost-table " + table));
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find(" 0 measured"), std::string::npos) << again.output;
  EXPECT_EQ(ReadFile(dir_ / "out.onnx"), out1);
  // An empty table with --cost-missing error names the missing instance.
  const std::string empty = (dir_ / "empty.txt").string();
  ASSERT_TRUE(runtime::CostTable(t->header()).Save(empty).ok());
  CommandResult missing =
      RunCommand(Opt("--cost cpu-measured --cost-missing error --cost-table " + empty));
  EXPECT_EQ(missing.code, 1) << missing.output;
  EXPECT_NE(missing.output.find("no entry for 'conv2d["), std::string::npos) << missing.output;
}

TEST_F(VerisubOptTest, BadCostTablesAndFlagsFail) {
  const fs::path bad = dir_ / "bad.txt";
  std::ofstream(bad) << "header { magic: \"something else\" }\n";
  CommandResult r = RunCommand(Opt("--cost-table " + bad.string()));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("bad.txt"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
  EXPECT_EQ(RunCommand(Opt("--cost cpu-measured --device v100")).code, 2);
  EXPECT_EQ(RunCommand(Opt("--cost gpu")).code, 2);
  EXPECT_EQ(RunCommand(Opt("--cost-threads 0")).code, 2);
  // A cache that cannot be created is a warning: the model is still written.
  std::ofstream(dir_ / "file") << "x";
  CommandResult cache = RunCommand(
      std::string(VERISUB_OPT_PATH) + " " + (dir_ / "in.onnx").string() + " -o " +
      (dir_ / "out.onnx").string() + " --cost-cache " + (dir_ / "file" / "sub").string());
  EXPECT_EQ(cache.code, 0) << cache.output;
  EXPECT_NE(cache.output.find("warning: cost cache"), std::string::npos) << cache.output;
  EXPECT_TRUE(fs::exists(dir_ / "out.onnx"));
}

TEST_F(VerisubOptTest, FindsTheShippedRulesFromAnyDirectory) {
  // No --rules, run from a directory without data/rules/: the shipped database is found
  // beside the executable's tree (or in this checkout) and named in the summary.
  CommandResult r = RunCommand("cd " + dir_.string() + " && " + Opt(""));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("data/rules/taso.pb, "), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "out.onnx"));
}

TEST_F(VerisubOptTest, MissingRulesFileFailsAndWritesNothing) {
  CommandResult r = RunCommand(Opt("--rules " + (dir_ / "none.rules").string()));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("none.rules"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
}

TEST_F(VerisubOptTest, UnprovedRulesNeedAFlag) {
  CommandResult r = RunCommand(Opt("--rules data/rules/handwritten.txt"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("--allow-unproved"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0 used"), std::string::npos) << r.output;
}

TEST_F(VerisubOptTest, MaxMemoryMbBoundsTheSearchAndTheComparison) {
  // A search budget whose graphs cannot fit is refused before the search, naming the phase.
  CommandResult r = RunCommand(Opt("--budget 1000000000 --max-memory-mb 1"));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("search: a budget of 1000000000 graphs"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
  // The comparison's executor must fit as well (the shipped squeezenet needs about 6 MB there):
  // refused before the search, with the exit code of a comparison that could not run.
  r = RunCommand(std::string(VERISUB_OPT_PATH) + " data/models/squeezenet1_1.onnx -o " +
                 (dir_ / "sq.onnx").string() + " --verify-outputs --max-memory-mb 3");
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find("CANNOT VERIFY"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("at node"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "sq.onnx"));
  r = RunCommand(std::string(VERISUB_OPT_PATH) + " data/models/squeezenet1_1.onnx -o " +
                 (dir_ / "sq.onnx").string() + " --verify-outputs --max-memory-mb 64");
  EXPECT_EQ(r.code, 0) << r.output;
  r = RunCommand(Opt("--max-memory-mb -5"));
  EXPECT_EQ(r.code, 2) << r.output;
}

TEST_F(VerisubOptTest, BadArgumentsAndModelsFail) {
  EXPECT_EQ(RunCommand(Opt("--alpha 0.5")).code, 2);
  EXPECT_EQ(RunCommand(Opt("--budget x")).code, 2);
  EXPECT_EQ(RunCommand(Opt("--frobnicate")).code, 2);
  // Issue 17: an unknown device was exit 1 (after loading the rules and the model), and a
  // negative or overflowing seed was accepted.
  CommandResult device = RunCommand(Opt("--device bogus"));
  EXPECT_EQ(device.code, 2) << device.output;
  EXPECT_NE(device.output.find("--device"), std::string::npos) << device.output;
  EXPECT_EQ(RunCommand(Opt("--seed -1 --verify-outputs")).code, 2);
  EXPECT_EQ(RunCommand(Opt("--seed 99999999999999999999999 --verify-outputs")).code, 2);
  EXPECT_EQ(RunCommand(Opt("--seed 12x --verify-outputs")).code, 2);
  EXPECT_EQ(RunCommand(Opt("--budget 99999999999")).code, 2);
  EXPECT_EQ(RunCommand(Opt("--time-limit nan")).code, 2);
  EXPECT_EQ(RunCommand(std::string(VERISUB_OPT_PATH) + " " + (dir_ / "in.onnx").string()).code,
            2);  // no -o
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
  std::ofstream(dir_ / "bad.onnx") << "not a model";
  CommandResult r = RunCommand(std::string(VERISUB_OPT_PATH) + " " + (dir_ / "bad.onnx").string() +
                               " -o " + (dir_ / "out.onnx").string() +
                               " --rules data/rules/handwritten.txt --allow-unproved");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
}

TEST_F(VerisubOptTest, InputShapeFixesASymbolicBatch) {
  onnx::ModelProto model;
  {
    std::ifstream in(dir_ / "in.onnx", std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&in));
  }
  auto* dims = model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type();
  dims->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  std::ofstream(dir_ / "in.onnx", std::ios::binary | std::ios::trunc) << model.SerializeAsString();
  const std::string rules = " --rules data/rules/handwritten.txt --allow-unproved";
  CommandResult r = RunCommand(Opt(rules));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("graph input 'x' has symbolic dimension 'batch'"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--input-shape x=1,4,8,8"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
  EXPECT_EQ(RunCommand(Opt(rules + " --input-shape x=1,4,8")).code, 1);     // rank 3, not 4
  EXPECT_EQ(RunCommand(Opt(rules + " --input-shape x=1,-4,8,8")).code, 2);  // malformed
  EXPECT_EQ(RunCommand(Opt(rules + " --input-shape z=1,4,8,8")).code, 1);   // no such input
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
  r = RunCommand(Opt(rules + " --input-shape x=1,4,8,8 --verify-outputs"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("opaque: 0 of 2 nodes (0.0%)"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "out.onnx"));
}

// An unsound rule (it drops a relu) must be caught by --verify-outputs: exit 3, nothing written.
TEST_F(VerisubOptTest, VerifyOutputsCatchesAnUnsoundRule) {
  GraphBuilder b;
  b.Output(b.Op("tanh", {b.Op("relu", {b.Input("x", {2, 16})})}));
  ASSERT_TRUE(runtime::ExportOnnxFile(b.Finish(), (dir_ / "in.onnx").string()).ok());
  std::ofstream(dir_ / "bad.rules") << "(tanh (relu ?a)) => (tanh ?a)\n";
  CommandResult r =
      RunCommand(Opt("--rules " + (dir_ / "bad.rules").string() + " --allow-unproved " +
                     "--verify-outputs --report " + (dir_ / "report.json").string()));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("VERIFY FAILED"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
  EXPECT_FALSE(fs::exists(dir_ / "report.json"));
}

TEST_F(VerisubOptTest, DumpsTheGraphAfterAPass) {
  const fs::path dump = dir_ / "after_folding.txt";
  CommandResult r = RunCommand(Opt("--dump-after constant-folding " + dump.string()));
  ASSERT_EQ(r.code, 0) << r.output;
  // Before the search: the conv and the relu the model was built with, in the text form.
  EXPECT_EQ(ReadFile(dump),
            "output (relu (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x "
            "w))\n");
  CommandResult bad = RunCommand(Opt("--dump-after nonesuch " + dump.string()));
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("import-fixes, constant-folding, search, finalize, fuse-epilogues"),
            std::string::npos)
      << bad.output;
}

#ifdef VERISUB_HAVE_HALIDE
// The sub-operator level of the optimized graph: each node lowered alone, then the one kernel
// of the chain.
TEST_F(VerisubOptTest, DumpsTheSubOperatorLevel) {
  GraphBuilder b;
  b.Output(b.Op("tanh", {b.Op("sigmoid", {b.Input("x", {2, 16})})}));
  ASSERT_TRUE(runtime::ExportOnnxFile(b.Finish(), (dir_ / "in.onnx").string()).ok());
  const fs::path lower = dir_ / "lower.txt", fuse = dir_ / "fuse.txt";
  CommandResult r = RunCommand(Opt("--cost analytic --dump-after lower " + lower.string()));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string text = ReadFile(lower);
  EXPECT_NE(text.find("(sigmoid)"), std::string::npos) << text;
  EXPECT_NE(text.find("= exp"), std::string::npos) << text;
  EXPECT_NE(text.find("(tanh)"), std::string::npos) << text;
  r = RunCommand(Opt("--cost analytic --dump-after fuse " + fuse.string()));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string fused = ReadFile(fuse);
  EXPECT_NE(fused.find("# kernel 0 gen:sigmoid+tanh"), std::string::npos) << fused;
  EXPECT_EQ(fused.find("# kernel 1"), std::string::npos) << fused;
}
#endif

TEST_F(VerisubOptTest, HelpListsEveryFlag) {
  CommandResult r = RunCommand(std::string(VERISUB_OPT_PATH) + " --help");
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* flag :
       {"usage: verisub-opt", "-o, --output PATH", "--rules", "--alpha", "--budget", "--time-limit",
        "--max-queue", "--device", "--report", "--verify-outputs", "--seed", "--allow-unproved",
        "--dump-after PASS FILE"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag << "\n" << r.output;
}

TEST(ReportJsonTest, EscapesStrings) {
  EXPECT_EQ(JsonEscape("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}

TEST(LinkTest, NoZ3TbbGenOrVerifyInVerisubOpt) {
  std::string closure = VERISUB_OPT_LINK_CLOSURE;
  EXPECT_NE(closure.find("verisub_rewriter"), std::string::npos) << closure;
  for (const char* banned : {"z3", "Z3", "tbb", "TBB", "verisub_gen", "verisub_verify"})
    EXPECT_EQ(closure.find(banned), std::string::npos) << banned << " in " << closure;
  CommandResult ldd = RunCommand(std::string("ldd ") + VERISUB_OPT_PATH);
  ASSERT_EQ(ldd.code, 0) << ldd.output;
  EXPECT_EQ(ldd.output.find("libz3"), std::string::npos) << ldd.output;
  EXPECT_EQ(ldd.output.find("libtbb"), std::string::npos) << ldd.output;
  CommandResult nm = RunCommand(std::string("nm -C ") + VERISUB_OPT_PATH +
                                " | grep -c 'verisub::gen::\\|verisub::verify::\\|z3::' || true");
  EXPECT_EQ(nm.output, "0\n") << nm.output;
}

}  // namespace
}  // namespace verisub::rewriter

// ---- Issue 17: files, silent acceptance, unproved rules, checks that could not run ----

namespace verisub::rewriter {
namespace {

TEST_F(VerisubOptTest, UnprovedRulesItAppliesAreNamedLoudly) {
  CommandResult r =
      RunCommand(Opt("--cost analytic --rules data/rules/handwritten.txt --allow-unproved"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("WARNING: applied an UNPROVED rule (unchecked) 1 time(s): "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("is NOT known to compute what the input does"), std::string::npos);
  // Twin: the shipped (proved) rules give no warning.
  CommandResult shipped = RunCommand(Opt(""));
  ASSERT_EQ(shipped.code, 0) << shipped.output;
  EXPECT_EQ(shipped.output.find("WARNING"), std::string::npos) << shipped.output;
}

TEST_F(VerisubOptTest, EmptyRulesFileOrDirectoryIsAnErrorNotZeroRules) {
  std::ofstream(dir_ / "empty.txt") << "  \n";
  CommandResult empty = RunCommand(Opt("--rules " + (dir_ / "empty.txt").string()));
  EXPECT_EQ(empty.code, 1) << empty.output;
  EXPECT_NE(empty.output.find("is empty"), std::string::npos) << empty.output;
  std::ofstream(dir_ / "comments.txt") << "# nothing but a comment\n";
  CommandResult comments =
      RunCommand(Opt("--rules " + (dir_ / "comments.txt").string() + " --allow-unproved"));
  EXPECT_EQ(comments.code, 1) << comments.output;
  EXPECT_NE(comments.output.find("has no rules"), std::string::npos) << comments.output;
  CommandResult dir = RunCommand(Opt("--rules " + dir_.string()));
  EXPECT_EQ(dir.code, 1) << dir.output;
  EXPECT_NE(dir.output.find("is a directory"), std::string::npos) << dir.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
}

TEST_F(VerisubOptTest, TwoRunsWritingTheSameOutputNeverCorruptIt) {
  // Was: a fixed temporary name OUT.tmp-verisub, corrupt output in 4 of 24 trials.
  for (int trial = 0; trial < 4; ++trial) {
    (void)RunCommand("(" + Opt("") + " > /dev/null & " + Opt("") + " > /dev/null & wait)");
    auto out = runtime::ImportOnnxFile((dir_ / "out.onnx").string());
    ASSERT_TRUE(out.ok()) << "trial " << trial << ": " << out.status().message();
  }
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(VerisubOptTest, OutputThroughASymbolicLinkKeepsTheLinkAndMode600) {
  fs::create_directories(dir_ / "real");
  std::ofstream(dir_ / "real" / "model.onnx") << "old";
  fs::permissions(dir_ / "real" / "model.onnx", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink("real/model.onnx", dir_ / "link.onnx");
  CommandResult r = RunCommand(std::string(VERISUB_OPT_PATH) + " " + (dir_ / "in.onnx").string() +
                               " -o " + (dir_ / "link.onnx").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.onnx"));
  EXPECT_EQ(fs::status(dir_ / "real" / "model.onnx").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_TRUE(runtime::ImportOnnxFile((dir_ / "real" / "model.onnx").string()).ok());
}

TEST_F(VerisubOptTest, DevNullStaysACharacterDevice) {
  CommandResult r = RunCommand(std::string(VERISUB_OPT_PATH) + " " + (dir_ / "in.onnx").string() +
                               " -o /dev/null --report /dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(VerisubOptTest, MissingOutputDirectoryIsRefusedBeforeTheWork) {
  CommandResult r = RunCommand(std::string(VERISUB_OPT_PATH) + " " + (dir_ / "in.onnx").string() +
                               " -o " + (dir_ / "no" / "such" / "out.onnx").string());
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("no directory"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("cost before"), std::string::npos) << "refused only after the search";
  EXPECT_FALSE(fs::exists(dir_ / "no"));
}

TEST_F(VerisubOptTest, VerifyThatCouldNotRunIsNotReportedAsDifferentOutputs) {
  // 600M elements: imported (2.4 GB as float, under the import budget), but the reference
  // executor's doubles (4.8 GB) are over its budget: the comparison cannot run.
  GraphBuilder b;
  b.Output(b.Op("relu", {b.Input("x", {1, 600, 1000, 1000})}));
  ASSERT_TRUE(runtime::ExportOnnxFile(b.Finish(), (dir_ / "big.onnx").string()).ok());
  CommandResult r = RunCommand(std::string(VERISUB_OPT_PATH) + " " + (dir_ / "big.onnx").string() +
                               " -o " + (dir_ / "out.onnx").string() + " --verify-outputs");
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find("CANNOT VERIFY"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("VERIFY FAILED"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
}

}  // namespace
}  // namespace verisub::rewriter
