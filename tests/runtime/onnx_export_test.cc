// ONNX export: round trips are structurally identical and compute the same outputs, opaque
// nodes survive in place with their attributes, fused forms export as standard sequences, and
// file export leaves no file behind on error.
#include "runtime/onnx_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include "base/file_io.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/graph_hash.h"
#include "runtime/onnx_import.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/pooling.h"
#include "specs/registry.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

namespace fs = std::filesystem;
using testing::ModelBuilder;

Graph Reimport(const Graph& g) {
  onnx::ModelProto model;
  Status st = ExportOnnxModel(g, &model);
  EXPECT_TRUE(st.ok()) << st.message();
  auto back = ImportOnnxModel(model, "exported");
  EXPECT_TRUE(back.ok()) << back.status().message();
  return back.ok() ? *back : Graph();
}

void ExpectRoundTrip(const std::string& bytes) {
  auto g = ImportOnnxBytes(bytes, "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph back = Reimport(*g);
  EXPECT_EQ(StructuralHash(*g), StructuralHash(back));
  EXPECT_EQ(OpCounts(*g), OpCounts(back));
  std::vector<HostTensor> in = testing::RandomInputs(*g, 5);
  auto a = Execute(*g, in);
  auto b = Execute(back, in);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*a, *b), 0.0);
  // The original model, executed without any mapping or folding, agrees too.
  ImportOptions raw;
  raw.map_to_spec_ops = false;
  raw.fold_constants = false;
  auto orig = ImportOnnxBytes(bytes, "model", raw);
  ASSERT_TRUE(orig.ok()) << orig.status().message();
  auto c = Execute(*orig, in);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_LT(testing::MaxAbsDiff(*a, *c), 1e-5);
}

TEST(OnnxExportTest, SubRoundTripsAsEwSub) {
  ModelBuilder b;
  b.Input("a", {2, 3}).Input("b", {2, 3}).Output("y", {2, 3});
  b.Node("Sub", {"a", "b"}, {"y"}, "sub");
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "ewsub"), 1);
  ExpectRoundTrip(b.Bytes());
}

TEST(OnnxExportTest, SmallCnnRoundTrips) { ExpectRoundTrip(testing::SmallCnnBytes()); }

// Node names stay unique: a three-way Split (no concat history) imports as slices named "/Split",
// "/Split_1", "/Split_2", beside the model's own "/Split_1" (YOLOv8's heads), which ONNX Runtime
// refused ("two nodes with same node name").
TEST(OnnxExportTest, NodeNamesStayUnique) {
  ModelBuilder b(13);
  b.Input("x", {1, 6, 4}).Output("y", {1, 6, 4}).Output("z", {1, 2, 4});
  b.Int64Weight("parts", {2, 2, 2});
  testing::SetInt(b.Node("Split", {"x", "parts"}, {"a", "c", "d"}, "/Split"), "axis", 1);
  b.Node("Relu", {"c"}, {"z"}, "/Split_1");
  testing::SetInt(b.Node("Concat", {"d", "a", "c"}, {"y"}, "/Concat"), "axis", 1);
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  onnx::ModelProto m;
  ASSERT_TRUE(ExportOnnxModel(*g, &m).ok());
  std::map<std::string, int> names;
  for (const auto& n : m.graph().node())
    if (!n.name().empty()) ++names[n.name()];
  for (const auto& [name, count] : names) EXPECT_EQ(count, 1) << name;
  EXPECT_EQ(names.size(), 4u);  // three slices and the Relu; the concat's name is empty
}

