// ONNX's own backend node tests (Debian's libonnx-testdata) through the oneDNN backend: every
// test that imports with static shapes and tensors of float, integer or boolean type, and that
// the reference executor runs, is prepared on oneDNN (its kernels, its fallbacks to the reference
// kernels, its layouts) and must agree with the reference executor, which passes those tests
// itself (BackendNodeTest). Each small model exercises one operator with the attribute corner
// cases ONNX chose, which the backend's kernels must honour or refuse. It found
// HardSigmoid(alpha 0.5, beta 0.6) on a 1-D input wrong by up to 1 (oneDNN's reference eltwise
// with a post-op).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "runtime/tensor_proto.h"
#include "tests/runtime/dnnl/dnnl_test_util.h"

namespace verisub::runtime {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

std::vector<HostTensor> ReadInputs(const fs::path& set, int count, bool* ok) {
  std::vector<HostTensor> out;
  for (int i = 0; i < count; ++i) {
    std::ifstream in(set / ("input_" + std::to_string(i) + ".pb"), std::ios::binary);
    onnx::TensorProto proto;
    auto t = in && proto.ParseFromIstream(&in) ? FromTensorProto(proto)
                                               : StatusOr<HostTensor>(NotFound("input"));
    if (!t.ok()) {
      *ok = false;
      return out;
    }
    out.push_back(std::move(*t));
  }
  return out;
}

bool IsSupported(int32_t t) {
  return t == kFloat || t == kDouble || t == kBool || IsIntegerType(t);
}

TEST(DnnlNodeTests, AgreeWithTheReferenceExecutor) {
  if (!fs::exists(kNodeTests)) GTEST_SKIP() << kNodeTests << " not installed";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kNodeTests)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int run = 0, agreed = 0, layouts_run = 0;
  std::string failures;
  for (const fs::path& dir : dirs) {
    auto g = ImportOnnxFile((dir / "model.onnx").string());
    if (!g.ok()) continue;  // shapes fed at run time, types or operators without a kernel
    bool typed = true;      // float, integer and boolean tensors (no strings, no float16)
    for (int v : g->inputs()) typed = typed && IsSupported(g->value(v).elem_type);
    for (int v : g->outputs()) typed = typed && IsSupported(g->value(v).elem_type);
    if (!typed) continue;
    bool ok = true;
    std::vector<HostTensor> inputs =
        ReadInputs(dir / "test_data_set_0", static_cast<int>(g->inputs().size()), &ok);
    if (!ok || !Execute(*g, inputs).ok()) continue;  // the reference refuses it too
    ++run;
    testing::Comparison c = testing::CompareWithReference(*g, inputs, nullptr, 1);
    std::string why = c.error.empty()
                          ? (c.max_rel <= 1e-4 ? "" : "max rel " + std::to_string(c.max_rel))
                          : c.error;
    // The same with every 4-D activation stored channels-last and in 16-channel blocks, as the
    // layout DP may store them.
    bool four_d = false;
    for (int v = 0; v < g->num_values(); ++v)
      four_d = four_d || (!g->value(v).constant && g->value(v).dims.size() == 4);
    for (specs::Layout layout : {specs::Layout::kNHWC, specs::Layout::kNCHW16c}) {
      if (!four_d || !why.empty()) break;
      PrepareOptions options;
      options.num_threads = 1;
      options.layouts.assign(g->num_values(), specs::Layout::kPlain);
      for (int v = 0; v < g->num_values(); ++v)
        if (!g->value(v).constant && g->value(v).dims.size() == 4) options.layouts[v] = layout;
      auto m = MakeDnnlBackend()->Prepare(*g, options);
      auto out = m.ok() ? (*m)->Run(inputs) : StatusOr<std::vector<HostTensor>>(m.status());
      auto want = Execute(*g, inputs);
      testing::Comparison l = out.ok() ? testing::Compare(*out, *want)
                                       : testing::Comparison{0, 0, 0, 0, out.status().message()};
      if (!l.error.empty() || l.max_rel > 1e-4)
        why = std::string(specs::LayoutName(layout)) + ": " +
              (l.error.empty() ? "max rel " + std::to_string(l.max_rel) : l.error);
      ++layouts_run;
    }
    if (why.empty()) {
      ++agreed;
    } else {
      failures += "  " + dir.filename().string() + ": " + why + "\n";
    }
  }
  std::printf(
      "onnx node tests on oneDNN: %d run (%d also in two layouts), %d agree with the reference "
      "executor\n%s",
      run, layouts_run / 2, agreed, failures.c_str());
  EXPECT_GT(run, 300);
  EXPECT_EQ(agreed, run) << failures;
}

}  // namespace
}  // namespace verisub::runtime
