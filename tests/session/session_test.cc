// Session: load, optional optimization, prepare, run; its outputs equal the reference
// executor's; errors name the file or the backend. verisub-run prints the line the benchmark
// harness parses and checks its outputs.
#include "session/session.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "rewriter/verify_outputs.h"
#include "runtime/cost/cost_table.h"
#ifdef VERISUB_HAVE_DNNL
#include "runtime/dnnl/dnnl_backend.h"
#endif
#include "base/file_io.h"
#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/graph_hash.h"
#include "runtime/graph_text.h"
#include "runtime/onnx_import.h"
#include "runtime/tensor_proto.h"
#include "session/shape_adaptive.h"
#include "session/tensor_files.h"
#include "tests/runtime/test_models.h"
#ifdef VERISUB_HAVE_HALIDE
#include "fusion/generator.h"
#endif
#include "tests/rewriter/run_command.h"

namespace verisub {
namespace {

using runtime::HostTensor;

std::vector<HostTensor> Inputs(const runtime::Graph& g) {
  std::vector<HostTensor> in;
  for (int v : g.inputs()) {
    const runtime::Value& val = g.value(v);
    std::vector<double> x(runtime::CountElements(val.dims));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i));
    in.push_back(HostTensor::FromDoubles(val.elem_type, val.dims, x));
  }
  return in;
}

double MaxRelDiff(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].dims != b[k].dims) return INFINITY;
    auto x = a[k].ToDoubles(), y = b[k].ToDoubles();
    for (size_t i = 0; i < x.size(); ++i)
      m = std::max(m, std::abs(x[i] - y[i]) / std::max(std::abs(y[i]), 1.0));
  }
  return m;
}

TEST(SessionTest, RunsLikeTheReferenceExecutor) {
  for (const char* model : {"data/models/small_resnet.onnx", "data/models/tiny_transformer.onnx"}) {
    auto s = Session::Create(model, SessionOptions());
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_FALSE((*s)->optimize_report());
    auto in = Inputs((*s)->graph());
    auto out = (*s)->Run(in);
    ASSERT_TRUE(out.ok()) << out.status().message();
    auto ref = runtime::Execute((*s)->graph(), in);
    ASSERT_TRUE(ref.ok());
    EXPECT_LT(MaxRelDiff(*out, *ref), 1e-4) << model;
    // Many runs give the same outputs (buffers are reused, not stale).
    auto again = (*s)->Run(in);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(MaxRelDiff(*again, *out), 0.0);
  }
}

#ifdef VERISUB_HAVE_HALIDE
// fusion "auto": every generated kernel is timed in its place against the library's steps for
// the same nodes, and only those faster are kept (then the whole model against the library's);
// whichever runs computes what the reference executor does, and the counts agree.
TEST(SessionTest, FusionAutoKeepsTheGeneratedKernelsThatTimedFaster) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("verisub_fusion_auto_" + std::to_string(getpid()));
  fusion::KernelCacheOptions cache;
  cache.dir = dir.string();
  SessionOptions options;
  options.fusion = "auto";
  options.decisions = "none";  // every choice timed
  options.kernel_generator = std::make_shared<fusion::SubopGenerator>(cache);
  // Two chains of element-wise operators no library kernel fuses, around a matmul.
  auto g = runtime::ParseGraphText(
      "input x [64,256]\nweight w [256,256]\n"
      "let z = (matmul (tanh (ewmul (sigmoid (ewadd x x)) x)) w)\n"
      "output (ewmul (sigmoid z) (tanh z))\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto s = Session::Create(*g, options);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::optional<FusionTiming>& t = (*s)->fusion_timing();
  ASSERT_TRUE(t.has_value()) << "no generated kernel was prepared";
  EXPECT_GT(t->clusters, 0);
  EXPECT_LE(t->kept_clusters, t->clusters);
  EXPECT_GT(t->generated_ms, 0);
  EXPECT_GT(t->library_ms, 0);
  const int running = (*s)->stats().generated_kernels;
  EXPECT_EQ(running, t->generated_kernels);
  if (t->kept_library) {
    EXPECT_EQ(running, 0);
  } else {
    EXPECT_EQ(running, t->kept_clusters);
    EXPECT_GT(t->selected_ms, 0);
    EXPECT_GE(t->selected_library_ms, (1 - kTimedChoiceMargin) * t->selected_ms);
  }
  if (t->kept_clusters == 0) {
    EXPECT_TRUE(t->kept_library);
  }
  auto in = Inputs((*s)->graph());
  auto out = (*s)->Run(in);
  ASSERT_TRUE(out.ok()) << out.status().message();
  auto ref = runtime::Execute((*s)->graph(), in);
  ASSERT_TRUE(ref.ok());
  EXPECT_LT(MaxRelDiff(*out, *ref), 1e-4);
  EXPECT_FALSE(t->from_cache);  // options.decisions is "none" below only

  // The choice is remembered: a second session of the graph decides without timing, the same
  // way; a damaged decision file is no decision (timed again, and rewritten).
  options.decisions = (dir / "decisions").string();
  auto first = Session::Create(*g, options);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE((*first)->fusion_timing().has_value());
  EXPECT_FALSE((*first)->fusion_timing()->from_cache);
  std::vector<std::filesystem::path> files;  // the layout policy's choice is remembered too
  for (const auto& e : std::filesystem::directory_iterator(options.decisions))
    if (e.path().extension() == ".fusion") files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  auto second = Session::Create(*g, options);
  ASSERT_TRUE(second.ok()) << second.status().message();
  const std::optional<FusionTiming>& again = (*second)->fusion_timing();
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->kept_library, (*first)->fusion_timing()->kept_library);
  EXPECT_EQ((*second)->stats().generated_kernels, (*first)->stats().generated_kernels);
  EXPECT_EQ(again->generated_ms, 0);
  auto out2 = (*second)->Run(in);
  ASSERT_TRUE(out2.ok()) << out2.status().message();
  EXPECT_LT(MaxRelDiff(*out2, *ref), 1e-4);
  std::ofstream(files[0]) << "verisub-decision fusion 1\nlibrary\nall\n";
  auto third = Session::Create(*g, options);
  ASSERT_TRUE(third.ok()) << third.status().message();
  EXPECT_FALSE((*third)->fusion_timing()->from_cache);
  std::ifstream rewritten(files[0]);
  std::string header;
  std::getline(rewritten, header);
  EXPECT_EQ(header, "verisub-decision fusion 1");
  std::filesystem::remove_all(dir);
}
#endif