// Layouts belong to a prepared session, not to the model: export writes the same model with or
// without them.
TEST(OnnxExportTest, LayoutsAreNotExported) {
  auto g = ImportOnnxBytes(testing::SmallCnnBytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph laid = *g;
  int stored = 0;
  for (int v = 0; v < laid.num_values(); ++v)
    if (laid.value(v).rank_known && laid.value(v).dims.size() == 4) {
      laid.mutable_value(v).layout = specs::Layout::kNHWC;
      ++stored;
    }
  ASSERT_GT(stored, 0);
  ASSERT_TRUE(CheckGraph(laid).ok());
  onnx::ModelProto plain_model, laid_model;
  ASSERT_TRUE(ExportOnnxModel(*g, &plain_model).ok());
  ASSERT_TRUE(ExportOnnxModel(laid, &laid_model).ok());
  EXPECT_EQ(plain_model.SerializeAsString(), laid_model.SerializeAsString());
  EXPECT_NE(StructuralHash(laid), StructuralHash(*g));
  EXPECT_EQ(StructuralHash(Reimport(laid)), StructuralHash(*g));
}
TEST(OnnxExportTest, SmallTransformerRoundTrips) {
  ExpectRoundTrip(testing::SmallTransformerBytes());
}

TEST(OnnxExportTest, BackendConvAndPoolModelsRoundTrip) {
  for (const char* t :
       {"test_basic_conv_with_padding", "test_maxpool_2d_pads",
        "test_averagepool_2d_pads_count_include_pad", "test_gemm_default_vector_bias",
        "test_batchnorm_example", "test_concat_3d_axis_1"}) {
    std::string path = std::string("/usr/share/libonnx-testdata/data/node/") + t + "/model.onnx";
    if (!fs::exists(path)) GTEST_SKIP() << "libonnx-testdata missing";
    auto g = ImportOnnxFile(path);
    ASSERT_TRUE(g.ok()) << g.status().message();
    Graph back = Reimport(*g);
    EXPECT_EQ(StructuralHash(*g), StructuralHash(back)) << t;
  }
}

TEST(OnnxExportTest, OpaqueNodesKeepAttributesAndPosition) {
  ModelBuilder b;
  b.Input("x", {2, 6}).Output("y", {2, 6});
  b.Node("Relu", {"x"}, {"r"}, "relu");
  testing::SetFloat(b.Node("LeakyRelu", {"r"}, {"l"}, "leaky"), "alpha", 0.25f);
  b.Node("Sigmoid", {"l"}, {"s"}, "sig");
  testing::SetInt(b.Node("Softmax", {"s"}, {"y"}, "soft"), "axis", 0);
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(*g, &model).ok());
  const auto& nodes = model.graph().node();
  ASSERT_EQ(nodes.size(), 4);
  EXPECT_EQ(nodes[1].op_type(), "LeakyRelu");
  ASSERT_EQ(nodes[1].attribute_size(), 1);
  EXPECT_EQ(nodes[1].attribute(0).f(), 0.25f);
  EXPECT_EQ(nodes[3].op_type(), "Softmax");
  EXPECT_EQ(nodes[3].attribute(0).i(), 0);
  EXPECT_EQ(nodes[1].input(0), nodes[0].output(0));
  EXPECT_EQ(nodes[3].output(0), "y");
  Graph back = Reimport(*g);
  EXPECT_EQ(StructuralHash(*g), StructuralHash(back));
}

// A conv2d with a fused activation (as the rewriter produces) exports as Conv then Relu, and the
// exported sequence re-imports to a graph computing the same outputs.
TEST(OnnxExportTest, FusedFormsExportAsStandardSequences) {
  ModelBuilder b;
  b.Input("x", {1, 2, 5, 5}).Output("y", {1, 3, 5, 5});
  b.RandomWeight("w", {3, 2, 3, 3}, 1).RandomWeight("bias", {3}, 2);
  testing::SetInts(b.Node("Conv", {"x", "w", "bias"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->node(0).KindName(), "conv2d");
  ASSERT_EQ(g->node(1).KindName(), "bias_add");
  Graph fused = *g;
  fused.mutable_node(0).params[specs::ops::kConvActivation] =
      static_cast<int64_t>(specs::Activation::kRelu);
  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(fused, &model).ok());
  std::vector<std::string> types;
  for (const auto& n : model.graph().node()) types.push_back(n.op_type());
  EXPECT_EQ(types, (std::vector<std::string>{"Conv", "Relu", "Add"}));
  std::vector<HostTensor> in = testing::RandomInputs(fused, 1);
  auto a = Execute(fused, in);
  Graph back = Reimport(fused);
  EXPECT_EQ(testing::CountKind(back, "relu"), 1);
  auto c = Execute(back, in);
  ASSERT_TRUE(a.ok() && c.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*a, *c), 0.0);
  // The fused graph really differs from the unfused one (the relu is applied).
  auto unfused = Execute(*g, in);
  ASSERT_TRUE(unfused.ok());
  EXPECT_GT(testing::MaxAbsDiff(*a, *unfused), 0.0);
}

// A pool whose valid window is the whole image (an imported GlobalAveragePool) is written back as
// the global pool, which engines run as a reduction.
TEST(OnnxExportTest, WholeImagePoolsExportAsGlobalPools) {
  auto g = ImportOnnxBytes(testing::SmallCnnBytes(), "cnn");
  ASSERT_TRUE(g.ok()) << g.status().message();
  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(*g, &model).ok());
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  int global = 0, windowed = 0;
  for (const auto& n : model.graph().node()) {
    global += n.op_type() == "GlobalAveragePool";
    windowed += n.op_type() == "AveragePool";
  }
  EXPECT_EQ(global, 1);
  EXPECT_EQ(windowed, 0);
  auto back = ImportOnnxModel(model, "back");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(StructuralHash(*g), StructuralHash(*back));
}

