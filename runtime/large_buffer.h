// Large buffers filled at once (weights decoded, transposed): allocated with the kernel's huge
// pages where it grants them.
#pragma once

#include <cstddef>
#include <vector>

namespace verisub::runtime {

// Asks the kernel to back `bytes` at `p`, allocated but not yet touched, with transparent huge
// pages where it grants them on request (THP "madvise" mode, the common default); small buffers
// are left alone. Every first touch of a 4 KiB page is a fault: on the 2-core development VM
// filling 100 MB of fresh 4 KiB pages took 0.3 s, of huge pages a tenth of that.
void AdviseHugePages(const void* p, size_t bytes);

// Resizes an empty vector to `n` elements for a large write (a weight decoded or transposed):
// allocated, advised as above, then filled.
template <class T>
void ResizeForLargeWrite(std::vector<T>* v, size_t n) {
  v->reserve(n);
  AdviseHugePages(v->data(), n * sizeof(T));
  v->resize(n);
}

}  // namespace verisub::runtime
