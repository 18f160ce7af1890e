// The one atomic write, the one bounded read, and the temporary-file cleanup registry.
#include "base/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "base/page_advice.h"

namespace verisub::base {
namespace {

std::string ErrnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

// ---- The cleanup registry --------------------------------------------------------------------
// A slot is free (0), being filled (1) or holding a path the handler may remove (2). Only the
// 0 -> 1 claim needs a compare-and-swap; the handler reads slots in state 2 and calls unlink,
// which is async-signal-safe. std::atomic<int> is lock-free on every platform we build for.
enum SlotState : int { kFree = 0, kFilling = 1, kReady = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
Slot g_slots[kTempFileSlots];  // NOLINT: read by a signal handler, so it must be static storage
static_assert(std::atomic<int>::is_always_lock_free);

// The directory part of a path ("." when it has none) and the last component.
std::string DirName(const std::string& p) {
  size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}
std::string BaseName(const std::string& p) {
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Follows symbolic links from `path` to the file they name (which may not exist yet).
StatusOr<std::string> ResolveLinks(const std::string& path) {
  std::string p = path;
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return p;
      return InvalidArgument("cannot write '" + path + "': " + ErrnoText(errno));
    }
    if (!S_ISLNK(st.st_mode)) return p;
    char buf[PATH_MAX];
    ssize_t n = ::readlink(p.c_str(), buf, sizeof(buf) - 1);
    if (n < 0) return InvalidArgument("cannot write '" + path + "': " + ErrnoText(errno));
    std::string target(buf, static_cast<size_t>(n));
    p = (!target.empty() && target[0] == '/') ? target : DirName(p) + "/" + target;
  }
  return InvalidArgument("cannot write '" + path + "': too many levels of symbolic links");
}

Status WriteAll(int fd, std::string_view contents, const std::string& what) {
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return DataLoss("cannot write '" + what + "': " + ErrnoText(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

using Producer = std::function<Status(const PieceWriter&)>;

// The pieces of a new regular file. Its first kDirectFrom bytes are written as usual; the rest
// goes through an aligned buffer in whole chunks written with O_DIRECT, the last partial chunk
// as usual again. A large file (a model's weights) then never passes through fresh page-cache
// pages: on a paravirtualized guest each first touch of one is a hypervisor fault, and writing
// VGG-16's 553 MB took 0.34-1.5 s by the hour where the disk takes 0.3 s. Where the file system
// refuses O_DIRECT (tmpfs, some overlays) every byte is written as usual.
class FileSink {
 public:
  static constexpr uint64_t kDirectFrom = uint64_t{8} << 20;
  static constexpr size_t kChunk = size_t{8} << 20;

  FileSink(int fd, const std::string& path) : fd_(fd), path_(path) {}
  ~FileSink() { std::free(buf_); }

  Status Write(std::string_view piece) {
    while (!piece.empty()) {
      if (plain_ || written_ < kDirectFrom) {
        size_t n = piece.size();
        if (!plain_) n = static_cast<size_t>(std::min<uint64_t>(n, kDirectFrom - written_));
        VERISUB_RETURN_IF_ERROR(WriteAll(fd_, piece.substr(0, n), path_));
        written_ += n;
        piece.remove_prefix(n);
        continue;
      }
      if (!buf_ && ::posix_memalign(&buf_, 4096, kChunk) != 0) {
        buf_ = nullptr;
        plain_ = true;
        continue;
      }
      const size_t n = std::min(piece.size(), kChunk - used_);
      std::memcpy(static_cast<char*>(buf_) + used_, piece.data(), n);
      used_ += n;
      piece.remove_prefix(n);
      if (used_ == kChunk) VERISUB_RETURN_IF_ERROR(Flush(true));
    }
    return Status::Ok();
  }

  // Writes what is left in the buffer (as usual: a partial chunk).
  Status Finish() { return used_ > 0 ? Flush(false) : Status::Ok(); }

 private:
  // Writes the buffer at the file's end (a multiple of 4 KiB from kDirectFrom on), directly
  // where `direct` and the file system allow it; what a direct write refuses (EINVAL: not for
  // this file system) or leaves undone is written as usual, and so is everything after it.
  Status Flush(bool direct) {
    direct = SetDirect(direct);
    size_t done = 0;
    if (direct) {
      const ssize_t n = ::write(fd_, buf_, used_);
      if (n < 0 && errno != EINVAL && errno != EINTR)
        return DataLoss("cannot write '" + path_ + "': " + ErrnoText(errno));
      done = n > 0 ? static_cast<size_t>(n) : 0;
      if (done < used_) {
        SetDirect(false);
        plain_ = true;
      }
    }
    VERISUB_RETURN_IF_ERROR(WriteAll(
        fd_, std::string_view(static_cast<const char*>(buf_) + done, used_ - done), path_));
    written_ += used_;
    used_ = 0;
    return Status::Ok();
  }

  // Turns O_DIRECT on or off for the file; whether it is on now.
  bool SetDirect(bool on) {
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0) return false;
    const bool is_on = flags & O_DIRECT;
    if (on == is_on) return on;
    return ::fcntl(fd_, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) == 0 ? on : is_on;
  }

  int fd_;
  const std::string& path_;
  void* buf_ = nullptr;
  size_t used_ = 0;       // bytes in the buffer
  uint64_t written_ = 0;  // bytes in the file
  bool plain_ = false;    // every byte as usual from here on
};

Status Produce(int fd, const Producer& produce, const std::string& path) {
  return produce([&](std::string_view piece) { return WriteAll(fd, piece, path); });
}

// A character device or FIFO: written in place (never renamed over).
Status WriteSpecial(const std::string& path, const std::string& target, const Producer& produce) {
  int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return InvalidArgument("cannot write '" + path + "': " + ErrnoText(errno));
  Status st = Produce(fd, produce, path);
  if (::close(fd) != 0 && st.ok())
    st = DataLoss("cannot write '" + path + "': " + ErrnoText(errno));
  return st;
}

// A name no other writer uses: pid, a process-wide counter and the clock.
std::string TempName(const std::string& dir, const std::string& base) {
  static std::atomic<uint64_t> counter{0};
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t mix = (static_cast<uint64_t>(ts.tv_nsec) << 20) ^ static_cast<uint64_t>(ts.tv_sec) ^
                 (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".tmp-%ld-%016llx", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(mix));
  return dir + "/." + base + suffix;
}

// Removes the temporary file and releases its slot when the write does not complete.
class TempFile {
 public:
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!name_.empty() && !committed_) ::unlink(name_.c_str());
    if (slot_ >= 0) UnregisterTempFile(slot_);
  }
  // Creates it exclusively with mode 0666 less the umask, as any new file (mkstemp would give
  // 0600, and reading the umask means changing it).
  Status Create(const std::string& dir, const std::string& base, const std::string& path) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::string name = TempName(dir, base);
      // Registered before it exists: a signal right after the creation must find it.
      int slot = RegisterTempFile(name.c_str());
      int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) {
        fd_ = fd;
        name_ = name;
        slot_ = slot;
        return Status::Ok();
      }
      UnregisterTempFile(slot);
      if (errno != EEXIST)
        return InvalidArgument("cannot write '" + path + "': cannot create a temporary file in '" +
                               dir + "': " + ErrnoText(errno));
    }
    return InternalError("cannot write '" + path + "': no unused temporary name in '" + dir + "'");
  }
  int fd() const { return fd_; }
  const std::string& name() const { return name_; }
  Status Close(const std::string& path) {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return DataLoss("cannot write '" + path + "': " + ErrnoText(errno));
    return Status::Ok();
  }
  void Commit() { committed_ = true; }

 private:
  int fd_ = -1;
  int slot_ = -1;
  std::string name_;
  bool committed_ = false;
};