// The layout policies (the backend's own, the layout DP's assignment, every value plain) give
// the same outputs; an unknown policy is an error.
TEST(SessionTest, LayoutPoliciesComputeTheSame) {
  for (const char* model :
       {"data/models/small_resnet.onnx", "data/models/squeezenet1_1.onnx",
        "data/models/mobilenet_v2_w025.onnx", "data/models/tiny_transformer.onnx"}) {
    for (std::string layout : {"auto", "backend", "dp", "dp-measured", "joint", "plain"}) {
      SessionOptions options;
      options.layout = layout == "dp-measured" ? "dp" : layout;
      // The DP on analytic costs, or on kernels and reorders timed here (kept in memory).
      options.cost.cost = layout == "dp-measured" ? "cpu-measured" : "analytic";
      options.cost.cache_dir = "none";
      // One thread: timings of two threads on two shared cores swing 10x when another process
      // takes a core (a parallel ctest), and the DP would follow the noise.
      options.num_threads = 1;
      auto s = Session::Create(model, options);
      ASSERT_TRUE(s.ok()) << model << " " << layout << ": " << s.status().message();
      // The session's graph carries the layouts it runs with: on measured costs the DP lays
      // the convolutions out in some image layout (channel-blocked on AVX2, often channels-last
      // with AVX-512's brgemm kernels), never all plain.
      int laid_out = 0;
      for (int v = 0; v < (*s)->graph().num_values(); ++v)
        laid_out += (*s)->graph().value(v).layout != specs::Layout::kPlain;
      if (layout == "backend" || layout == "plain") {
        EXPECT_EQ(laid_out, 0) << model;
      }
      if (layout == "dp-measured" && std::string(model) == "data/models/small_resnet.onnx") {
        EXPECT_GT(laid_out, 0);
      }
      auto in = Inputs((*s)->graph());
      auto out = (*s)->Run(in);
      ASSERT_TRUE(out.ok()) << out.status().message();
      auto ref = runtime::Execute((*s)->graph(), in);
      ASSERT_TRUE(ref.ok());
      EXPECT_LT(MaxRelDiff(*out, *ref), 1e-4) << model << " " << layout;
    }
  }
  SessionOptions bad;
  bad.layout = "diagonal";
  auto s = Session::Create("data/models/small_resnet.onnx", bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("diagonal"), std::string::npos);
}

// The joint setting keeps the cheaper, in the layout DP's prices, of the joint search's graph
// and the rewrites-only graph, so it is never worse than rewrites then layouts; the
// rewrites-only price it compares with is that of the sequential session itself.
TEST(SessionTest, JointIsNeverWorseThanRewritesThenLayouts) {
  for (const char* model : {"data/models/small_resnet.onnx", "data/models/squeezenet1_1.onnx",
                            "data/models/tiny_transformer.onnx"}) {
    SessionOptions options;
    options.cost.cost = "analytic";  // deterministic prices: the two sessions agree
    options.cost.cache_dir = "none";
    options.optimize = true;
    options.time_rewrites = false;  // the searches' graphs run, whatever a stopwatch says
    options.layout = "dp";
    auto sequential = Session::Create(model, options);
    ASSERT_TRUE(sequential.ok()) << model << ": " << sequential.status().message();
    options.layout = "joint";
    auto joint = Session::Create(model, options);
    ASSERT_TRUE(joint.ok()) << model << ": " << joint.status().message();
    EXPECT_FALSE((*sequential)->joint_choice());
    const auto& choice = (*joint)->joint_choice();
    ASSERT_TRUE(choice);
    ASSERT_TRUE((*sequential)->layout_report() && (*joint)->layout_report());
    const double seq = (*sequential)->layout_report()->cost_us;
    EXPECT_NEAR(choice->sequential_cost_us, seq, 1e-6 * seq) << model;
    EXPECT_EQ(choice->kept_sequential, choice->sequential_cost_us < choice->joint_cost_us);
    const double kept = (*joint)->layout_report()->cost_us;
    EXPECT_NEAR(kept, std::min(choice->joint_cost_us, choice->sequential_cost_us), 1e-6 * kept);
    EXPECT_LE(kept, seq * (1 + 1e-9)) << model;
    auto in = Inputs((*joint)->graph());
    auto out = (*joint)->Run(in);
    auto ref = runtime::Execute((*joint)->graph(), in);
    ASSERT_TRUE(out.ok() && ref.ok());
    EXPECT_LT(MaxRelDiff(*out, *ref), 1e-4) << model;
  }
}

// Runs `s` and the reference executor on the original model's graph, same inputs.
void RunWithReference(Session& s, const char* model, std::vector<HostTensor>* out,
                      std::vector<HostTensor>* ref) {
  auto original = runtime::ImportOnnxFile(model);
  ASSERT_TRUE(original.ok()) << original.status().message();
  auto in = Inputs(*original);
  auto o = s.Run(in);
  auto r = runtime::Execute(*original, in);
  ASSERT_TRUE(o.ok() && r.ok());
  *out = std::move(*o);
  *ref = std::move(*r);
}

