// Tensor files for verisub-run: .npy parsing, TensorProto files, matching files to inputs by
// name, refusing what cannot be an input file, and outputs written and read back.
#include "session/tensor_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/file_io.h"
#include "onnx/onnx_pb.h"
#include "runtime/graph_text.h"

namespace verisub {
namespace {

using runtime::HostTensor;

std::string Npy(const std::string& descr, const std::string& shape, const std::string& data,
                const std::string& order = "False") {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': (" + shape + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

template <class T>
std::string Bytes(std::vector<T> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/verisub_tensor_files_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(TensorFilesTest, ParsesNpyArrays) {
  auto f = ParseNpy(Npy("<f4", "2, 3", Bytes<float>({1, 2, 3, 4, 5, 6.5f})), "a.npy");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->elem_type, runtime::kFloat);
  EXPECT_EQ(f->dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f->f32[5], 6.5f);
  auto i = ParseNpy(Npy("<i8", "3,", Bytes<int64_t>({-1, 7, 1ll << 40})), "b.npy");
  ASSERT_TRUE(i.ok()) << i.status().message();
  EXPECT_EQ(i->ints, (std::vector<int64_t>{-1, 7, 1ll << 40}));
  auto scalar = ParseNpy(Npy("<f8", "", Bytes<double>({2.5})), "c.npy");
  ASSERT_TRUE(scalar.ok()) << scalar.status().message();
  EXPECT_TRUE(scalar->dims.empty());
  EXPECT_EQ(scalar->DoubleAt(0), 2.5);
  auto b = ParseNpy(Npy("|b1", "2", std::string("\x01\x00", 2)), "d.npy");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->ints, (std::vector<int64_t>{1, 0}));
}

TEST(TensorFilesTest, RefusesMalformedNpy) {
  const std::string data = Bytes<float>({1, 2});
  for (auto [bytes, why] : std::vector<std::pair<std::string, std::string>>{
           {"NUMPY", "magic"},
           {Npy("<f4", "3", data), "data bytes"},
           {Npy("<f4", "2", data, "True"), "C-order"},
           {Npy(">f4", "2", data), "'>f4'"},
           {Npy("<c8", "1", data), "'<c8'"},
           {Npy("<f4", "99999999999999999999", data), "shape"},
       }) {
    auto t = ParseNpy(bytes, "x.npy");
    ASSERT_FALSE(t.ok()) << why;
    EXPECT_NE(t.status().message().find("x.npy"), std::string::npos);
    EXPECT_NE(t.status().message().find(why), std::string::npos) << t.status().message();
  }
}

TEST(TensorFilesTest, ReadsFilesAndMatchesThemToInputsByName) {
  auto g = runtime::ParseGraphText("input x [2,3]\ninput y [3]\noutput (ewadd x x)\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  TempDir dir;
  const std::string x = dir.path() + "/x.npy", y = dir.path() + "/y.npy";
  ASSERT_TRUE(
      base::WriteFileAtomically(x, Npy("<f4", "2, 3", Bytes<float>({1, 2, 3, 4, 5, 6}))).ok());
  ASSERT_TRUE(base::WriteFileAtomically(y, Npy("<f4", "3,", Bytes<float>({7, 8, 9}))).ok());
  auto in = ReadInputs({y, x}, *g);  // by name, whatever the order
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ((*in)[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*in)[1].f32[0], 7.f);

  const std::string z = dir.path() + "/z.npy";
  ASSERT_TRUE(base::WriteFileAtomically(z, Npy("<f4", "3,", Bytes<float>({7, 8, 9}))).ok());
  auto wrong = ReadInputs({x, z}, *g);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("names input 'z'"), std::string::npos)
      << wrong.status().message();
  auto shape = ReadInputs({y, y}, *g);
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("second file"), std::string::npos);
  auto count = ReadInputs({x}, *g);
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("2 inputs"), std::string::npos);
  const std::string ints = dir.path() + "/y_.npy";  // no name matches: taken in order
  ASSERT_TRUE(base::WriteFileAtomically(ints, Npy("<i8", "3,", Bytes<int64_t>({1, 2, 3}))).ok());
  auto type = ReadInputs({x + "", ints}, *g);
  ASSERT_FALSE(type.ok());
}