// An n-ary Concat imports as a chain of binary concats and is written back as one Concat (ONNX
// Runtime copied DenseNet's features again at every link); a chain whose middle value is read
// elsewhere, or that changes axis, stays split there.
TEST(OnnxExportTest, ConcatChainsExportAsOneConcat) {
  ModelBuilder b;
  b.Input("a", {1, 2, 3, 3}).Input("b", {1, 3, 3, 3}).Input("c", {1, 1, 3, 3});
  b.Input("d", {1, 4, 3, 3});
  b.Output("y", {1, 10, 3, 3}).Output("z", {1, 5, 6, 3});
  testing::SetInt(b.Node("Concat", {"a", "b", "c", "d"}, {"y"}), "axis", 1);
  testing::SetInt(b.Node("Concat", {"a", "b"}, {"ab"}), "axis", 1);
  testing::SetInt(b.Node("Concat", {"ab", "ab"}, {"z"}), "axis", 2);
  auto g = ImportOnnxBytes(b.Bytes(), "concats");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "concat"), 5);
  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(*g, &model).ok());
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  std::vector<int> arity;
  for (const auto& n : model.graph().node())
    if (n.op_type() == "Concat") arity.push_back(n.input_size());
  std::sort(arity.begin(), arity.end());
  EXPECT_EQ(arity, (std::vector<int>{2, 2, 4}));
  auto back = ImportOnnxModel(model, "back");
  ASSERT_TRUE(back.ok()) << back.status().message();
  std::vector<HostTensor> in = testing::RandomInputs(*g, 5);
  auto x = Execute(*g, in), y = Execute(*back, in);
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*x, *y), 0.0);
}

TEST(OnnxExportTest, FileExportWritesAValidModel) {
  auto g = ImportOnnxBytes(testing::SmallCnnBytes(), "cnn");
  ASSERT_TRUE(g.ok());
  fs::path dir = fs::temp_directory_path() / "verisub_export_test";
  fs::create_directories(dir);
  fs::path out = dir / "cnn.onnx";
  ASSERT_TRUE(ExportOnnxFile(*g, out.string()).ok());
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
  auto back = ImportOnnxFile(out.string());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(StructuralHash(*g), StructuralHash(*back));
  EXPECT_FALSE(fs::exists(out.string() + ".tmp-verisub"));
  fs::remove_all(dir);
}

// A weight without elements (a Loop's empty accumulator, Mask R-CNN's [0, H, W]) is written
// without a data field, in memory and to a file: the ONNX checker refuses a 0-element tensor
// that holds data (the file export's placeholder byte did).
TEST(OnnxExportTest, EmptyWeightsPassTheChecker) {
  ModelBuilder b(16);
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.Weight("empty", HostTensor::FromDoubles(kFloat, {0, 3}, {}));
  testing::SetInt(b.Node("Concat", {"empty", "x"}, {"y"}, "concat"), "axis", 0);
  ImportOptions options;
  options.map_to_spec_ops = false;
  options.fold_constants = false;
  auto g = ImportOnnxBytes(b.Bytes(), "empty", options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(*g, &model).ok());
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  fs::path dir = fs::temp_directory_path() / "verisub_export_empty_test";
  fs::create_directories(dir);
  const std::string out = (dir / "empty.onnx").string();
  ASSERT_TRUE(ExportOnnxFile(*g, out).ok());
  EXPECT_NO_THROW(onnx::checker::check_model(out));
  auto back = ImportOnnxFile(out, options);
  ASSERT_TRUE(back.ok()) << back.status().message();
  const std::vector<HostTensor> in = {testing::RandomTensor({2, 3}, 1)};
  auto a = Execute(*g, in), c = Execute(*back, in);
  ASSERT_TRUE(a.ok() && c.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*a, *c), 0.0);
  fs::remove_all(dir);
}