// Precision as a layout, end to end: the DP stores values in bfloat16 (the synthetic table over
// the analytic costs makes it worth it), the oneDNN backend computes in it, and the outputs stay
// within the budget of float32. Where oneDNN has no native bf16 kernels the session says so.
TEST(SessionTest, Bfloat16PrecisionStaysWithinItsBudget) {
  SessionOptions options;
  options.layout = "dp";
  options.precision = "bf16";
  options.cost.cost = "analytic";
  options.cost.cache_dir = "none";
  options.decisions = "none";  // both precisions timed
  auto s = Session::Create("data/models/small_resnet.onnx", options);
#ifdef VERISUB_HAVE_DNNL
  const bool has_bf16 = runtime::dnnl_backend::HasBf16Kernels();
#else
  const bool has_bf16 = false;
#endif
  if (!has_bf16) {
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("bfloat16"), std::string::npos) << s.status().message();
    GTEST_SKIP() << s.status().message();
  }
  ASSERT_TRUE(s.ok()) << s.status().message();
  const auto& p = (*s)->precision_report();
  ASSERT_TRUE(p);
  EXPECT_GT(p->reduced_values, 0);
  EXPECT_LE(p->error, options.precision_budget);
  EXPECT_LT(p->cost_us, p->float32_cost_us);
  std::vector<HostTensor> out, ref;
  RunWithReference(**s, "data/models/small_resnet.onnx", &out, &ref);
  const double error = rewriter::RelativeOutputError(out, ref);
  // Both assignments were timed on the whole model; the faster runs.
  EXPECT_GT(p->measured_bf16_ms, 0);
  EXPECT_GT(p->measured_f32_ms, 0);
  EXPECT_EQ(p->kept_float32_by_timing, p->measured_f32_ms < p->measured_bf16_ms);
  if (p->kept_float32_by_timing) {
    EXPECT_LT(MaxRelDiff(out, ref), 1e-4) << "float32 kept, yet the outputs moved";
  } else {
    EXPECT_GT(error, 0) << "nothing ran in bfloat16";
  }
  // The budget holds on the backend's own outputs (on the budget's inputs; these are others).
  EXPECT_GE(p->backend_error, 0);
  if (!p->kept_float32_by_check) {
    EXPECT_LE(p->backend_error, options.precision_budget);
  }
  EXPECT_LT(error, 2 * options.precision_budget);

  // Tighter budgets: each either holds on the backend (after at most one tightened solve) or
  // leaves float32 everywhere.
  for (double budget : {3e-3, 1e-3}) {
    SessionOptions tight = options;
    tight.precision_budget = budget;
    auto t = Session::Create("data/models/small_resnet.onnx", tight);
    ASSERT_TRUE(t.ok()) << t.status().message();
    const auto& q = (*t)->precision_report();
    ASSERT_TRUE(q);
    if (q->reduced_values == 0) continue;
    std::vector<HostTensor> got, want;
    RunWithReference(**t, "data/models/small_resnet.onnx", &got, &want);
    if (q->kept_float32_by_check || q->kept_float32_by_timing) {
      EXPECT_LT(MaxRelDiff(got, want), 1e-4) << budget;
    } else {
      EXPECT_LE(q->backend_error, budget);
    }
  }

  // The timed choice is remembered: a second session decides without timing, the same way.
  if (!p->kept_float32_by_check) {
    const std::filesystem::path decisions =
        std::filesystem::temp_directory_path() /
        ("verisub_precision_choice_" + std::to_string(getpid()));
    std::filesystem::remove_all(decisions);
    SessionOptions remembering = options;
    remembering.decisions = decisions.string();
    auto first = Session::Create("data/models/small_resnet.onnx", remembering);
    auto second = Session::Create("data/models/small_resnet.onnx", remembering);
    ASSERT_TRUE(first.ok() && second.ok());
    const auto& p1 = (*first)->precision_report();
    const auto& p2 = (*second)->precision_report();
    ASSERT_TRUE(p1 && p2);
    EXPECT_FALSE(p1->timing_from_cache);
    EXPECT_GT(p1->measured_bf16_ms, 0);
    EXPECT_TRUE(p2->timing_from_cache);
    EXPECT_EQ(p2->measured_bf16_ms, 0);
    EXPECT_EQ(p2->kept_float32_by_timing, p1->kept_float32_by_timing);
    EXPECT_EQ((*second)->storage_types(), (*first)->storage_types());
    std::filesystem::remove_all(decisions);
  }

  // A budget of zero keeps float32 everywhere: the outputs are float32's.
  options.precision_budget = 0;
  auto exact = Session::Create("data/models/small_resnet.onnx", options);
  ASSERT_TRUE(exact.ok()) << exact.status().message();
  EXPECT_EQ((*exact)->precision_report()->reduced_values, 0);
  std::vector<HostTensor> same;
  RunWithReference(**exact, "data/models/small_resnet.onnx", &same, &ref);
  EXPECT_LT(MaxRelDiff(same, ref), 1e-4);

  options.layout = "backend";
  auto wrong = Session::Create("data/models/small_resnet.onnx", options);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("layout dp or joint"), std::string::npos);
  options.layout = "dp";
  options.precision = "fp8";
  auto unknown = Session::Create("data/models/small_resnet.onnx", options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'fp8'"), std::string::npos);
}

// With layout "auto", bfloat16 storage in the DP's layouts is also timed against the backend's own
// float32 layouts, as float32 in the DP's layouts is: the DP lays out only what it prices, and
// models of operators it keeps plain (dilated and 3-D convolutions) ran 3-4x slower in its
// layouts, bf16 or not (DeepLabV3, R(2+1)D). Whichever ran, the choice is consistent: the
// backend's layouts mean float32 storage, and outputs as float32's.
TEST(SessionTest, Bfloat16InAutoLayoutsIsTimedAgainstTheBackendsOwnFloat32) {
#ifdef VERISUB_HAVE_DNNL
  if (!runtime::dnnl_backend::HasBf16Kernels()) GTEST_SKIP() << "no bfloat16 kernels on this CPU";
#else
  GTEST_SKIP() << "built without oneDNN";
#endif
  SessionOptions options;
  options.layout = "auto";
  options.precision = "bf16";
  options.cost.cost = "analytic";
  options.cost.cache_dir = "none";
  options.decisions = "none";
  auto s = Session::Create("data/models/small_resnet.onnx", options);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const auto& p = (*s)->precision_report();
  ASSERT_TRUE(p);
  ASSERT_GT(p->reduced_values, 0);
  // Twin of the DP-only test: here the layouts are timed whatever the precision timing kept.
  ASSERT_TRUE((*s)->layout_timing().has_value());
  const auto& t = *(*s)->layout_timing();
  EXPECT_GT(t.dp_ms, 0);
  EXPECT_GT(t.backend_ms, 0);
  const auto& types = (*s)->storage_types();
  const bool reduced_storage =
      std::any_of(types.begin(), types.end(), [](int32_t x) { return x != 0; });
  std::vector<HostTensor> out, ref;
  RunWithReference(**s, "data/models/small_resnet.onnx", &out, &ref);
  if (t.kept_backend) {
    EXPECT_FALSE(reduced_storage);
    EXPECT_TRUE(p->kept_float32_by_timing);
    EXPECT_LT(MaxRelDiff(out, ref), 1e-4) << "the backend's float32 layouts, yet the outputs moved";
  } else {
    EXPECT_EQ(reduced_storage, !p->kept_float32_by_timing);
  }
}

TEST(SessionTest, OptimizesWithTheShippedRules) {
  SessionOptions opts;
  opts.optimize = true;
  opts.num_threads = 1;
  opts.cost.cache_dir = "none";  // measured on this CPU, kept in memory only
  auto s = Session::Create("data/models/small_resnet.onnx", opts);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE((*s)->optimize_report());
  EXPECT_EQ((*s)->optimize_report()->cost_model, "cpu-measured:onednn:t1");
  EXPECT_NE((*s)->cost_summary().find(" measured in "), std::string::npos) << (*s)->cost_summary();
  std::vector<HostTensor> out, ref;
  RunWithReference(**s, "data/models/small_resnet.onnx", &out, &ref);
  EXPECT_LT(MaxRelDiff(out, ref), 1e-4);
}

