// The one atomic write and the bounded read: concurrent writers, special files, links, modes,
// missing directories, and interrupted writers leave nothing behind.
#include "base/file_io.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace verisub::base {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("verisub_file_io_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Files in the directory other than `keep` (leftover temporaries).
  std::vector<std::string> Others(const std::string& keep) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename() != keep) out.push_back(e.path().filename().string());
    return out;
  }
  fs::path dir_;
};

// A version is `n` repeated: any mix of two versions or a truncation is detectable.
std::string Version(int v, size_t bytes) {
  std::string tag = "<" + std::to_string(v) + ">";
  std::string s;
  while (s.size() + tag.size() <= bytes) s += tag;
  return s;
}
bool IsOneVersion(const std::string& s, size_t bytes) {
  size_t close = s.find('>');
  if (close == std::string::npos) return false;
  int v = std::stoi(s.substr(1, close - 1));
  return s == Version(v, bytes);
}

TEST_F(FileIoTest, WritesAndReadsBackLeavingNoTemporary) {
  std::string p = (dir_ / "out.bin").string();
  ASSERT_TRUE(WriteFileAtomically(p, std::string("a\0b", 3)).ok());
  auto back = ReadFile(p);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, std::string("a\0b", 3));
  ASSERT_TRUE(WriteFileAtomically(p, "second").ok());
  EXPECT_EQ(*ReadFile(p), "second");
  EXPECT_TRUE(Others("out.bin").empty());
  EXPECT_EQ(RegisteredTempFileCount(), 0);
}

TEST_F(FileIoTest, PiecesAreWrittenInOrderAndAFailedProducerLeavesTheOldFile) {
  std::string p = (dir_ / "pieces.bin").string();
  ASSERT_TRUE(WriteFileAtomically(p, [](const PieceWriter& write) {
                VERISUB_RETURN_IF_ERROR(write("ab"));
                VERISUB_RETURN_IF_ERROR(write(""));
                return write(std::string("c\0d", 3));
              }).ok());
  EXPECT_EQ(*ReadFile(p), std::string("abc\0d", 5));
  Status failed = WriteFileAtomically(p, [](const PieceWriter& write) {
    VERISUB_RETURN_IF_ERROR(write("half of a new version"));
    return DataLoss("the producer stopped");
  });
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.message(), "the producer stopped");
  EXPECT_EQ(*ReadFile(p), std::string("abc\0d", 5));
  EXPECT_TRUE(Others("pieces.bin").empty());
  EXPECT_EQ(RegisteredTempFileCount(), 0);
}

// A file past 8 MiB is written in aligned chunks with O_DIRECT where the file system allows it
// (as usual where not), in pieces of any size: every byte lands in order, at every boundary (the
// switch at 8 MiB, whole chunks, a partial last one, a piece spanning two chunks), and a second
// version replaces the first whole.
TEST_F(FileIoTest, LargeFilesReadBackExactlyWhateverThePieces) {
  const std::string p = (dir_ / "large.bin").string();
  for (const size_t total : {size_t{8} << 20, (size_t{8} << 20) + 1, (size_t{25} << 20) + 12345}) {
    std::string contents(total, '\0');
    uint64_t x = total;
    for (char& c : contents) c = static_cast<char>((x = x * 6364136223846793005ull + 1) >> 56);
    const std::vector<size_t> sizes = {3, size_t{1} << 20, 4093, (size_t{9} << 20) + 7, 1};
    ASSERT_TRUE(WriteFileAtomically(p, [&](const PieceWriter& write) {
                  size_t at = 0;
                  for (size_t k = 0; at < contents.size(); ++k) {
                    const size_t n = std::min(sizes[k % sizes.size()], contents.size() - at);
                    VERISUB_RETURN_IF_ERROR(write(std::string_view(contents).substr(at, n)));
                    at += n;
                  }
                  return Status::Ok();
                }).ok());
    auto back = ReadFile(p);
    ASSERT_TRUE(back.ok());
    ASSERT_EQ(back->size(), total);
    EXPECT_TRUE(*back == contents) << total;
  }
  EXPECT_TRUE(Others("large.bin").empty());
}

