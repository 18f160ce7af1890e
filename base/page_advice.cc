// AdvisePages (see page_advice.h).
#include "base/page_advice.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#ifndef MADV_POPULATE_READ  // Linux 5.14; older headers lack the names, older kernels refuse them
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

namespace verisub::base {

void AdvisePages(const void* p, size_t bytes, PageAdvice advice) {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  if (!p || end <= begin) return;
  int code = MADV_NORMAL;
  switch (advice) {
    case PageAdvice::kHugePages:
      code = MADV_HUGEPAGE;
      break;
    case PageAdvice::kPopulateWrite:
      code = MADV_POPULATE_WRITE;
      break;
    case PageAdvice::kPopulateRead:
      code = MADV_POPULATE_READ;
      break;
    case PageAdvice::kDontNeed:
      code = MADV_DONTNEED;
      break;
  }
  ::madvise(reinterpret_cast<void*>(begin), end - begin, code);
}

}  // namespace verisub::base