// A rewritten model is timed against the original at prepare and the rewrite runs only when it is
// clearly faster: the timing is reported, the graph that runs is the one it names, and its
// outputs are the model's. Without time_rewrites the rewritten graph runs and nothing is timed.
TEST(SessionTest, KeepsTheFasterOfTheRewrittenAndTheOriginalGraph) {
  const char* model = "data/models/squeezenet1_1.onnx";
  SessionOptions opts;
  opts.optimize = true;
  opts.num_threads = 1;
  opts.cost.cost = "analytic";  // the search rewrites (concat/relu interchanges) deterministically
  opts.cost.cache_dir = "none";
  const std::filesystem::path decisions = std::filesystem::temp_directory_path() /
                                          ("verisub_rewrite_choice_" + std::to_string(getpid()));
  std::filesystem::remove_all(decisions);
  opts.decisions = decisions.string();
  auto untimed_opts = opts;
  untimed_opts.time_rewrites = false;
  auto untimed = Session::Create(model, untimed_opts);
  ASSERT_TRUE(untimed.ok()) << untimed.status().message();
  ASSERT_GT((*untimed)->optimize_report()->search.rewrite_steps, 0);
  EXPECT_FALSE((*untimed)->rewrite_timing());
  auto s = Session::Create(model, opts);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const auto& t = (*s)->rewrite_timing();
  ASSERT_TRUE(t);
  EXPECT_GT(t->optimized_ms, 0);
  EXPECT_GT(t->original_ms, 0);
  // The rewrite is kept only when clearly faster: a tie keeps the model as imported.
  EXPECT_EQ(t->kept_original, t->optimized_ms >= (1 - kTimedChoiceMargin) * t->original_ms);
  const runtime::Graph& rewritten = (*untimed)->graph();
  EXPECT_EQ((*s)->graph().num_nodes() == rewritten.num_nodes(), !t->kept_original);
  EXPECT_FALSE(t->from_cache);
  std::vector<HostTensor> out, ref;
  RunWithReference(**s, model, &out, &ref);
  EXPECT_LT(MaxRelDiff(out, ref), 1e-4);
  // The original's layout policy was chosen as a session without `optimize` chooses it, and
  // remembered for it: such a session times nothing.
  SessionOptions plain_opts = opts;
  plain_opts.optimize = false;
  auto plain = Session::Create(model, plain_opts);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_TRUE((*plain)->layout_timing());
  EXPECT_TRUE((*plain)->layout_timing()->from_cache);
  // The choice is remembered: a second session decides without timing, the same way.
  auto again = Session::Create(model, opts);
  ASSERT_TRUE(again.ok()) << again.status().message();
  const auto& t2 = (*again)->rewrite_timing();
  ASSERT_TRUE(t2);
  EXPECT_TRUE(t2->from_cache);
  EXPECT_EQ(t2->kept_original, t->kept_original);
  EXPECT_EQ(t2->optimized_ms, 0);
  EXPECT_EQ(runtime::StructuralHash((*again)->graph()), runtime::StructuralHash((*s)->graph()));
  std::vector<HostTensor> out2;
  RunWithReference(**again, model, &out2, &ref);
  EXPECT_LT(MaxRelDiff(out2, ref), 1e-4);
  std::filesystem::remove_all(decisions);
}

// Where no rule rewrites the model, an optimizing session runs the model as imported: the same
// graph as a session without `optimize`.
TEST(SessionTest, AModelNoRuleRewritesRunsAsImported) {
  const char* model = "data/models/squeezenet1_1.onnx";  // Conv then Relu: the passes fuse them
  const std::string rules =
      (std::filesystem::temp_directory_path() / "verisub_no_fit.txt").string();
  // A rule that cannot match a model without transposes.
  ASSERT_TRUE(base::WriteFileAtomically(rules,
                                        "(transpose[perm=[1,0]] (transpose[perm=[1,0]] "
                                        "?a)) => ?a\n")
                  .ok());
  SessionOptions opts;
  opts.num_threads = 1;
  opts.cost.cost = "analytic";
  opts.cost.cache_dir = "none";
  opts.layout = "dp";
  auto plain = Session::Create(model, opts);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  opts.optimize = true;
  opts.rules_path = rules;
  opts.allow_unproved_rules = true;
  auto optimized = Session::Create(model, opts);
  ASSERT_TRUE(optimized.ok()) << optimized.status().message();
  ASSERT_TRUE((*optimized)->optimize_report());
  EXPECT_EQ((*optimized)->optimize_report()->search.rewrite_steps, 0);
  EXPECT_EQ(runtime::StructuralHash((*optimized)->graph()),
            runtime::StructuralHash((*plain)->graph()));
  EXPECT_FALSE((*optimized)->rewrite_timing());
  // Untimed, the optimizer's graph runs: its form differs (activations fused into convolutions).
  opts.time_rewrites = false;
  auto untimed = Session::Create(model, opts);
  ASSERT_TRUE(untimed.ok()) << untimed.status().message();
  EXPECT_NE(runtime::StructuralHash((*untimed)->graph()),
            runtime::StructuralHash((*plain)->graph()));
  std::filesystem::remove(rules);
}

// Layout "auto" times the DP's layouts against the backend's own policy at prepare and runs the
// backend's only when clearly faster; naming "dp" runs the DP's layouts untimed.
TEST(SessionTest, AutoLayoutsKeepTheFasterPolicy) {
  const char* model = "data/models/small_resnet.onnx";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("verisub_layout_choice_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  SessionOptions opts;
  opts.num_threads = 1;
  opts.cost.cost = "analytic";
  opts.cost.cache_dir = "none";
  opts.decisions = (dir / "decisions").string();
  auto s = Session::Create(model, opts);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const auto& t = (*s)->layout_timing();
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->from_cache);
  EXPECT_GT(t->dp_ms, 0);
  EXPECT_GT(t->backend_ms, 0);
  EXPECT_EQ(t->kept_backend, t->backend_ms < (1 - kTimedChoiceMargin) * t->dp_ms);
  std::vector<HostTensor> out, ref;
  RunWithReference(**s, model, &out, &ref);
  EXPECT_LT(MaxRelDiff(out, ref), 1e-4);

  // Remembered: a second session of the model, and one that optimizes it when no rule rewrites
  // it (the same graph as prepared), decide without timing, the same way, and run one graph.
  const std::string rules = (dir / "no_fit.txt").string();
  ASSERT_TRUE(
      base::WriteFileAtomically(rules, "(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a)) => ?a\n")
          .ok());
  SessionOptions optimizing = opts;
  optimizing.optimize = true;
  optimizing.rules_path = rules;
  optimizing.allow_unproved_rules = true;
  for (const SessionOptions& o : {opts, optimizing}) {
    auto again = Session::Create(model, o);
    ASSERT_TRUE(again.ok()) << again.status().message();
    const auto& t2 = (*again)->layout_timing();
    ASSERT_TRUE(t2);
    EXPECT_TRUE(t2->from_cache) << "optimize " << o.optimize;
    EXPECT_EQ(t2->kept_backend, t->kept_backend);
    EXPECT_EQ(t2->dp_ms, 0);
    EXPECT_EQ(runtime::StructuralHash((*again)->graph()), runtime::StructuralHash((*s)->graph()));
    std::vector<HostTensor> out2;
    RunWithReference(**again, model, &out2, &ref);
    EXPECT_LT(MaxRelDiff(out2, ref), 1e-4);
  }
  // A damaged choice is no choice: timed again, and written anew.
  for (const auto& e : std::filesystem::directory_iterator(opts.decisions))
    std::ofstream(e.path()) << "verisub-decision layouts 1\nsideways\n";
  auto damaged = Session::Create(model, opts);
  ASSERT_TRUE(damaged.ok()) << damaged.status().message();
  ASSERT_TRUE((*damaged)->layout_timing());
  EXPECT_FALSE((*damaged)->layout_timing()->from_cache);
  auto last = Session::Create(model, opts);
  ASSERT_TRUE(last.ok()) << last.status().message();
  EXPECT_TRUE((*last)->layout_timing()->from_cache);

  opts.layout = "dp";
  auto dp = Session::Create(model, opts);
  ASSERT_TRUE(dp.ok()) << dp.status().message();
  EXPECT_FALSE((*dp)->layout_timing());
  std::filesystem::remove_all(dir);
}