// The file export writes weights straight from the tensors and the file import decodes large ones
// straight from the mapped file: both must give exactly what the in-memory forms give, for
// float32 and float16 weights over the size left in the file, and small ones too.
TEST(OnnxExportTest, LargeWeightsStreamToTheFileAndBackExactly) {
  ModelBuilder b(17);
  b.Input("x", {1, 256});
  b.RandomWeight("w", {256, 128}, 7);  // 128 KiB: left in the file by the import
  b.RandomWeight("bias", {128}, 8);    // small: parsed as usual
  b.Weight("w16", testing::RandomTensor({128, 256}, 9, kFloat16));
  b.Node("MatMul", {"x", "w"}, {"y"});
  b.Node("Add", {"y", "bias"}, {"z"});
  b.Node("Cast", {"w16"}, {"w32"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(kFloat);
    return a;
  }());
  b.Node("MatMul", {"z", "w32"}, {"out"});
  b.Output("out", {1, 256});
  ImportOptions keep;  // the Cast of a weight stays, so w16 is exported as float16
  keep.fold_constants = false;
  auto g = ImportOnnxBytes(b.Bytes(), "weights", keep);
  ASSERT_TRUE(g.ok()) << g.status().message();
  fs::path dir = fs::temp_directory_path() / "verisub_export_weights";
  fs::create_directories(dir);
  const std::string out = (dir / "w.onnx").string();
  ASSERT_TRUE(ExportOnnxFile(*g, out).ok());
  // Protobuf reads the streamed file as the model ExportOnnxModel builds.
  onnx::ModelProto in_memory, from_file;
  ASSERT_TRUE(ExportOnnxModel(*g, &in_memory).ok());
  auto bytes = base::ReadFile(out);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(from_file.ParseFromString(*bytes));
  EXPECT_EQ(from_file.SerializeAsString(), in_memory.SerializeAsString());
  EXPECT_EQ(from_file.graph().initializer_size(), 3);
  // Importing the file gives the weights bit for bit, as importing the bytes does.
  auto back = ImportOnnxFile(out, keep);
  ASSERT_TRUE(back.ok()) << back.status().message();
  auto weights = [](const Graph& x) {
    std::map<std::string, HostTensor> m;
    for (int v = 0; v < x.num_values(); ++v)
      if (x.value(v).constant) m[x.value(v).name] = *x.value(v).constant;
    return m;
  };
  auto before = weights(*g), after = weights(*back);
  ASSERT_EQ(before.size(), 3u);
  ASSERT_EQ(after.size(), 3u);
  for (const auto& [name, t] : before) {
    ASSERT_TRUE(after.count(name)) << name;
    EXPECT_EQ(after[name].elem_type, t.elem_type) << name;
    EXPECT_EQ(after[name].dims, t.dims) << name;
    EXPECT_EQ(after[name].f32, t.f32) << name;
    EXPECT_EQ(after[name].f64, t.f64) << name;
  }
  EXPECT_EQ(after["w16"].elem_type, kFloat16);
  // A file cut inside the large weight is an error naming the file, never a crash.
  const std::string cut = (dir / "cut.onnx").string();
  ASSERT_TRUE(base::WriteFileAtomically(cut, bytes->substr(0, bytes->size() - 70000)).ok());
  auto truncated = ImportOnnxFile(cut);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find(cut), std::string::npos)
      << truncated.status().message();
  fs::remove_all(dir);
}

