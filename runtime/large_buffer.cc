// AdviseHugePages (see large_buffer.h).
#include "runtime/large_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace verisub::runtime {

void AdviseHugePages(const void* p, size_t bytes) {
  constexpr size_t kMinBytes = size_t{4} << 20;
  if (bytes < kMinBytes) return;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  if (end > begin)  // advice only: where it is refused (no THP), nothing changes
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace verisub::runtime
