// Cost tables: the text form round-trips byte for byte, damaged files are refused naming the file
// and entry, and saving merges with a table of the same machine already there.
#include "runtime/cost/cost_table.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/cost/measured_table.h"

namespace verisub::runtime {
namespace {

namespace fs = std::filesystem;

CostTableHeader Header(int threads = 1) {
  return CostTableHeader{"onednn", "2.6.3", "Test CPU (R) 9000", "avx2", threads, 2};
}

class CostTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cost_table_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CostTableTest, RoundTripsSortedAndByteIdentical) {
  CostTable a(Header());
  a.Insert("relu [1,8] -> [1,8] @default", 1.5, 100);
  a.Insert("conv2d[...] [1,3,8,8],[4,3,3,3] -> [1,4,8,8] w=2 @default", 12.25, 40);
  CostTable b(Header());  // the same entries inserted in the other order
  b.Insert("conv2d[...] [1,3,8,8],[4,3,3,3] -> [1,4,8,8] w=2 @default", 12.25, 40);
  b.Insert("relu [1,8] -> [1,8] @default", 1.5, 100);
  EXPECT_EQ(a.Serialize(), b.Serialize());
  auto parsed = CostTable::Parse(a.Serialize(), "a.txt");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->Serialize(), a.Serialize());
  EXPECT_TRUE(parsed->header().SameMachine(Header()));
  EXPECT_EQ(parsed->size(), 2);
  EXPECT_EQ(parsed->Find("relu [1,8] -> [1,8] @default"), 1.5);
  EXPECT_FALSE(parsed->Find("relu [1,9] -> [1,9] @default").has_value());
  EXPECT_LT(a.Serialize().find("conv2d"), a.Serialize().find("relu"));
}

// A parsed copy answers while the text is unchanged; an edited text, a damaged copy or a damaged
// text are never answered from a copy.
TEST_F(CostTableTest, ParsedCopyServesOnlyTheTextItWasMadeFrom) {
  CostTable a(Header());
  a.Insert("relu [1,8] -> [1,8] @default", 1.5, 100);
  const std::string text_path = (dir_ / "t.costs.txt").string();
  const fs::path parsed = dir_ / "parsed";  // made by the first load
  ASSERT_TRUE(a.Save(text_path).ok());
  auto first = CostTable::Load(text_path, parsed.string());
  ASSERT_TRUE(first.ok()) << first.status().message();
  std::vector<fs::path> copies;
  for (const auto& e : fs::directory_iterator(parsed)) copies.push_back(e.path());
  ASSERT_EQ(copies.size(), 1u);
  auto second = CostTable::Load(text_path, parsed.string());
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->Serialize(), a.Serialize());
  // The text edited: its own values, and the copy replaced (still one per table).
  a.Insert("relu [1,8] -> [1,8] @default", 2.5, 100);
  ASSERT_TRUE(a.Save(text_path).ok());
  auto edited = CostTable::Load(text_path, parsed.string());
  ASSERT_TRUE(edited.ok()) << edited.status().message();
  EXPECT_EQ(edited->Find("relu [1,8] -> [1,8] @default"), 2.5);
  EXPECT_EQ(std::distance(fs::directory_iterator(parsed), fs::directory_iterator()), 1);
  // A damaged copy: the text answers.
  {
    std::string bytes;
    {
      std::ifstream in(copies[0], std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    ASSERT_NE(bytes.find('\n'), std::string::npos);
    std::ofstream out(copies[0], std::ios::binary | std::ios::trunc);
    out << bytes.substr(0, bytes.find('\n') + 1) << "not a protobuf message";
  }
  auto damaged_copy = CostTable::Load(text_path, parsed.string());
  ASSERT_TRUE(damaged_copy.ok()) << damaged_copy.status().message();
  EXPECT_EQ(damaged_copy->Find("relu [1,8] -> [1,8] @default"), 2.5);
  // A damaged text is an error naming it, whatever copy there is.
  {
    std::ofstream out(text_path, std::ios::trunc);
    out << "header { magic: \"verisub-cost-table\" schema_version: 1 threads: 1 }\n"
        << "entries { key: \"relu\" time_us: -1 runs: 1 }\n";
  }
  auto damaged_text = CostTable::Load(text_path, parsed.string());
  ASSERT_FALSE(damaged_text.ok());
  EXPECT_NE(damaged_text.status().message().find(text_path), std::string::npos)
      << damaged_text.status().message();
}

TEST_F(CostTableTest, DamagedTablesAreRefusedNamingTheFault) {
  const std::string good = CostTable(Header()).Serialize();
  struct Case {
    std::string text, expect;
  };
  std::string with_entry = good + "entries { key: \"k\" time_us: 1 runs: 1 }\n";
  std::vector<Case> cases = {
      {"not a table {", "does not parse"},
      {"header { magic: \"other\" schema_version: 1 threads: 1 }", "not a verisub cost table"},
      {"header { magic: \"verisub-cost-table\" schema_version: 7 threads: 1 }", "schema 7"},
      {"header { magic: \"verisub-cost-table\" schema_version: 1 threads: 0 }", "threads"},
      {good + "entries { key: \"\" time_us: 1 }", "entry 1: empty key"},
      {good + "entries { key: \"k\" time_us: -1 }", "time_us must be finite"},
      {good + "entries { key: \"k\" time_us: nan }", "time_us must be finite"},
      {good + "entries { key: \"k\" time_us: 0 }", "time_us must be finite"},
      {good + "entries { key: \"k\" time_us: 1e300 }", "an hour"},
      {with_entry + "entries { key: \"k\" time_us: 2 }", "entry 2: key 'k' appears twice"},
      // Out of order (hand-edited), the repeat not next to the first.
      {with_entry + "entries { key: \"a\" time_us: 2 } entries { key: \"k\" time_us: 3 }",
       "entry 3: key 'k' appears twice"},
  };
  for (const Case& c : cases) {
    auto t = CostTable::Parse(c.text, "damaged.txt");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_NE(t.status().message().find("damaged.txt"), std::string::npos) << t.status().message();
    EXPECT_NE(t.status().message().find(c.expect), std::string::npos) << t.status().message();
  }
  EXPECT_TRUE(CostTable::Parse(with_entry, "ok.txt").ok());
  auto missing = CostTable::Load((dir_ / "none.txt").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("none.txt"), std::string::npos);
}

// Tables are written sorted; one edited by hand out of order reads the same.
TEST_F(CostTableTest, UnsortedTextReadsAsTheSortedTable) {
  CostTable a(Header());
  a.Insert("b", 2, 1);
  a.Insert("a", 1, 1);
  a.Insert("c", 3, 1);
  const std::string text = CostTable(Header()).Serialize() +
                           "entries { key: \"c\" time_us: 3 runs: 1 }\n"
                           "entries { key: \"a\" time_us: 1 runs: 1 }\n"
                           "entries { key: \"b\" time_us: 2 runs: 1 }\n";
  auto t = CostTable::Parse(text, "unsorted.txt");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->size(), 3);
  EXPECT_EQ(t->Find("a"), 1);
  EXPECT_EQ(t->Find("c"), 3);
  EXPECT_EQ(t->Serialize(), a.Serialize());
}