// A float32 weight imported from a file stays in it (Float32Storage::InFile): the export writes
// it straight from the file, a transpose folded at import reads it where it lies, and both give
// exactly what the decoded weights give; reading it as floats decodes it once, and a writer
// copies it out without touching the other holders.
TEST(OnnxExportTest, WeightsLeftInTheFileAreReadWhereTheyLie) {
  ModelBuilder b(17);
  b.Input("x", {1, 256});
  b.RandomWeight("w", {96, 256}, 11);  // 96 KiB: left in the file
  b.RandomWeight("w2", {96, 64}, 12);  // 24 KiB: parsed into the proto, decoded at once
  testing::SetInt(b.Node("Gemm", {"x", "w"}, {"y"}), "transB", 1);
  b.Node("MatMul", {"y", "w2"}, {"out"});
  b.Output("out", {1, 64});
  fs::path dir = fs::temp_directory_path() / "verisub_weights_in_file";
  fs::create_directories(dir);
  const std::string path = (dir / "m.onnx").string();
  ASSERT_TRUE(base::WriteFileAtomically(path, b.Bytes()).ok());
  auto constant = [](const Graph& g, const std::string& name) -> const HostTensor* {
    for (int v = 0; v < g.num_values(); ++v)
      if (g.value(v).constant && g.value(v).name == name) return g.value(v).constant.get();
    return nullptr;
  };
  auto floats = [](const Graph& g) {
    std::map<std::vector<int64_t>, std::vector<float>> m;  // keyed by shape: names may change
    for (int v = 0; v < g.num_values(); ++v)
      if (g.value(v).constant) m[g.value(v).constant->dims] = g.value(v).constant->f32.Floats();
    return m;
  };
  ImportOptions keep;
  keep.fold_constants = false;
  auto from_file = ImportOnnxFile(path, keep);
  auto from_bytes = ImportOnnxBytes(b.Bytes(), "m", keep);
  ASSERT_TRUE(from_file.ok()) << from_file.status().message();
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().message();
  const HostTensor* w = constant(*from_file, "w");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->f32.InFile());
  EXPECT_EQ(w->f32.size(), 96u * 256u);
  EXPECT_FALSE(constant(*from_file, "w2")->f32.InFile());
  EXPECT_FALSE(constant(*from_bytes, "w")->f32.InFile());
  // Exported straight from the file: the same bytes as the decoded weights', nothing decoded.
  const std::string out_file = (dir / "a.onnx").string(), out_bytes = (dir / "b.onnx").string();
  ASSERT_TRUE(ExportOnnxFile(*from_file, out_file).ok());
  ASSERT_TRUE(ExportOnnxFile(*from_bytes, out_bytes).ok());
  EXPECT_EQ(*base::ReadFile(out_file), *base::ReadFile(out_bytes));
  EXPECT_TRUE(w->f32.InFile());
  // The Gemm's transposed weight folded at import from the file: the decoded fold's floats.
  auto folded_file = ImportOnnxFile(path), folded_bytes = ImportOnnxBytes(b.Bytes(), "m");
  ASSERT_TRUE(folded_file.ok() && folded_bytes.ok());
  EXPECT_EQ(floats(*folded_file), floats(*folded_bytes));
  EXPECT_EQ(floats(*folded_file).count({256, 96}), 1u);
  // A copy for a writer of its own (a prepare folding a scale in) is read from the file, and
  // nothing is decoded into the shared floats.
  EXPECT_EQ(w->f32.Copy(), constant(*from_bytes, "w")->f32.Floats());
  EXPECT_TRUE(w->f32.InFile());
  // Read as floats: decoded once for every copy, equal to the bytes.
  HostTensor copy = *w;
  EXPECT_EQ(w->f32, constant(*from_bytes, "w")->f32);
  EXPECT_FALSE(w->f32.InFile());
  EXPECT_FALSE(copy.f32.InFile());
  EXPECT_EQ(std::as_const(copy).f32.data(), w->f32.data());  // they share the decoded floats
  EXPECT_EQ(w->f32.Bytes().data(), reinterpret_cast<const char*>(w->f32.data()));
  // A writer copies them out; the other holder keeps its values.
  const float first = w->f32[0];
  copy.f32[0] = first + 1.0f;
  EXPECT_FALSE(copy.f32.InFile());
  EXPECT_EQ(w->f32[0], first);
  EXPECT_EQ(copy.f32[0], first + 1.0f);
  EXPECT_EQ(copy.f32.size(), w->f32.size());
  fs::remove_all(dir);
}

// A transposed weight wider than one band of the fold's reads (about 16 MB of input rows: here
// 140,000 floats a row, so 32 rows a band and two bands, the second partial) folds from the file
// to exactly what the decoded weight folds to.
TEST(OnnxExportTest, AWideWeightInTheFileFoldsInBands) {
  ModelBuilder b(17);
  b.Input("x", {1, 140000});
  b.RandomWeight("w", {40, 140000}, 13);
  testing::SetInt(b.Node("Gemm", {"x", "w"}, {"y"}), "transB", 1);
  b.Output("y", {1, 40});
  fs::path dir = fs::temp_directory_path() / "verisub_wide_weight_in_file";
  fs::create_directories(dir);
  const std::string path = (dir / "m.onnx").string();
  ASSERT_TRUE(base::WriteFileAtomically(path, b.Bytes()).ok());
  auto folded_file = ImportOnnxFile(path), folded_bytes = ImportOnnxBytes(b.Bytes(), "m");
  ASSERT_TRUE(folded_file.ok()) << folded_file.status().message();
  ASSERT_TRUE(folded_bytes.ok()) << folded_bytes.status().message();
  auto transposed = [](const Graph& g) -> std::vector<float> {
    for (int v = 0; v < g.num_values(); ++v)
      if (g.value(v).constant && g.value(v).constant->dims == std::vector<int64_t>{140000, 40})
        return g.value(v).constant->f32.Floats();
    return {};
  };
  const std::vector<float> from_file = transposed(*folded_file);
  ASSERT_EQ(from_file.size(), 140000u * 40u);
  EXPECT_EQ(from_file, transposed(*folded_bytes));
  fs::remove_all(dir);
}