TEST(SessionTest, ReferenceBackendAndErrors) {
  SessionOptions opts;
  opts.backend = "reference";
  auto s = Session::Create("data/models/small_resnet.onnx", opts);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->backend_name(), "reference");
  opts.backend = "tpu";
  auto bad = Session::Create("data/models/small_resnet.onnx", opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'tpu'"), std::string::npos);
  auto missing = Session::Create("data/models/no_such_model.onnx", SessionOptions());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no_such_model.onnx"), std::string::npos);
  auto wrong = Session::Create("data/models/small_resnet.onnx", SessionOptions());
  ASSERT_TRUE(wrong.ok());
  EXPECT_FALSE((*wrong)->Run({}).ok());
}

// Self-attention over a sequence of symbolic length: x [S, 16]; the scores of x Wq by x Wk
// (a matmul of two computed values over a transposed one), a softmax, their weighted sum of x, a
// bias and a scale; written to a file under the test's temporary folder.
std::string WriteSequenceAttentionModel() {
  runtime::testing::ModelBuilder b;
  b.Input("x", {-1, 16}).Output("y", {-1, 16});
  b.RandomWeight("wq", {16, 16}, 1).RandomWeight("wk", {16, 16}, 2).RandomWeight("bias", {16}, 3);
  b.Weight("scale", HostTensor::FromDoubles(runtime::kFloat, {}, {0.25}));
  b.Node("MatMul", {"x", "wq"}, {"q"});
  b.Node("MatMul", {"x", "wk"}, {"k"});
  runtime::testing::SetInts(b.Node("Transpose", {"k"}, {"kt"}), "perm", {1, 0});
  b.Node("MatMul", {"q", "kt"}, {"scores"});
  b.Node("Mul", {"scores", "scale"}, {"scaled"});
  runtime::testing::SetInt(b.Node("Softmax", {"scaled"}, {"p"}), "axis", -1);
  b.Node("MatMul", {"p", "x"}, {"o"});
  b.Node("Add", {"o", "bias"}, {"y"});
  const std::string path = ::testing::TempDir() + "verisub_sequence_attention.onnx";
  EXPECT_TRUE(base::WriteFileAtomically(path, b.Bytes()).ok());
  return path;
}

// SessionOptions::dynamic_shapes: a model whose input has a symbolic dimension is prepared once
// and runs at any length, like the reference executor at each; without it, that dimension is an
// error asking for --input-shape. bf16 keeps float32 there, saying why.
TEST(SessionTest, DynamicShapesRunAtAnyLengthOfOnePreparation) {
  const std::string path = WriteSequenceAttentionModel();
  SessionOptions opts;
  opts.num_threads = 1;
  opts.cost.cost = "analytic";
  auto fixed = Session::Create(path, opts);
  ASSERT_FALSE(fixed.ok());
  EXPECT_NE(fixed.status().message().find("--input-shape"), std::string::npos)
      << fixed.status().message();
  opts.dynamic_shapes = true;
  auto s = Session::Create(path, opts);
  ASSERT_TRUE(s.ok()) << s.status().message();
  runtime::ImportOptions import;
  import.require_static_shapes = false;
  auto g = runtime::ImportOnnxFile(path, import);
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (int64_t len : {7, 1, 40, 7}) {
    const std::vector<HostTensor> in = {runtime::testing::RandomTensor({len, 16}, 10 + len)};
    auto out = (*s)->Run(in);
    ASSERT_TRUE(out.ok()) << len << ": " << out.status().message();
    auto expected = runtime::Execute(*g, in);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{len, 16}));
    EXPECT_LT(MaxRelDiff(*out, *expected), 1e-5) << len;
  }
  auto wrong = (*s)->Run({runtime::testing::RandomTensor({7, 15}, 1)});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("expects shape"), std::string::npos)
      << wrong.status().message();
#ifdef VERISUB_HAVE_DNNL
  if (runtime::dnnl_backend::HasBf16Kernels()) {
    opts.precision = "bf16";
    auto bf16 = Session::Create(path, opts);
    ASSERT_TRUE(bf16.ok()) << bf16.status().message();
    ASSERT_TRUE((*bf16)->precision_report().has_value());
    EXPECT_NE((*bf16)->precision_report()->refused.find("symbolic"), std::string::npos);
    EXPECT_TRUE((*bf16)->Run({runtime::testing::RandomTensor({5, 16}, 5)}).ok());
  }
#endif
}

// ShapeAdaptiveSession: "auto" runs new lengths on the Session prepared with the length open and
// prepares one for a length seen three times; "dynamic" never does, "static" prepares per length;
// every run computes what the reference executor does. A model without open dimensions is one
// Session.
TEST(SessionTest, ShapeAdaptiveSessionsPreparePerShapeAsTheirModeSays) {
  const std::string path = WriteSequenceAttentionModel();
  auto declared = runtime::ReadDeclaredInterface(path, true);
  ASSERT_TRUE(declared.ok()) << declared.status().message();
  auto import = [&](const runtime::ImportOptions& o) { return runtime::ImportOnnxFile(path, o); };
  SessionOptions opts;
  opts.num_threads = 1;
  opts.cost.cost = "analytic";
  runtime::ImportOptions open;
  open.require_static_shapes = false;
  auto reference = runtime::ImportOnnxFile(path, open);
  ASSERT_TRUE(reference.ok());
  const std::vector<int64_t> lengths = {5, 9, 5, 5, 5, 9};
  struct Want {
    std::string mode;
    int prepared, dynamic_runs;
    bool last_dynamic;
  };
  for (const Want& want :
       {Want{"auto", 1, 4, true}, Want{"dynamic", 0, 6, true}, Want{"static", 2, 0, false}}) {
    auto s = ShapeAdaptiveSession::Create(import, *declared, opts, want.mode);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_TRUE((*s)->open_dimensions());
    for (int64_t len : lengths) {
      const std::vector<HostTensor> in = {runtime::testing::RandomTensor({len, 16}, 20 + len)};
      auto out = (*s)->Run(in);
      ASSERT_TRUE(out.ok()) << want.mode << ": " << out.status().message();
      auto expected = runtime::Execute(*reference, in);
      ASSERT_TRUE(expected.ok());
      EXPECT_LT(MaxRelDiff(*out, *expected), 1e-5) << want.mode << " " << len;
    }
    EXPECT_EQ((*s)->shapes_prepared(), want.prepared) << want.mode;
    EXPECT_EQ((*s)->dynamic_runs(), want.dynamic_runs) << want.mode;
    EXPECT_EQ((*s)->last_run_dynamic(), want.last_dynamic) << want.mode;
    EXPECT_FALSE((*s)->Run({runtime::testing::RandomTensor({5, 16, 1}, 1)}).ok()) << want.mode;
  }
  EXPECT_FALSE(ShapeAdaptiveSession::Create(import, *declared, opts, "sometimes").ok());
  opts.input_shapes["x"] = {6, 16};
  auto fixed = ShapeAdaptiveSession::Create(import, *declared, opts);
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_FALSE((*fixed)->open_dimensions());
  EXPECT_TRUE((*fixed)->Run({runtime::testing::RandomTensor({6, 16}, 2)}).ok());
  EXPECT_FALSE((*fixed)->Run({runtime::testing::RandomTensor({5, 16}, 2)}).ok());
  EXPECT_EQ((*fixed)->shapes_prepared(), 0);
}