TEST_F(CostTableTest, SaveMergesWithTheSameMachineOnly) {
  const std::string path = (dir_ / "t.txt").string();
  CostTable first(Header());
  first.Insert("a", 1, 1);
  first.Insert("b", 2, 1);
  ASSERT_TRUE(first.Save(path).ok());
  CostTable second(Header());
  second.Insert("b", 3, 1);  // ours wins for a key both have
  second.Insert("c", 4, 1);
  ASSERT_TRUE(second.Save(path).ok());
  auto merged = CostTable::Load(path);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->size(), 3);
  EXPECT_EQ(merged->Find("a"), 1);
  EXPECT_EQ(merged->Find("b"), 3);
  // Another thread count is another machine: its table replaces the file, nothing is mixed.
  CostTable other(Header(2));
  other.Insert("z", 9, 1);
  ASSERT_TRUE(other.Save(path).ok());
  auto replaced = CostTable::Load(path);
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(replaced->size(), 1);
  EXPECT_EQ(replaced->header().threads, 2);
}

TEST(CostTableHeaderTest, FileNameIsPortable) {
  EXPECT_EQ(Header().FileName(), "onednn-2.6.3-r2-avx2-t1-test-cpu-r-9000.costs.txt");
  CostTableHeader older = Header();
  older.backend_revision = 1;
  EXPECT_FALSE(Header().SameMachine(older));
  EXPECT_NE(Header().Describe().find("1 thread, Test CPU"), std::string::npos);
  EXPECT_FALSE(Header().SameMachine(Header(2)));
}

}  // namespace
}  // namespace verisub::runtime

