// Large buffers filled at once (weights decoded, transposed): mapped in one call before the
// write, on the kernel's huge pages where it grants them (base/page_advice.h).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace verisub::runtime {

// Prepares `bytes` at `p`, allocated but not yet touched, for a write of all of it: huge pages
// asked for from 4 MiB (THP "madvise" mode, the common default), every page mapped in one call
// from 128 KiB (smaller buffers come from malloc's heap, mostly mapped already). Every first
// touch of a 4 KiB page is a fault; see base/page_advice.h for what each costs.
void PrepareLargeWrite(const void* p, size_t bytes);

// Resizes an empty vector to `n` elements for a large write (a weight decoded or transposed):
// allocated, prepared as above, then filled.
template <class T>
void ResizeForLargeWrite(std::vector<T>* v, size_t n) {
  v->reserve(n);
  PrepareLargeWrite(v->data(), n * sizeof(T));
  v->resize(n);
}

// A zeroed, 64-byte aligned buffer a backend keeps for the model's life (weights reordered at
// prepare, planned activations). From 1 MiB it is mapped on its own, 2 MiB-aligned, on the
// kernel's huge pages where it grants them, every page mapped now: a model's weights streamed on
// 4 KiB pages cost a TLB walk per page on every run, and on the development VM (THP in "madvise"
// mode) VGG-11's 507 MB of weights took 1.7 s to reorder into fresh 4 KiB pages at prepare,
// 0.14 s on huge pages, and ran 40% slower alternating with a second prepared copy.
std::shared_ptr<void> NewLargeBuffer(size_t bytes);

}  // namespace verisub::runtime