TEST_F(FileIoTest, MappedFileReadsTheFileAndReleasedOrPopulatedPagesReadTheSame) {
  std::string contents;
  for (int i = 0; contents.size() < (size_t{1} << 20); ++i) contents += std::to_string(i) + ",";
  const std::string p = (dir_ / "mapped.bin").string();
  ASSERT_TRUE(WriteFileAtomically(p, contents).ok());
  auto m = MappedFile::Open(p);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), contents.size());
  const char* data = static_cast<const char*>(m->data());
  EXPECT_EQ(std::string(data, m->size()), contents);
  // Released pages (and ranges reaching outside the mapping) read the file again.
  m->Release(data + 100, 300000);
  m->Release(data, 8192);
  m->Release(data + m->size() - 10, 100000);
  EXPECT_EQ(std::string(data, m->size()), contents);
  // Populated ranges read the same, those reaching outside the mapping included.
  m->Populate(data + 5000, 200000);
  m->Populate(data + m->size() - 10, 100000);
  EXPECT_EQ(std::string(data, m->size()), contents);
  EXPECT_FALSE(MappedFile::Open((dir_ / "missing").string()).ok());
}

TEST_F(FileIoTest, NewFileGetsTheUmaskModeNotMkstemps0600) {
  std::string p = (dir_ / "new.bin").string();
  mode_t old = ::umask(022);
  Status st = WriteFileAtomically(p, "x");
  ::umask(old);
  ASSERT_TRUE(st.ok());
  struct stat s;
  ASSERT_EQ(::stat(p.c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 0777, 0644u);
}

TEST_F(FileIoTest, ConcurrentThreadsNeverCorruptTheFile) {
  const std::string p = (dir_ / "shared.bin").string();
  const size_t kBytes = 64 << 10;
  std::atomic<bool> stop{false};
  std::atomic<int> bad_reads{0}, reads{0};
  std::thread reader([&] {
    while (!stop) {
      auto s = ReadFile(p);
      if (!s.ok()) continue;  // not written yet
      ++reads;
      if (!IsOneVersion(*s, kBytes)) ++bad_reads;
    }
  });
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i)
        if (!WriteFileAtomically(p, Version(t * 1000 + i, kBytes)).ok()) ++failures;
    });
  for (std::thread& w : writers) w.join();
  stop = true;
  reader.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(bad_reads, 0) << "of " << reads << " reads";
  EXPECT_TRUE(IsOneVersion(*ReadFile(p), kBytes));
  EXPECT_TRUE(Others("shared.bin").empty());
}

TEST_F(FileIoTest, ConcurrentProcessesNeverCorruptTheFile) {
  // The reported failure: two verisub-opt runs with the same -o (one fixed temporary name).
  const std::string p = (dir_ / "shared.bin").string();
  const size_t kBytes = 256 << 10;
  std::vector<pid_t> kids;
  for (int k = 0; k < 3; ++k) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int bad = 0;
      for (int i = 0; i < 30; ++i) {
        if (!WriteFileAtomically(p, Version(k * 1000 + i, kBytes)).ok()) ++bad;
        auto s = ReadFile(p);
        if (!s.ok() || !IsOneVersion(*s, kBytes)) ++bad;
      }
      ::_exit(bad == 0 ? 0 : 1);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_TRUE(IsOneVersion(*ReadFile(p), kBytes));
  EXPECT_TRUE(Others("shared.bin").empty());
}

TEST_F(FileIoTest, DevNullStaysACharacterDevice) {
  ASSERT_TRUE(WriteFileAtomically("/dev/null", "model bytes").ok());
  struct stat s;
  ASSERT_EQ(::stat("/dev/null", &s), 0);
  EXPECT_TRUE(S_ISCHR(s.st_mode));
}

TEST_F(FileIoTest, DevFullReportsTheWriteError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  Status st = WriteFileAtomically("/dev/full", "x");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/dev/full"), std::string::npos) << st.message();
  struct stat s;
  ASSERT_EQ(::stat("/dev/full", &s), 0);
  EXPECT_TRUE(S_ISCHR(s.st_mode));
}

TEST_F(FileIoTest, FifoIsWrittenInPlace) {
  std::string p = (dir_ / "pipe").string();
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = *ReadFile(p); });
  ASSERT_TRUE(WriteFileAtomically(p, "through the pipe").ok());
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  struct stat s;
  ASSERT_EQ(::lstat(p.c_str(), &s), 0);
  EXPECT_TRUE(S_ISFIFO(s.st_mode));
}

