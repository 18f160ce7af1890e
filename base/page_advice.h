// Advice to the kernel about the pages of a buffer (madvise), rounded inward to whole pages: for
// large buffers filled or read at once (weights decoded from a mapped model file, transposed).
// Advice only: where the kernel refuses it (an older kernel, THP off) nothing changes.
#pragma once

#include <cstddef>

namespace verisub::base {

enum class PageAdvice {
  kHugePages,      // back with transparent huge pages where granted on request (MADV_HUGEPAGE)
  kPopulateWrite,  // map every page now, writable, in one call (MADV_POPULATE_WRITE, Linux 5.14)
  kPopulateRead,   // map every page of a file mapping now, readable (MADV_POPULATE_READ)
  kDontNeed,       // drop the pages from the process (MADV_DONTNEED); a file's stay in its cache
};

// Gives `advice` for the whole pages inside [p, p + bytes). Faulting pages in one by one costs
// a trap each: on the 2-core development VM (a paravirtualized guest) touching 100 MB of fresh
// 4 KiB pages took 0.29-0.31 s, populated first 0.14-0.18 s, in huge pages 0.01-0.16 s.
void AdvisePages(const void* p, size_t bytes, PageAdvice advice);

}  // namespace verisub::base