Status SyncDirectory(const std::string& dir, const std::string& path) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return DataLoss("cannot write '" + path + "': " + ErrnoText(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some file systems cannot sync a directory (EINVAL); the rename itself has been done.
  if (rc != 0 && err != EINVAL)
    return DataLoss("cannot write '" + path + "': sync of '" + dir + "': " + ErrnoText(err));
  return Status::Ok();
}

extern "C" void CleanupHandler(int sig) {
  int saved = errno;
  RemoveRegisteredTempFiles();
  errno = saved;
  // SA_RESETHAND restored the default action: die of the same signal.
  ::raise(sig);
}

}  // namespace

int RegisterTempFile(const char* path) {
  size_t len = std::strlen(path);
  if (len >= PATH_MAX) return -1;
  for (int i = 0; i < kTempFileSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_slots[i].path, path, len + 1);
    g_slots[i].state.store(kReady, std::memory_order_release);
    return i;
  }
  return -1;
}

void UnregisterTempFile(int slot) {
  if (slot >= 0 && slot < kTempFileSlots) g_slots[slot].state.store(kFree);
}

void RemoveRegisteredTempFiles() {
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == kReady) ::unlink(s.path);
}

int RegisteredTempFileCount() {
  int n = 0;
  for (const Slot& s : g_slots) n += s.state.load() == kReady;
  return n;
}

void InstallTempFileCleanup() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = CleanupHandler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

Status CheckOutputDirectory(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return NotFound("no directory '" + dir + "'");
  return Status::Ok();
}

Status CheckOutputPath(const std::string& path) {
  if (path.empty()) return Status::Ok();
  VERISUB_ASSIGN_OR_RETURN(std::string target, ResolveLinks(path));
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return InvalidArgument("cannot write '" + path + "': it is a directory");
  const std::string dir = DirName(target);
  if (!CheckOutputDirectory(dir).ok())
    return NotFound("cannot write '" + path + "': no directory '" + dir + "'");
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  return WriteFileAtomically(path, [&](const PieceWriter& write) { return write(contents); });
}

