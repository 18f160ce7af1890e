// --input-shape: parsing, checks against the model's inputs, and the command-line flag.
#include "runtime/input_shapes.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;

void ExpectMessage(const Status& st, std::vector<std::string> fragments) {
  ASSERT_FALSE(st.ok());
  for (const auto& f : fragments)
    EXPECT_NE(st.message().find(f), std::string::npos)
        << "missing '" << f << "' in: " << st.message();
}

TEST(InputShapesTest, ParsesNameAndPositiveSizes) {
  InputShapes shapes;
  ASSERT_TRUE(ParseInputShapeFlag("input=1,3,224,224", &shapes).ok());
  ASSERT_TRUE(ParseInputShapeFlag("mask=7", &shapes).ok());
  EXPECT_EQ(shapes["input"], (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(shapes["mask"], (std::vector<int64_t>{7}));
}

TEST(InputShapesTest, RejectsMalformedFlags) {
  struct Case {
    const char* arg;
    const char* why;
  } cases[] = {
      {"input=1,3,-224,224", "dimension 2 is '-224'"},
      {"input=1,0", "dimension 1 is '0'"},
      {"input=1,,3", "dimension 1 is ''"},
      {"input=1,3x", "dimension 1 is '3x'"},
      {"input=99999999999999999999", "not a positive integer"},
      {"input=", "no dimensions"},
      {"=1,3", "no input name"},
      {"1,3,224,224", "no input name"},
  };
  for (const Case& c : cases) {
    InputShapes shapes;
    ExpectMessage(ParseInputShapeFlag(c.arg, &shapes), {c.arg, c.why, "NAME=D0,D1"});
  }
  InputShapes shapes;
  ASSERT_TRUE(ParseInputShapeFlag("x=1", &shapes).ok());
  ExpectMessage(ParseInputShapeFlag("x=2", &shapes), {"'x' is given twice"});
}

std::string SymbolicModel() {
  ModelBuilder b;
  b.Input("x", {-1, 3, 2, 2}).Output("y", {-1, 3, 2, 2});
  b.RandomWeight("w", {3, 1, 1}, 1);
  b.Node("Add", {"x", "w"}, {"y"}, "add");
  return b.Bytes();
}

Status ImportWith(const InputShapes& shapes) {
  ImportOptions options;
  options.input_shapes = shapes;
  return ImportOnnxBytes(SymbolicModel(), "sym.onnx", options).status();
}

TEST(InputShapesTest, FixesASymbolicDimension) {
  ImportOptions options;
  options.input_shapes["x"] = {4, 3, 2, 2};
  auto g = ImportOnnxBytes(SymbolicModel(), "sym.onnx", options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->value(g->inputs()[0]).dims, (std::vector<int64_t>{4, 3, 2, 2}));
  EXPECT_EQ(g->value(g->outputs()[0]).dims, (std::vector<int64_t>{4, 3, 2, 2}));
}

TEST(InputShapesTest, ErrorsNameTheInputAndTheConflict) {
  ExpectMessage(ImportWith({}), {"sym.onnx", "graph input 'x'", "symbolic dimension 'N'", "dim 0",
                                 "--input-shape x=1,3,2,2"});
  ExpectMessage(ImportWith({{"x", {4, 3, 2}}}), {"sym.onnx", "'x' has rank 4", "[N,3,2,2]"});
  ExpectMessage(ImportWith({{"x", {4, 5, 2, 2}}}),
                {"dimension 1 of input 'x' is fixed at 3", "--input-shape x=4,5,2,2"});
  ExpectMessage(ImportWith({{"x", {-4, 3, 2, 2}}}), {"dimension 0 is -4", "positive"});
  ExpectMessage(ImportWith({{"nope", {1}}}), {"'nope' is not a graph input", "graph inputs: 'x'"});
  ExpectMessage(ImportWith({{"w", {3, 1, 1}}}), {"'w' is an initializer"});
}

TEST(InputShapesTest, UnrankedInputAsksForTheWholeShape) {
  ModelBuilder b;
  b.Input("x", {}).Output("y", {-1, -1});
  b.model().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  for (auto& d : *b.model()
                      .mutable_graph()
                      ->mutable_output(0)
                      ->mutable_type()
                      ->mutable_tensor_type()
                      ->mutable_shape()
                      ->mutable_dim())
    d.Clear();
  b.Node("Relu", {"x"}, {"y"}, "relu");
  ExpectMessage(ImportOnnxBytes(b.Bytes(), "unranked.onnx").status(),
                {"graph input 'x' has no shape", "--input-shape x=D0,D1,..."});
  ImportOptions options;
  options.input_shapes["x"] = {2, 5};
  auto g = ImportOnnxBytes(b.Bytes(), "unranked.onnx", options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->value(g->outputs()[0]).dims, (std::vector<int64_t>{2, 5}));
}

#ifdef VERISUB_ONNX_CLI
int RunCli(const std::string& args) {
  std::string cmd = std::string(VERISUB_ONNX_CLI) + " " + args + " > /dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(InputShapesTest, CliFlag) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "verisub_input_shape_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path model = dir / "sym.onnx";
  std::ofstream(model, std::ios::binary) << SymbolicModel();
  EXPECT_EQ(RunCli(model.string()), 1);  // symbolic: an error
  EXPECT_EQ(RunCli(model.string() + " --input-shape x=2,3,2,2 --run"), 0);
  EXPECT_EQ(RunCli(model.string() + " --input-shape x=2,-3,2,2"), 2);  // malformed flag
  EXPECT_EQ(RunCli(model.string() + " --input-shape x=2,4,2,2"), 1);   // contradicts the model
  EXPECT_EQ(RunCli(model.string() + " --input-shape y=2,3,2,2"), 1);   // not an input
  fs::remove_all(dir);
}
#endif

}  // namespace
}  // namespace verisub::runtime