// A dynamic-axes export: the input files give the sizes the model leaves symbolic (x: [N, 3]),
// never those it fixes (y: [3]) or those --input-shape gave.
TEST(TensorFilesTest, InputFilesGiveTheSymbolicDimensionsTheirSizes) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("dynamic");
  auto input = [&](const std::string& name, std::vector<std::string> dims) {
    onnx::ValueInfoProto* v = g->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (const std::string& d : dims) {
      auto* dim = t->mutable_shape()->add_dim();
      if (d[0] >= '0' && d[0] <= '9')
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
  };
  input("x", {"N", "3"});
  input("y", {"3"});
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("Add");
  n->add_input("x");
  n->add_input("y");
  n->add_output("z");
  g->add_output()->set_name("z");
  TempDir dir;
  const std::string model = dir.path() + "/dynamic.onnx";
  ASSERT_TRUE(base::WriteFileAtomically(model, m.SerializeAsString()).ok());
  const std::string x = dir.path() + "/x.npy", y = dir.path() + "/y.npy";
  ASSERT_TRUE(
      base::WriteFileAtomically(x, Npy("<f4", "2, 3", Bytes<float>({1, 2, 3, 4, 5, 6}))).ok());
  ASSERT_TRUE(base::WriteFileAtomically(y, Npy("<f4", "3,", Bytes<float>({7, 8, 9}))).ok());
  runtime::InputShapes shapes;
  ASSERT_TRUE(ShapesFromInputFiles(model, {y, x}, &shapes).ok());
  EXPECT_EQ(shapes, (runtime::InputShapes{{"x", {2, 3}}}));
  runtime::InputShapes given = {{"x", {4, 3}}};
  ASSERT_TRUE(ShapesFromInputFiles(model, {x, y}, &given).ok());
  EXPECT_EQ(given.at("x"), (std::vector<int64_t>{4, 3}));
  EXPECT_FALSE(ShapesFromInputFiles(dir.path() + "/missing.onnx", {x}, &shapes).ok());
}

TEST(TensorFilesTest, RefusesWhatCannotBeAnInputFile) {
  for (const char* path : {"/dev/zero", "/tmp", "/no/such/file.pb"}) {
    auto t = ReadTensorFile(path);
    ASSERT_FALSE(t.ok()) << path;
    EXPECT_NE(t.status().message().find(path), std::string::npos) << t.status().message();
  }
  TempDir dir;
  const std::string junk = dir.path() + "/junk.pb";
  ASSERT_TRUE(base::WriteFileAtomically(junk, "\xff\xff\xff not a tensor").ok());
  EXPECT_FALSE(ReadTensorFile(junk).ok());
}

TEST(TensorFilesTest, OutputsAreWrittenAndReadBack) {
  auto g = runtime::ParseGraphText("input x [2,2]\noutput (relu x)\n");
  ASSERT_TRUE(g.ok());
  TempDir dir;
  HostTensor t = HostTensor::FromDoubles(runtime::kFloat, {2, 2}, {1, -2, 3, -4});
  auto written = WriteOutputs(dir.path(), *g, {t});
  ASSERT_TRUE(written.ok()) << written.status().message();
  ASSERT_EQ(written->size(), 1u);
  auto back = ReadTensorFile((*written)[0]);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->name, g->value(g->outputs()[0]).name);
  EXPECT_EQ(back->tensor.f32, t.f32);
  EXPECT_FALSE(WriteOutputs(dir.path() + "/missing", *g, {t}).ok());
  auto read = ReadOutputs(dir.path(), *g);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].f32, t.f32);
  // Another graph's outputs: the file's shape is not this output's.
  auto other = runtime::ParseGraphText("input x [4]\noutput (relu x)\n");
  ASSERT_TRUE(other.ok());
  auto wrong = ReadOutputs(dir.path(), *other);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find((*written)[0]), std::string::npos)
      << wrong.status().message();
  EXPECT_FALSE(ReadOutputs(dir.path() + "/missing", *g).ok());
}

}  // namespace
}  // namespace verisub