#ifdef VERISUB_HAVE_DNNL
// A static Session prepared for a new shape of a model already prepared at another (the "auto"
// and "static" modes) prices its kernels without timing them: from the measured times of the
// same kernels at the first shape, scaled, so the layout DP lays the second shape out as it laid
// out the first. Priced by a bandwidth estimate blind to layouts, a batch of 2 of a convolutional
// model had run all in plain layouts: 2.5x slower than ResNet-50 prepared for it with timings.
TEST(SessionTest, ANewShapeIsLaidOutOnTheTimingsOfTheFirst) {
  runtime::testing::ModelBuilder b;
  b.Input("x", {-1, 16, 14, 14}).Output("y", {-1, 32, 14, 14});
  b.RandomWeight("w1", {32, 16, 3, 3}, 1).RandomWeight("w2", {32, 32, 3, 3}, 2);
  runtime::testing::SetInts(b.Node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"});
  runtime::testing::SetInts(b.Node("Conv", {"r1", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c2"}, {"y"});
  const std::string path = ::testing::TempDir() + "verisub_batch_conv.onnx";
  ASSERT_TRUE(base::WriteFileAtomically(path, b.Bytes()).ok());
  const std::string table = ::testing::TempDir() + "verisub_batch_conv_costs.txt";
  std::remove(table.c_str());
  auto declared = runtime::ReadDeclaredInterface(path, true);
  ASSERT_TRUE(declared.ok()) << declared.status().message();
  auto import = [&](const runtime::ImportOptions& o) { return runtime::ImportOnnxFile(path, o); };
  SessionOptions opts;
  opts.num_threads = 1;
  opts.layout = "dp";
  opts.decisions = "none";
  opts.cost.table_path = table;
  opts.cost.cache_dir = "none";
  opts.cost.use_shipped_tables = false;
  auto s = ShapeAdaptiveSession::Create(import, *declared, opts, "static");
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<std::vector<specs::Layout>> layouts;
  constexpr size_t npos = std::string::npos;
  for (int64_t batch : {1, 2}) {
    auto out = (*s)->Run({runtime::testing::RandomTensor({batch, 16, 14, 14}, 3)});
    ASSERT_TRUE(out.ok()) << out.status().message();
    const Session& session = *(*s)->current();
    layouts.push_back(runtime::ValueLayouts(session.graph()));
    const bool scaled = session.cost_summary().find("scaled from other shapes") != npos;
    EXPECT_EQ(scaled, batch == 2) << session.cost_summary();
  }
  EXPECT_EQ(layouts[0], layouts[1]);
  std::remove(table.c_str());
}
#endif

// verisub-run --dynamic-shapes: the model prepared with its length symbolic, run at the --input
// file's and checked against the reference; without a file that length has no size to run at.
TEST(VerisubRunTest, DynamicShapesRunAtTheInputFilesShapes) {
  const std::string path = WriteSequenceAttentionModel();
  const std::string input = ::testing::TempDir() + "verisub_sequence_attention.input.pb";
  onnx::TensorProto proto;
  runtime::ToTensorProto(runtime::testing::RandomTensor({23, 16}, 4), "x", &proto);
  ASSERT_TRUE(base::WriteFileAtomically(input, proto.SerializeAsString()).ok());
  const std::string run = std::string(VERISUB_RUN_PATH) + " " + path +
                          " --threads 1 --runs 2 --cost analytic --dynamic-shapes";
  auto r = rewriter::testing::RunCommand(run + " --input " + input + " --check");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("check:    ok"), std::string::npos) << r.output;
  r = rewriter::testing::RunCommand(run);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("input 'x' has symbolic dimensions"), std::string::npos) << r.output;
}

// 16-bit storage on the GPU only; the cuda backend says why it cannot run where there is no GPU
// (or no CUDA in the build), and runs like the reference backend where there is one.
TEST(SessionTest, CudaBackendAndItsPrecisions) {
  SessionOptions opts;
  opts.precision = "fp16";
  auto cpu = Session::Create("data/models/small_resnet.onnx", opts);
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.status().message().find("cuda"), std::string::npos) << cpu.status().message();
  opts.backend = "cuda";
  opts.precision = "f32";
  auto gpu = Session::Create("data/models/small_resnet.onnx", opts);
  if (!gpu.ok()) {
    const std::string m = gpu.status().message();
    EXPECT_TRUE(m.find("no CUDA device") != std::string::npos ||
                m.find("no CUDA backend") != std::string::npos)
        << m;
    return;
  }
  EXPECT_EQ((*gpu)->backend_name(), "cuda");
  std::vector<HostTensor> out, ref;
  RunWithReference(**gpu, "data/models/small_resnet.onnx", &out, &ref);
  EXPECT_LT(MaxRelDiff(out, ref), 1e-3);
}

using rewriter::testing::CommandResult;
using rewriter::testing::RunCommand;

// --profile-top 0 lists every step: as many step lines as the profile counts.
TEST(VerisubRunTest, ProfileListsEveryStepOnRequest) {
  auto r = RunCommand(std::string(VERISUB_RUN_PATH) +
                      " data/models/squeezenet1_1.onnx --runs 1 --warmup 0 --threads 1 "
                      "--profile 1 --profile-top 0");
  ASSERT_EQ(r.code, 0) << r.output;
  int steps = 0;
  ASSERT_EQ(
      std::sscanf(r.output.c_str() + r.output.find("profile:  "), "profile:  %d steps", &steps), 1)
      << r.output;
  const size_t list = r.output.find("every step (ms in run, ms alone):");
  ASSERT_NE(list, std::string::npos) << r.output;
  int lines = 0;
  for (size_t at = r.output.find('\n', list); at != std::string::npos;
       at = r.output.find('\n', at + 1)) {
    double in_run = 0, alone = 0;
    lines += std::sscanf(r.output.c_str() + at + 1, "%lf %lf", &in_run, &alone) == 2;
  }
  EXPECT_GT(steps, 20);
  EXPECT_EQ(lines, steps) << r.output;
}

TEST(VerisubRunTest, PrintsTimesAndTheHarnessLine) {
  auto r = RunCommand(std::string(VERISUB_RUN_PATH) +
                      " data/models/squeezenet1_1.onnx --runs 3 --warmup 1 --threads 1 --check "
                      "--profile 2 --input data/models/squeezenet1_1.input_0.pb");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("prepare:"), std::string::npos) << r.output;
  // The profile: time per kind of step (convolutions first in SqueezeNet), then the costliest.
  EXPECT_NE(r.output.find("profile:  "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n  conv2d "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("costliest steps (ms in run, ms alone):"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check:    ok"), std::string::npos) << r.output;
  std::string last = r.output.substr(r.output.rfind("verisub-run: "));
  double median = 0, min = 0;
  int runs = 0;
  ASSERT_EQ(std::sscanf(last.c_str(), "verisub-run: median_ms=%lf min_ms=%lf runs=%d", &median,
                        &min, &runs),
            3)
      << last;
  EXPECT_EQ(runs, 3);
  EXPECT_LE(min, median);
  EXPECT_EQ(last.back(), '\n');
  EXPECT_EQ(last.find('\n'), last.size() - 1);  // the last line
}