// The export into a caller's buffer (the Python module's bytes) asks for exactly the model's
// size and fills it with what the file export writes; an allocation that fails is the error.
TEST(OnnxExportTest, ExportIntoABufferIsTheFileExportsBytes) {
  auto g = ImportOnnxBytes(testing::SmallCnnBytes(), "cnn");
  ASSERT_TRUE(g.ok());
  fs::path dir = fs::temp_directory_path() / "verisub_export_buffer";
  fs::create_directories(dir);
  const std::string out = (dir / "cnn.onnx").string();
  ASSERT_TRUE(ExportOnnxFile(*g, out).ok());
  auto file = base::ReadFile(out);
  ASSERT_TRUE(file.ok());
  std::string buffer;
  int calls = 0;
  Status st = ExportOnnxToBuffer(*g, [&](uint64_t bytes) -> StatusOr<char*> {
    ++calls;
    buffer.assign(bytes, '\0');
    return buffer.data();
  });
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(buffer, *file);
  Status refused =
      ExportOnnxToBuffer(*g, [](uint64_t) -> StatusOr<char*> { return InternalError("no room"); });
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("no room"), std::string::npos) << refused.message();
  fs::remove_all(dir);
}

// A model too large for one protobuf message (here: a limit of a few bytes) is written with its
// weights as ONNX external data in PATH.data; the ONNX checker reads it by path, our import reads
// the weights back bit for bit; bad external references are errors naming the tensor and file.
TEST(OnnxExportTest, ExternalDataRoundTripsAndBadReferencesAreErrors) {
  ModelBuilder b(17);
  b.Input("x", {1, 256});
  // Two weights of 1 MiB or more, the first not a whole number of pages long.
  b.RandomWeight("w", {256, 1001}, 7);
  b.RandomWeight("w2", {1001, 300}, 9);
  b.RandomWeight("bias", {300}, 8);
  b.Node("MatMul", {"x", "w"}, {"h"});
  b.Node("MatMul", {"h", "w2"}, {"y"});
  b.Node("Add", {"y", "bias"}, {"out"});
  b.Output("out", {1, 300});
  auto g = ImportOnnxBytes(b.Bytes(), "weights");
  ASSERT_TRUE(g.ok()) << g.status().message();
  fs::path dir = fs::temp_directory_path() / "verisub_external_data";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "m.onnx").string();
  ExportFileOptions external;
  external.max_inline_bytes = 1000;
  ASSERT_TRUE(ExportOnnxFile(*g, out, external).ok());
  ASSERT_TRUE(fs::exists(out + ".data"));
  EXPECT_GE(fs::file_size(out + ".data"), (256 * 1001 + 1001 * 300 + 300) * 4u);
  EXPECT_LT(fs::file_size(out), 4096u);
  EXPECT_NO_THROW(onnx::checker::check_model(out));
  onnx::ModelProto written;
  auto bytes = base::ReadFile(out);
  ASSERT_TRUE(bytes.ok() && written.ParseFromString(*bytes));
  int external_tensors = 0;
  std::map<std::string, uint64_t> offsets;
  for (const auto& t : written.graph().initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      ++external_tensors;
      EXPECT_EQ(t.external_data(0).key(), "location");
      EXPECT_EQ(t.external_data(0).value(), "m.onnx.data");  // relative to the model
      for (const auto& e : t.external_data())
        if (e.key() == "offset") offsets[t.name()] = std::stoull(e.value());
    }
  // ONNX Runtime maps a tensor of 1 MiB or more from the file when it starts on a page.
  ASSERT_EQ(offsets.count("w") + offsets.count("w2"), 2u);
  EXPECT_EQ(offsets["w"] % 4096, 0u);
  EXPECT_EQ(offsets["w2"] % 4096, 0u);
  EXPECT_GT(std::max(offsets["w"], offsets["w2"]), 0u);
  EXPECT_EQ(external_tensors, 3);
  auto back = ImportOnnxFile(out);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(StructuralHash(*g), StructuralHash(*back));
  std::vector<HostTensor> in = testing::RandomInputs(*g, 3);
  auto y0 = Execute(*g, in), y1 = Execute(*back, in);
  ASSERT_TRUE(y0.ok() && y1.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*y0, *y1), 0.0);
  // The same model, read from memory, has no folder to find the data in.
  auto from_bytes = ImportOnnxBytes(*bytes, "mem");
  ASSERT_FALSE(from_bytes.ok());
  EXPECT_NE(from_bytes.status().message().find("external data"), std::string::npos)
      << from_bytes.status().message();

  // Each bad reference: the model rewritten with one entry of the weight "w" changed.
  auto expect_error = [&](const std::string& key, const std::string& value,
                          const std::string& says) {
    onnx::ModelProto m = written;
    for (auto& t : *m.mutable_graph()->mutable_initializer()) {
      if (t.name() != "w") continue;
      bool found = false;
      for (auto& e : *t.mutable_external_data())
        if (e.key() == key) {
          e.set_value(value);
          found = true;
        }
      if (!found) {
        auto* e = t.add_external_data();
        e->set_key(key);
        e->set_value(value);
      }
    }
    const std::string bad = (dir / "bad.onnx").string();
    ASSERT_TRUE(base::WriteFileAtomically(bad, m.SerializeAsString()).ok());
    auto r = ImportOnnxFile(bad);
    ASSERT_FALSE(r.ok()) << key << "=" << value;
    const std::string msg = r.status().message();
    EXPECT_NE(msg.find(bad), std::string::npos) << msg;
    EXPECT_NE(msg.find("'w'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(says), std::string::npos) << msg;
  };
  expect_error("location", "missing.data", "missing.data");
  expect_error("location", "../m.onnx.data", "not a path inside the model's folder");
  expect_error("location", (dir / "m.onnx.data").string(), "not a path inside the model's folder");
  expect_error("location", "", "names no location");
  expect_error("offset", "99999999", "past the end");
  expect_error("length", "99999999", "past the end");
  expect_error("offset", "-4", "not a byte count");
  expect_error("length", "12abc", "not a byte count");
  expect_error("length", "4", "needs 1025024 bytes");  // shorter than the tensor's shape
  // An output that is no regular file cannot have a data file beside it.
  Status dev = ExportOnnxFile(*g, "/dev/null", external);
  EXPECT_FALSE(dev.ok());
  EXPECT_NE(dev.message().find("external data"), std::string::npos) << dev.message();
  fs::remove_all(dir);
}

// The file import walks the model's messages itself (weights stay in the mapped file): a nested
// length beyond the end of the file is a parse error, as protobuf's own parse makes it, not a
// message that swallows the rest of the file.
TEST(OnnxExportTest, FileImportRefusesALengthBeyondTheFile) {
  onnx::GraphProto graph;
  graph.set_name("g");
  std::string bytes = "\x3a";                 // ModelProto field 7 (graph), length-delimited
  for (uint64_t v = 0x7ffffff0u;; v >>= 7) {  // a varint far beyond the file's end
    if (v < 0x80) {
      bytes += static_cast<char>(v);
      break;
    }
    bytes += static_cast<char>((v & 0x7f) | 0x80);
  }
  bytes += graph.SerializeAsString();
  fs::path dir = fs::temp_directory_path() / "verisub_import_length";
  fs::create_directories(dir);
  const std::string path = (dir / "long.onnx").string();
  ASSERT_TRUE(base::WriteFileAtomically(path, bytes).ok());
  auto g = ImportOnnxFile(path);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("protobuf parse failed"), std::string::npos)
      << g.status().message();
  fs::remove_all(dir);
}

