// PrepareLargeWrite (see large_buffer.h).
#include "runtime/large_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/page_advice.h"

namespace verisub::runtime {

void PrepareLargeWrite(const void* p, size_t bytes) {
  if (bytes >= (size_t{4} << 20)) base::AdvisePages(p, bytes, base::PageAdvice::kHugePages);
  if (bytes >= (size_t{128} << 10)) base::AdvisePages(p, bytes, base::PageAdvice::kPopulateWrite);
}

std::shared_ptr<void> NewLargeBuffer(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  if (bytes < (size_t{1} << 20)) {
    const size_t n = (bytes + 63) / 64 * 64;  // aligned_alloc wants whole alignments
    void* p = std::aligned_alloc(64, n);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, n);
    return std::shared_ptr<void>(p, std::free);
  }
  // Over-mapped by one huge page, the unaligned head and tail given back.
  const size_t len = (bytes + kHuge - 1) / kHuge * kHuge;
  void* raw =
      ::mmap(nullptr, len + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kHuge - 1) / kHuge * kHuge;
  if (aligned > begin) ::munmap(raw, aligned - begin);
  if (const uintptr_t tail = begin + kHuge - aligned; tail > 0)
    ::munmap(reinterpret_cast<void*>(aligned + len), tail);
  void* p = reinterpret_cast<void*>(aligned);
  base::AdvisePages(p, len, base::PageAdvice::kHugePages);
  base::AdvisePages(p, len, base::PageAdvice::kPopulateWrite);
  return std::shared_ptr<void>(p, [len](void* q) { ::munmap(q, len); });
}

}  // namespace verisub::runtime