// --compare-unoptimized times the optimized session against one without --optimize in the same
// process, --runs paired rounds, and prints both medians and the paired ratio; without --optimize
// it is a usage error.
// The paired ratio cancels an order effect: here whichever model runs second in a round is
// 20% slower, so the ratios of single rounds swing between 0.83 and 1.2, and a median of them
// lands on either side of 1 by chance; a pair of rounds (A B, then B A) gives 1 exactly. A real
// difference of 10% shows through it.
TEST(SideBySideTest, PairsOfRoundsCancelWhatRunningSecondCosts) {
  for (double b_over_a : {1.0, 1.1}) {
    std::vector<double> a, b;
    for (int r = 0; r < 7; ++r) {
      const bool a_first = r % 2 == 0;
      const double drift = 1 + 0.05 * r;  // the machine slows down round by round
      a.push_back(10 * drift * (a_first ? 1.0 : 1.2));
      b.push_back(10 * b_over_a * drift * (a_first ? 1.2 : 1.0));
    }
    SideBySideTiming t = SummarizeSideBySide(a, b);
    EXPECT_EQ(t.rounds, 7);
    EXPECT_NEAR(t.ratio_median, b_over_a, 1e-9);
    EXPECT_NEAR(t.ratio_q1, b_over_a, 1e-9);
    EXPECT_NEAR(t.ratio_q3, b_over_a, 1e-9);
  }
  SideBySideTiming one = SummarizeSideBySide({10}, {12});
  EXPECT_NEAR(one.ratio_median, 1.2, 1e-9);
  EXPECT_EQ(SummarizeSideBySide({}, {}).rounds, 0);
}

// A close call gets more pairs of rounds, a clear difference does not: two "models" that spin for
// 2 ms each are too close to call and are timed until the settle budget; 2 ms against 4 ms stops
// at the minimum. (Durations stand in for models; what is asserted is the number of rounds.) The
// band is 20% and the minimum three pairs, so that a spin preempted on a loaded machine (ctest -j2
// on two cores) cannot make the tie look clear: with 4% and two pairs, one run in 800 did.
TEST(SideBySideTest, CloseCallsGetMoreRoundsUntilTheirBudget) {
  auto spin = [](double ms) {
    return [ms]() {
      const auto start = std::chrono::steady_clock::now();
      while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                 .count() < ms) {
      }
      return Status::Ok();
    };
  };
  const SideBySideOptions options{.min_rounds = 6,
                                  .budget_ms = 0,
                                  .max_rounds = 40,
                                  .warm_below_ms = 0,
                                  .settle_band = 0.2,
                                  .settle_budget_ms = 120};
  auto tie = TimeSideBySide(spin(2), spin(2), options);
  ASSERT_TRUE(tie.ok());
  EXPECT_GT(tie->rounds, 6);
  EXPECT_EQ(tie->rounds % 2, 0);  // whole pairs
  EXPECT_LE(tie->rounds, 40);
  auto clear = TimeSideBySide(spin(2), spin(4), options);
  ASSERT_TRUE(clear.ok());
  EXPECT_EQ(clear->rounds, 6);
  EXPECT_GT(clear->ratio_median, 1.5);
}

TEST(VerisubRunTest, ComparesOptimizedAndUnoptimizedSideBySide) {
  auto r = RunCommand(std::string(VERISUB_RUN_PATH) +
                      " data/models/squeezenet1_1.onnx --optimize --cost analytic --cost-cache none"
                      " --compare-unoptimized --runs 3 --warmup 0 --threads 1");
  ASSERT_EQ(r.code, 0) << r.output;
  const size_t at = r.output.find("compare:  --optimize ");
  ASSERT_NE(at, std::string::npos) << r.output;
  double opt_ms = 0, without_ms = 0, median = 0, q1 = 0, q3 = 0, speedup = 0;
  int rounds = 0, pairs = 0;
  ASSERT_EQ(std::sscanf(r.output.c_str() + at,
                        "compare:  --optimize %lf ms, without %lf ms (medians of %d warm runs "
                        "each, alternating); without / --optimize: median %lf (quartiles "
                        "%lf-%lf) over %d pairs of rounds speedup=%lf",
                        &opt_ms, &without_ms, &rounds, &median, &q1, &q3, &pairs, &speedup),
            8)
      << r.output.substr(at);
  // --runs 3 rounded up to whole pairs and at least 8 rounds, then more until 2 s of runs.
  EXPECT_GE(rounds, 8);
  EXPECT_LE(rounds, 200);
  EXPECT_EQ(pairs, rounds / 2);
  EXPECT_GT(opt_ms, 0);
  EXPECT_GT(without_ms, 0);
  EXPECT_LE(q1, median);
  EXPECT_LE(median, q3);
  EXPECT_NEAR(speedup, median, 1e-3);  // printed to 4 and 3 decimals
  // The copy without --optimize prepared first: the same comparison (it implies
  // --compare-unoptimized, and needs --optimize as that does).
  auto first = RunCommand(std::string(VERISUB_RUN_PATH) +
                          " data/models/squeezenet1_1.onnx --optimize --cost analytic --cost-cache"
                          " none --compare-unoptimized-first --runs 1 --warmup 0 --threads 1");
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("compare:  --optimize "), std::string::npos) << first.output;
  for (const char* flag : {"--compare-unoptimized", "--compare-unoptimized-first"}) {
    auto bad = RunCommand(std::string(VERISUB_RUN_PATH) + " data/models/squeezenet1_1.onnx " +
                          flag + " --runs 1");
    EXPECT_EQ(bad.code, 2) << bad.output;
    EXPECT_NE(bad.output.find("--compare-unoptimized needs --optimize"), std::string::npos)
        << bad.output;
  }
}