Status WriteFileAtomically(const std::string& path, const Producer& produce) {
  if (path.empty()) return InvalidArgument("cannot write a file with an empty name");
  VERISUB_ASSIGN_OR_RETURN(std::string target, ResolveLinks(path));
  struct stat st;
  bool exists = ::stat(target.c_str(), &st) == 0;
  if (!exists && errno != ENOENT)
    return InvalidArgument("cannot write '" + path + "': " + ErrnoText(errno));
  if (exists) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return WriteSpecial(path, target, produce);
    if (S_ISDIR(st.st_mode))
      return InvalidArgument("cannot write '" + path + "': it is a directory");
    if (!S_ISREG(st.st_mode))
      return InvalidArgument("cannot write '" + path +
                             "': not a regular file, character device or FIFO");
  }
  const std::string dir = DirName(target);
  if (!CheckOutputDirectory(dir).ok())
    return NotFound("cannot write '" + path + "': no directory '" + dir + "'");

  TempFile tmp;
  VERISUB_RETURN_IF_ERROR(tmp.Create(dir, BaseName(target), path));
  if (exists && ::fchmod(tmp.fd(), st.st_mode & 07777) != 0)
    return DataLoss("cannot write '" + path + "': cannot keep its mode: " + ErrnoText(errno));
  {
    FileSink sink(tmp.fd(), path);
    VERISUB_RETURN_IF_ERROR(produce([&](std::string_view piece) { return sink.Write(piece); }));
    VERISUB_RETURN_IF_ERROR(sink.Finish());
  }
  if (::fsync(tmp.fd()) != 0)
    return DataLoss("cannot write '" + path + "': sync failed: " + ErrnoText(errno));
  VERISUB_RETURN_IF_ERROR(tmp.Close(path));
  if (::rename(tmp.name().c_str(), target.c_str()) != 0)
    return DataLoss("cannot write '" + path + "': rename of '" + tmp.name() +
                    "' failed: " + ErrnoText(errno));
  tmp.Commit();
  return SyncDirectory(dir, path);
}

namespace {

// A file descriptor closed when it goes out of scope.
struct OwnedFd {
  int fd = -1;
  explicit OwnedFd(int f) : fd(f) {}
  OwnedFd(const OwnedFd&) = delete;
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens `path` for reading and stats it, refusing a missing file, a directory and a regular file
// longer than `max_bytes` (ReadFile and MappedFile::Open share these checks and their words).
StatusOr<std::unique_ptr<OwnedFd>> OpenForReading(const std::string& path, uint64_t max_bytes,
                                                  struct stat* st) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(path + ": cannot open");
    return NotFound(path + ": cannot open: " + ErrnoText(errno));
  }
  auto owned = std::make_unique<OwnedFd>(fd);
  if (::fstat(fd, st) != 0) return DataLoss(path + ": " + ErrnoText(errno));
  if (S_ISDIR(st->st_mode)) return InvalidArgument(path + ": is a directory, not a file");
  if (S_ISREG(st->st_mode) && static_cast<uint64_t>(st->st_size) > max_bytes)
    return InvalidArgument(path + ": " + std::to_string(st->st_size) +
                           " bytes, more than the limit of " + std::to_string(max_bytes));
  return owned;
}

}  // namespace

StatusOr<MappedFile> MappedFile::Open(const std::string& path, uint64_t max_bytes) {
  struct stat st;
  auto file = OpenForReading(path, max_bytes, &st);
  if (!file.ok()) return file.status();
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  if (st.st_size == 0) return DataLoss(path + ": empty file");
  const size_t size = static_cast<size_t>(st.st_size);
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, (*file)->fd, 0);
  if (data == MAP_FAILED) return DataLoss(path + ": cannot map: " + ErrnoText(errno));
  return MappedFile(data, size);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

namespace {

// `advice` for the part of [p, p + n) inside the mapping [data, data + size).
void AdviseInside(const void* data, size_t size, const void* p, size_t n, PageAdvice advice) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(data), hi = lo + size;
  const uintptr_t from = std::max(lo, reinterpret_cast<uintptr_t>(p));
  const uintptr_t to = std::min(hi, reinterpret_cast<uintptr_t>(p) + n);
  if (data && to > from) AdvisePages(reinterpret_cast<const void*>(from), to - from, advice);
}

}  // namespace

void MappedFile::Release(const void* p, size_t n) const {
  AdviseInside(data_, size_, p, n, PageAdvice::kDontNeed);
}

void MappedFile::Populate(const void* p, size_t n) const {
  AdviseInside(data_, size_, p, n, PageAdvice::kPopulateRead);
}

StatusOr<std::string> ReadFile(const std::string& path, uint64_t max_bytes) {
  struct stat st;
  auto file = OpenForReading(path, max_bytes, &st);
  if (!file.ok()) return file.status();
  const int fd = (*file)->fd;
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return DataLoss(path + ": read failed: " + ErrnoText(errno));
    }
    if (n == 0) break;
    if (out.size() + static_cast<uint64_t>(n) > max_bytes)
      return InvalidArgument(path + ": more than the limit of " + std::to_string(max_bytes) +
                             " bytes");
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string UserCacheDir() {
  namespace fs = std::filesystem;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "verisub");
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".cache" / "verisub");
  return "";
}

}  // namespace verisub::base