TEST(OnnxExportTest, FailedExportLeavesNoFile) {
  ImportOptions opaque_only;  // the CNN's operators all map: keep them opaque to rename one
  opaque_only.map_to_spec_ops = false;
  auto g = ImportOnnxBytes(testing::SmallCnnBytes(), "cnn", opaque_only);
  ASSERT_TRUE(g.ok());
  fs::path dir = fs::temp_directory_path() / "verisub_export_fail";
  fs::create_directories(dir);
  // An opaque node of an operator the checker does not know.
  Graph bad = *g;
  for (int i = 0; i < bad.num_nodes(); ++i)
    if (bad.node(i).opaque()) {
      auto proto = std::make_shared<onnx::NodeProto>(*bad.node(i).onnx);
      proto->set_op_type("NoSuchOperator");
      Node n = bad.node(i);
      n.op_type = "NoSuchOperator";
      n.onnx = proto;
      bad.SetNode(i, n);
    }
  fs::path out = dir / "bad.onnx";
  Status st = ExportOnnxFile(bad, out.string());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("checker"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(out.string()), std::string::npos) << st.message();
  EXPECT_TRUE(fs::is_empty(dir));
  // Unwritable destination.
  Status st2 = ExportOnnxFile(*g, (dir / "missing_dir" / "x.onnx").string());
  EXPECT_FALSE(st2.ok());
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// A BatchNormalization with constant statistics imports as channel_scale + bias_add (vectors
// computed in double), a Mul by a run-time [1,C,1,1] gate (squeeze-excitation) and a Mul of a
// conv kernel (a graph input: a constant one is folded at import) by a [O,1,1,1] constant as
// channel_scales; all export as Mul by a broadcast view
// (an initializer for constants, a Reshape otherwise), pass the checker and re-import the same.
TEST(OnnxExportTest, ChannelScalesExportAsBroadcastMul) {
  ModelBuilder b;
  b.Input("x", {1, 4, 5, 5}).Input("gate", {1, 4, 1, 1}).Input("w", {4, 4, 3, 3});
  b.Output("y", {1, 4, 5, 5});
  b.RandomWeight("gamma", {4}, 1).RandomWeight("beta", {4}, 2).RandomWeight("mean", {4}, 3);
  const std::vector<double> var = {0.5, 1.0, 2.0, 4.0};
  b.Weight("var", HostTensor::FromDoubles(kFloat, {4}, var));
  b.RandomWeight("ws", {4, 1, 1, 1}, 5);
  testing::SetFloat(b.Node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"bn"}),
                    "epsilon", 1e-3f);
  b.Node("Mul", {"bn", "gate"}, {"gated"});
  b.Node("Mul", {"w", "ws"}, {"wscaled"});
  testing::SetInts(b.Node("Conv", {"gated", "wscaled"}, {"y"}), "pads", {1, 1, 1, 1});
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "channel_scale"), 3);
  EXPECT_EQ(testing::CountKind(*g, "bias_add"), 1);
  EXPECT_EQ(testing::CountKind(*g, "batchnorm"), 0);
  EXPECT_EQ(testing::CountKind(*g, "onnx:Mul"), 0);

  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(*g, &model).ok());
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  std::map<std::string, std::vector<int64_t>> init_dims;
  for (const auto& t : model.graph().initializer())
    init_dims[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
  std::vector<std::vector<int64_t>> mul_views;
  int reshapes = 0;
  for (const auto& n : model.graph().node()) {
    reshapes += n.op_type() == "Reshape";
    if (n.op_type() != "Mul") continue;
    auto it = init_dims.find(n.input(1));
    mul_views.push_back(it == init_dims.end() ? std::vector<int64_t>{} : it->second);
  }
  // The batchnorm's scale and shift as one BatchNormalization (mean 0, variance 1, epsilon 0),
  // the gate [1,4,1,1] as the model had it (no Reshape to [4] and back), the kernel's scale
  // [4,1,1,1].
  std::sort(mul_views.begin(), mul_views.end());
  EXPECT_EQ(mul_views, (std::vector<std::vector<int64_t>>{{}, {4, 1, 1, 1}}));
  int batchnorms = 0;
  for (const auto& n : model.graph().node()) batchnorms += n.op_type() == "BatchNormalization";
  EXPECT_EQ(batchnorms, 1);
  EXPECT_EQ(reshapes, 0);
  int gate_muls = 0;
  for (const auto& n : model.graph().node())
    gate_muls += n.op_type() == "Mul" && n.input(1) == "gate";
  EXPECT_EQ(gate_muls, 1);

  std::vector<HostTensor> in = testing::RandomInputs(*g, 3);
  auto a = Execute(*g, in);
  Graph back = Reimport(*g);
  EXPECT_EQ(testing::CountKind(back, "channel_scale"), 3);
  auto c = Execute(back, in);
  ASSERT_TRUE(a.ok() && c.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*a, *c), 0.0);
  // The imported graph computes BatchNormalization: a non-constant mean keeps the batchnorm
  // operator, which must agree with the folded vectors.
  ModelBuilder r;
  r.Input("x", {1, 4, 5, 5}).Input("mean", {4}).Output("y", {1, 4, 5, 5});
  r.RandomWeight("gamma", {4}, 1).RandomWeight("beta", {4}, 2);
  r.Weight("var", HostTensor::FromDoubles(kFloat, {4}, var));
  testing::SetFloat(r.Node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y"}),
                    "epsilon", 1e-3f);
  auto ref = ImportOnnxBytes(r.Bytes(), "reference");
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  EXPECT_EQ(testing::CountKind(*ref, "batchnorm"), 1);
  ModelBuilder f;
  f.Input("x", {1, 4, 5, 5}).Output("y", {1, 4, 5, 5});
  f.RandomWeight("gamma", {4}, 1).RandomWeight("beta", {4}, 2).RandomWeight("mean", {4}, 3);
  f.Weight("var", HostTensor::FromDoubles(kFloat, {4}, var));
  testing::SetFloat(f.Node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y"}),
                    "epsilon", 1e-3f);
  auto folded = ImportOnnxBytes(f.Bytes(), "folded");
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  EXPECT_EQ(testing::CountKind(*folded, "channel_scale"), 1);
  HostTensor mean = testing::RandomTensor({4}, 3);
  auto want = Execute(*ref, {in[0], mean});
  auto got = Execute(*folded, {in[0]});
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_LT(testing::MaxAbsDiff(*want, *got), 1e-5);
}

}  // namespace
}  // namespace verisub::runtime