// --optimize times the kernels with the run's thread count and keeps them in the given table.
TEST(VerisubRunTest, OptimizesOnMeasuredCostsKeptInATable) {
  const std::string table = ::testing::TempDir() + "verisub_run_costs_t1.txt";
  std::remove(table.c_str());
  auto r = RunCommand(std::string(VERISUB_RUN_PATH) +
                      " data/models/squeezenet1_1.onnx --optimize --runs 2 --warmup 0 --threads 1 "
                      "--check --cost-table " +
                      table);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("costs:    cpu-measured:onednn:t1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check:    ok"), std::string::npos) << r.output;
  auto t = runtime::CostTable::Load(table);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->header().threads, 1);
  EXPECT_GT(t->size(), 0);
  std::remove(table.c_str());
}

TEST(VerisubRunTest, RejectsBadFlags) {
  auto r = RunCommand(std::string(VERISUB_RUN_PATH) + " data/models/squeezenet1_1.onnx --runs 0");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--runs"), std::string::npos);
  r = RunCommand(std::string(VERISUB_RUN_PATH) + " data/models/squeezenet1_1.onnx --bogus");
  EXPECT_EQ(r.code, 2);
  // A thread count is checked against the machine (it was taken up to 1,000,000).
  r = RunCommand(std::string(VERISUB_RUN_PATH) +
                 " data/models/squeezenet1_1.onnx --threads 100000");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--threads needs a thread count in [0, "), std::string::npos) << r.output;
  r = RunCommand(std::string(VERISUB_RUN_PATH) + " data/models/missing.onnx");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("missing.onnx"), std::string::npos);
}

}  // namespace
}  // namespace verisub

namespace verisub {
namespace {

// --input reads recorded tensors (matched by name, else in order) and refuses what is no tensor
// file; --output writes every output as NAME.pb, which matches PyTorch's recorded output.
TEST(VerisubRunTest, ReadsInputFilesAndWritesOutputs) {
  char tmpl[] = "/tmp/verisub_run_outputs_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string run = std::string(VERISUB_RUN_PATH) + " data/models/squeezenet1_1.onnx ";
  auto r = rewriter::testing::RunCommand(
      run + "--input data/models/squeezenet1_1.input_0.pb --runs 1 --warmup 0 --output " + dir);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("outputs:  1 written"), std::string::npos) << r.output;
  auto got = ReadTensorFile(dir + "/output.pb");
  auto want = ReadTensorFile("data/models/squeezenet1_1.output_0.pb");
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(got->name, "output");
  ASSERT_EQ(got->tensor.f32.size(), want->tensor.f32.size());
  double err = 0, scale = 0;
  for (size_t i = 0; i < got->tensor.f32.size(); ++i) {
    err = std::max(err, std::abs(double{got->tensor.f32[i]} - want->tensor.f32[i]));
    scale = std::max(scale, std::abs(double{want->tensor.f32[i]}));
  }
  EXPECT_LT(err, 1e-3 * scale);
  const std::string page = dir + "/run.html";
  r = rewriter::testing::RunCommand(run + "--runs 1 --warmup 0 --profile 1 --report-html " + page);
  ASSERT_EQ(r.code, 0) << r.output;
  auto html = base::ReadFile(page);
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("<svg"), std::string::npos);
  EXPECT_NE(html->find("Steps ("), std::string::npos);
  r = rewriter::testing::RunCommand(run + "--input /dev/zero --runs 1");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("/dev/zero"), std::string::npos) << r.output;
  r = rewriter::testing::RunCommand(run + "--runs 1 --output " + dir + "/missing");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(r.output.find("run:"), std::string::npos) << "refused before the run";
  std::filesystem::remove_all(dir);
}

// --serve keeps the prepared model for a bench: 'run [W]' lines on stdin, each answered with one
// timed run's line after W untimed ones, until the end of stdin; anything else is refused.
TEST(VerisubRunTest, ServesRunsUntilTheEndOfInput) {
  const std::string run = std::string(VERISUB_RUN_PATH) +
                          " data/models/squeezenet1_1.onnx --runs 1 --warmup 0 --threads 1 --serve";
  auto r = rewriter::testing::RunCommand("printf 'run\\nrun 2\\nrun 0\\n' | " + run);
  ASSERT_EQ(r.code, 0) << r.output;
  const size_t ready = r.output.find("serve: ready\n");
  ASSERT_NE(ready, std::string::npos) << r.output;
  int replies = 0;
  for (size_t at = r.output.find("serve: ms=", ready); at != std::string::npos;
       at = r.output.find("serve: ms=", at + 1)) {
    double ms = 0;
    EXPECT_EQ(std::sscanf(r.output.c_str() + at, "serve: ms=%lf", &ms), 1);
    EXPECT_GT(ms, 0);
    ++replies;
  }
  EXPECT_EQ(replies, 3) << r.output;
  EXPECT_LT(r.output.find("serve: ready"), r.output.find("verisub-run: median_ms="));
  r = rewriter::testing::RunCommand("printf 'walk\\n' | " + run);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("unknown command 'walk'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("serve: ms="), std::string::npos) << r.output;
}

// --check-against compares with outputs recorded earlier instead of running the reference: the
// reference backend's on the same synthetic inputs pass, PyTorch's on another input fail (exit 3),
// and a missing folder is refused before the work.
TEST(VerisubRunTest, ChecksAgainstRecordedOutputs) {
  char tmpl[] = "/tmp/verisub_run_expected_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string run = std::string(VERISUB_RUN_PATH) + " data/models/squeezenet1_1.onnx ";
  auto r = rewriter::testing::RunCommand(run + "--backend reference --runs 1 --warmup 0 --output " +
                                         dir);
  ASSERT_EQ(r.code, 0) << r.output;
  r = rewriter::testing::RunCommand(run + "--runs 1 --warmup 0 --threads 1 --check-against " + dir);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("check:    ok against the outputs in " + dir), std::string::npos)
      << r.output;
  std::filesystem::copy_file("data/models/squeezenet1_1.output_0.pb", dir + "/output.pb",
                             std::filesystem::copy_options::overwrite_existing);
  r = rewriter::testing::RunCommand(run + "--runs 1 --warmup 0 --threads 1 --check-against " + dir);
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("check:    FAILED against the outputs in"), std::string::npos)
      << r.output;
  r = rewriter::testing::RunCommand(run + "--runs 1 --check-against " + dir + "/missing");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(dir + "/missing: not a folder"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("run:"), std::string::npos) << "refused before the run";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace verisub
