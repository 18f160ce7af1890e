// File I/O every folder shares: the one atomic write, the one bounded read, the one check of an
// output path, and the registry of temporary files that a program's signal handlers remove.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace verisub::base {

// Replaces the file at `path` with `contents` so that a reader (or a concurrent writer) only ever
// sees a complete old or a complete new version:
// - a regular file or a missing path: a unique temporary file is created in the same directory,
//   written in full, fsync'ed, given the old file's mode (a new file gets 0666 less the umask),
//   renamed over `path`, and the directory fsync'ed; every step is checked, and the temporary
//   file is removed on any error (and, once a program has called InstallTempFileCleanup, on
//   SIGINT/SIGTERM);
// - a symbolic link: the file it points to is replaced as above, the link itself is kept;
// - a character device or a FIFO (/dev/null, /dev/stdout, a pipe): written directly, never
//   renamed over;
// - a directory, a socket or a block device: refused.
// The directory must exist: no directory is ever created.
Status WriteFileAtomically(const std::string& path, std::string_view contents);
// The same with the contents written in pieces: `produce` calls its argument with each piece in
// order, so a large file (an ONNX model's weights) is never assembled in memory. An error from
// `produce` (or from a write, which `produce` must return) leaves `path` as it was; only a
// character device or FIFO may have received part of the contents.
using PieceWriter = std::function<Status(std::string_view piece)>;
Status WriteFileAtomically(const std::string& path,
                           const std::function<Status(const PieceWriter& write)>& produce);

// Whether `path` can be written by WriteFileAtomically: the directory it names exists and `path`
// is not a directory. For tools to check their outputs before a long run rather than after it.
Status CheckOutputPath(const std::string& path);

// Whether `dir` is an existing directory (for tools that write several files into it).
Status CheckOutputDirectory(const std::string& dir);

// verisub's per-user cache folder (measured cost tables, generated kernels):
// $XDG_CACHE_HOME/verisub, else $HOME/.cache/verisub; empty when neither variable is set.
std::string UserCacheDir();

// Reads a whole file, refusing a directory, a missing file and anything longer than `max_bytes`
// (a FIFO or device is read up to the limit). Errors name the file.
inline constexpr uint64_t kDefaultMaxReadBytes = uint64_t{2} << 30;  // protobuf's own limit
StatusOr<std::string> ReadFile(const std::string& path, uint64_t max_bytes = kDefaultMaxReadBytes);

// A regular file mapped read-only into memory (the page cache's copy: no second copy in the
// process), unmapped when destroyed. For parsers of large files (ONNX models) that copy what they
// keep. Refuses what ReadFile refuses, and non-regular files.
class MappedFile {
 public:
  static StatusOr<MappedFile> Open(const std::string& path,
                                   uint64_t max_bytes = kDefaultMaxReadBytes);
  MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();
  const void* data() const { return data_; }
  size_t size() const { return size_; }
  // Drops the pages of [p, p + n) (whole pages inside it, inside the mapping) from the process's
  // memory once a reader is done with them: they stay in the page cache, and reading them again
  // faults them back in. For importers that copy a large file's parts out one by one.
  void Release(const void* p, size_t n) const;
  // Maps the pages of [p, p + n) in one call before a reader goes through all of them, instead
  // of a fault every few pages.
  void Populate(const void* p, size_t n) const;

 private:
  MappedFile(void* data, size_t size) : data_(data), size_(size) {}
  void* data_;
  size_t size_;
};

// The registry of temporary files being written (for WriteFileAtomically's callers only through
// that function). A fixed table of path slots, each guarded by an atomic state, so that a signal
// handler can walk it without locks or allocation. Library code never installs handlers: a
// program's main calls InstallTempFileCleanup once.
inline constexpr int kTempFileSlots = 64;
// Registers a path; returns its slot, or -1 when the table is full or the path too long (the
// write then goes on, only without removal on a signal).
int RegisterTempFile(const char* path);
void UnregisterTempFile(int slot);
// Removes every registered file; async-signal-safe (unlink only).
void RemoveRegisteredTempFiles();
// How many files are registered now (tests).
int RegisteredTempFileCount();

// For a program's main: on SIGINT, SIGTERM and SIGHUP, removes the registered temporary files,
// then dies of the same signal (default action re-raised), so the exit status still says which.
void InstallTempFileCleanup();

}  // namespace verisub::base