namespace verisub::runtime {
namespace {

// Every stored measurement is announced (outside the table's lock, so the listener may read
// the table), which is how a cost source saves its table while it measures.
TEST(MeasuredTableTest, AnnouncesEveryStoredMeasurement) {
  MeasuredTable m(MissingCost::kMeasure, CostTable(CostTableHeader{}));
  int announced = 0;
  size_t seen = 0;
  m.SetOnMeasured([&] {
    ++announced;
    seen = m.table().size();
  });
  auto measure = [](int* runs) -> StatusOr<double> {
    *runs = 3;
    return 2e-6;
  };
  ASSERT_TRUE(m.Cached("a", measure, 1).ok());
  ASSERT_TRUE(m.Cached("a", measure, 1).ok());  // answered from the table: nothing new
  ASSERT_TRUE(m.Cached("b", measure, 1).ok());
  EXPECT_EQ(announced, 2);
  EXPECT_EQ(seen, 2u);
  auto fails = [](int*) -> StatusOr<double> { return Unimplemented("no kernel"); };
  EXPECT_EQ(*m.Cached("c", fails, 7.5), 7.5);  // estimated, not stored, not announced
  EXPECT_EQ(announced, 2);
}

// An instance missing under kAnalytic is priced from the table's time of the same kernel at the
// nearest other shapes, scaled by the output's size: a batch of 2 from the batch of 1, each
// layout from its own measurement (the layout DP's choice between them survives); parameter
// lists are not shapes; a kernel never timed at any shape gets the analytic estimate.
TEST(MeasuredTableTest, MissingShapesArePricedFromTheNearestMeasuredShape) {
  KeyShapes k =
      SplitKeyShapes("transpose[perm=[0,2,1]] [1,64,56],[]  -> [1,56,64] +relu @out=nchw16c");
  EXPECT_EQ(k.form, "transpose[perm=[0,2,1]] [#3],[#0]  -> [#3] +relu @out=nchw16c");
  EXPECT_EQ(k.dims, (std::vector<int64_t>{1, 64, 56, 1, 56, 64}));
  EXPECT_EQ(k.size, 56.0 * 64);
  EXPECT_EQ(SplitKeyShapes("reorder [2,3] plain->nhwc").size, 6.0);

  const std::string conv = "conv2d[group=1] [1,64,56,56],[64,64,3,3] -> [1,64,56,56]";
  CostTable table{CostTableHeader{}};
  table.Insert(conv + " @out=nchw16c", 100.0, 5);
  table.Insert(conv + " @out=plain", 300.0, 5);
  // Another layer of the same form: further from the batch of 2 than the same layer at batch 1.
  table.Insert("conv2d[group=1] [1,128,28,28],[128,128,3,3] -> [1,128,28,28] @out=nchw16c", 40.0,
               5);
  table.Insert("conv2d[group=1] [1,64,56,56],[64,64,3,3] -> [1,64,56,56] +relu @out=nchw16c", 1.0,
               5);
  MeasuredTable m(MissingCost::kAnalytic, table);
  auto never = [](int*) -> StatusOr<double> { return Unimplemented("not timed under kAnalytic"); };
  const std::string batch2 = "conv2d[group=1] [2,64,56,56],[64,64,3,3] -> [2,64,56,56]";
  EXPECT_DOUBLE_EQ(*m.Cached(batch2 + " @out=nchw16c", never, 7), 200.0);
  EXPECT_DOUBLE_EQ(*m.Cached(batch2 + " @out=plain", never, 7), 600.0);
  EXPECT_DOUBLE_EQ(
      *m.Cached("conv2d[group=1] [2,128,28,28],[128,128,3,3] -> [2,128,28,28] @out=nchw16c", never,
                7),
      80.0);
  EXPECT_EQ(*m.Cached(batch2 + " @out=nhwc", never, 7), 7);  // no nhwc kernel timed: analytic
  EXPECT_EQ(*m.Cached("conv2d[group=2] [2,64,56,56] -> [2,64,56,56]", never, 7), 7);
  EXPECT_EQ(m.stats().estimated, 5);
  EXPECT_EQ(m.stats().scaled, 3);
  EXPECT_EQ(m.table().size(), 4);  // nothing stored

  // Under kMeasure the instance is timed, never scaled.
  MeasuredTable timed(MissingCost::kMeasure, table);
  auto measure = [](int* runs) -> StatusOr<double> {
    *runs = 1;
    return 1e-6;
  };
  EXPECT_DOUBLE_EQ(*timed.Cached(batch2 + " @out=nchw16c", measure, 7), 1.0);
  EXPECT_EQ(timed.stats().scaled, 0);
}

}  // namespace
}  // namespace verisub::runtime