TEST_F(FileIoTest, SymbolicLinkIsKeptAndItsTargetsModeToo) {
  fs::create_directories(dir_ / "real");
  std::string target = (dir_ / "real" / "model.onnx").string();
  ASSERT_TRUE(WriteFileAtomically(target, "old").ok());
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  std::string link = (dir_ / "link.onnx").string();
  fs::create_symlink("real/model.onnx", link);  // relative, resolved from the link's directory
  ASSERT_TRUE(WriteFileAtomically(link, "new").ok());
  struct stat s;
  ASSERT_EQ(::lstat(link.c_str(), &s), 0);
  EXPECT_TRUE(S_ISLNK(s.st_mode));
  EXPECT_EQ(Slurp(target), "new");
  ASSERT_EQ(::stat(target.c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 07777, 0600u);
  EXPECT_EQ(fs::read_symlink(link), "real/model.onnx");
}

TEST_F(FileIoTest, DanglingLinkCreatesItsTarget) {
  std::string link = (dir_ / "link").string();
  fs::create_symlink(dir_ / "made", link);
  ASSERT_TRUE(WriteFileAtomically(link, "x").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(Slurp(dir_ / "made"), "x");
}

TEST_F(FileIoTest, ExistingModeIsKept) {
  std::string p = (dir_ / "secret").string();
  ASSERT_TRUE(WriteFileAtomically(p, "1").ok());
  ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomically(p, "2").ok());
  struct stat s;
  ASSERT_EQ(::stat(p.c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 07777, 0600u);
}

TEST_F(FileIoTest, MissingDirectoryIsRefusedAndNotCreated) {
  std::string p = (dir_ / "no" / "such" / "out.onnx").string();
  Status st = WriteFileAtomically(p, "x");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("no directory"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(dir_ / "no"));
  EXPECT_EQ(CheckOutputPath(p).code(), StatusCode::kNotFound);
  EXPECT_TRUE(CheckOutputPath((dir_ / "fine").string()).ok());
}

TEST_F(FileIoTest, DirectoryIsRefused) {
  Status st = WriteFileAtomically(dir_.string(), "x");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("directory"), std::string::npos) << st.message();
  EXPECT_FALSE(CheckOutputPath(dir_.string()).ok());
  EXPECT_TRUE(fs::is_directory(dir_));
}

TEST_F(FileIoTest, ReadRefusesDirectoriesMissingFilesAndOversizedFiles) {
  EXPECT_EQ(ReadFile((dir_ / "none").string()).status().code(), StatusCode::kNotFound);
  auto d = ReadFile(dir_.string());
  EXPECT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("is a directory"), std::string::npos);
  std::string p = (dir_ / "big").string();
  ASSERT_TRUE(WriteFileAtomically(p, std::string(1000, 'x')).ok());
  EXPECT_TRUE(ReadFile(p, 1000).ok());
  auto big = ReadFile(p, 999);
  EXPECT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("limit"), std::string::npos);
}

TEST_F(FileIoTest, RegistryRemovesRegisteredFilesAndFreesSlots) {
  std::string p = (dir_ / "t").string();
  std::ofstream(p) << "x";
  int slot = RegisterTempFile(p.c_str());
  ASSERT_GE(slot, 0);
  EXPECT_EQ(RegisteredTempFileCount(), 1);
  RemoveRegisteredTempFiles();
  EXPECT_FALSE(fs::exists(p));
  UnregisterTempFile(slot);
  EXPECT_EQ(RegisteredTempFileCount(), 0);
}

// A child writes large files in a loop with the cleanup handlers installed; it is killed while a
// temporary file exists. Nothing but complete versions may remain.
TEST_F(FileIoTest, InterruptedWriterLeavesNoTemporary) {
  const std::string p = (dir_ / "out.bin").string();
  const size_t kBytes = 16 << 20;
  for (int sig : {SIGTERM, SIGINT}) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      InstallTempFileCleanup();
      for (int i = 0;; ++i) (void)WriteFileAtomically(p, Version(i, kBytes));
    }
    bool seen = false;
    for (int i = 0; i < 20000 && !seen; ++i) {
      seen = !Others("out.bin").empty();
      if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    EXPECT_TRUE(seen);
    ::kill(pid, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig);
    EXPECT_TRUE(Others("out.bin").empty()) << Others("out.bin").front();
    if (fs::exists(p)) {
      EXPECT_TRUE(IsOneVersion(Slurp(p), kBytes));
    }
  }
}

}  // namespace
}  // namespace verisub::base
