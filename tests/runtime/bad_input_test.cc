// Bad input: every failure is an error naming the file (and the node where there is one), the
// CLI exits non-zero, and no output file is written.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

namespace fs = std::filesystem;
using testing::ModelBuilder;

void ExpectError(const StatusOr<Graph>& g, std::vector<std::string> fragments) {
  ASSERT_FALSE(g.ok());
  for (const auto& f : fragments)
    EXPECT_NE(g.status().message().find(f), std::string::npos)
        << "missing '" << f << "' in: " << g.status().message();
}

TEST(BadInputTest, MissingFile) {
  ExpectError(ImportOnnxFile("/nonexistent/model.onnx"),
              {"/nonexistent/model.onnx", "cannot open"});
}

TEST(BadInputTest, EmptyTruncatedAndNonOnnxBytes) {
  ExpectError(ImportOnnxBytes("", "empty.onnx"), {"empty.onnx", "empty file"});
  std::string good = testing::SmallCnnBytes();
  ExpectError(ImportOnnxBytes(good.substr(0, good.size() / 2), "half.onnx"), {"half.onnx"});
  ExpectError(ImportOnnxBytes("this is not a protobuf \xff\xff\xff", "text.onnx"),
              {"text.onnx", "not an ONNX model"});
}

// A model that computes nothing (no outputs) is refused, naming the file.
TEST(BadInputTest, AGraphWithoutOutputs) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name("empty");
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  ExpectError(ImportOnnxBytes(bytes, "hollow.onnx"), {"hollow.onnx"});
}

TEST(BadInputTest, CheckerFailureNamesTheNode) {
  ModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.Node("NoSuchOperator", {"x"}, {"y"}, "mystery");
  ExpectError(ImportOnnxBytes(b.Bytes(), "bad.onnx"), {"bad.onnx", "checker", "NoSuchOperator"});
}

// Not bad input: an output (or input) declared without a shape, a tensor of unknown rank, as
// the format allows (ONNX Runtime loads it; ONNX 1.12's checker alone wanted a shape). The output
// takes the shape inference gives it, and a still-missing check (a node the checker refuses)
// still fails.
TEST(BadInputTest, OutputsWithoutAShapeAreNotBadInput) {
  ModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {});
  b.model()
      .mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->clear_shape();
  b.Node("Relu", {"x"}, {"y"}, "relu");
  auto g = ImportOnnxBytes(b.Bytes(), "shapeless.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->value(g->outputs()[0]).dims, (std::vector<int64_t>{2, 3}));
  b.Node("NoSuchOperator", {"x"}, {"z"}, "mystery");
  ExpectError(ImportOnnxBytes(b.Bytes(), "bad.onnx"), {"bad.onnx", "checker", "NoSuchOperator"});
}

TEST(BadInputTest, UnsupportedOpset) {
  ModelBuilder b(99);
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  ExpectError(ImportOnnxBytes(b.Bytes(), "new.onnx"), {"new.onnx", "unsupported opset 99"});
  ModelBuilder none;
  none.model().clear_opset_import();
  none.Input("x", {2}).Output("y", {2});
  none.Node("Relu", {"x"}, {"y"}, "relu");
  ExpectError(ImportOnnxBytes(none.Bytes(), "none.onnx"), {"none.onnx", "opset"});
}

TEST(BadInputTest, MissingInitializerNamesNodeAndTensor) {
  ModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.Node("Add", {"x", "bias"}, {"y"}, "add_bias");
  ExpectError(ImportOnnxBytes(b.Bytes(), "missing.onnx"), {"missing.onnx", "add_bias", "bias"});
}

TEST(BadInputTest, CorruptInitializerData) {
  ModelBuilder b;
  b.Input("x", {4}).Output("y", {4});
  b.RandomWeight("w", {4}, 1);
  b.model().mutable_graph()->mutable_initializer(0)->mutable_raw_data()->resize(7);
  b.Node("Add", {"x", "w"}, {"y"}, "add");
  ExpectError(ImportOnnxBytes(b.Bytes(), "corrupt.onnx"), {"corrupt.onnx", "'w'", "bytes"});
}

TEST(BadInputTest, UninferableShapes) {
  // A symbolic batch size: named, and fixed by ImportOptions::input_shapes.
  ModelBuilder b;
  b.Input("x", {-1, 3}).Output("y", {-1, 3});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  ExpectError(ImportOnnxBytes(b.Bytes(), "dyn.onnx"),
              {"dyn.onnx", "graph input 'x'", "input_shapes"});
  ImportOptions fixed;
  fixed.input_shapes["x"] = {5, 3};
  auto g = ImportOnnxBytes(b.Bytes(), "dyn.onnx", fixed);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->value(g->outputs()[0]).dims, (std::vector<int64_t>{5, 3}));
  ImportOptions wrong;
  wrong.input_shapes["nope"] = {5, 3};
  ExpectError(ImportOnnxBytes(b.Bytes(), "dyn.onnx", wrong), {"dyn.onnx", "'nope'"});
  // Data-dependent shapes (NonZero) import: shape_folding_test.cc.
}

TEST(BadInputTest, ShapeInferenceFailureIsAnError) {
  ModelBuilder b;
  b.Input("a", {2, 3}).Input("c", {4, 5}).Output("y", {2, 5});
  b.Node("MatMul", {"a", "c"}, {"y"}, "mm");
  ExpectError(ImportOnnxBytes(b.Bytes(), "mm.onnx"), {"mm.onnx", "shape inference"});
}

#ifdef VERISUB_ONNX_CLI
// Runs the CLI; returns its exit status.
int RunCli(const std::string& args) {
  std::string cmd = std::string(VERISUB_ONNX_CLI) + " " + args + " > /dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(BadInputTest, CliExitsNonZeroAndWritesNothing) {
  fs::path dir = fs::temp_directory_path() / "verisub_cli_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path bad = dir / "bad.onnx", out = dir / "out.onnx", good = dir / "good.onnx";
  std::string cnn = testing::SmallCnnBytes();
  std::ofstream(bad, std::ios::binary) << cnn.substr(0, cnn.size() / 3);
  std::ofstream(good, std::ios::binary) << cnn;
  EXPECT_EQ(RunCli(bad.string() + " -o " + out.string()), 1);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(RunCli("--bogus-flag"), 2);
  EXPECT_EQ(RunCli(good.string() + " --run --seed -4"), 2);
  EXPECT_EQ(RunCli(good.string() + " --input-shape x=1,-2"), 2);
  EXPECT_EQ(RunCli(good.string() + " --input-shape x=1,2z"), 2);
  EXPECT_EQ(RunCli("--help"), 0);
  EXPECT_EQ(RunCli(good.string() + " --run -o " + out.string()), 0);
  EXPECT_TRUE(fs::exists(out));
  fs::remove_all(dir);
}
#endif

}  // namespace
}  // namespace verisub::runtime
