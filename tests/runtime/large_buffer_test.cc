// Buffers a backend keeps for a model's life: zeroed, aligned (64 bytes; 2 MiB from 1 MiB, where
// the kernel can back them with huge pages), resident before the first write, writable to the
// last byte, and given back when the last owner lets go.
#include "runtime/large_buffer.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace verisub::runtime {
namespace {

bool AllZero(const void* p, size_t bytes) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < bytes; ++i)
    if (c[i] != 0) return false;
  return true;
}

TEST(LargeBufferTest, SmallBuffersAreZeroedAndAligned) {
  for (size_t bytes : {size_t{1}, size_t{100}, size_t{4096}, size_t{1} << 19}) {
    std::shared_ptr<void> b = NewLargeBuffer(bytes);
    ASSERT_TRUE(b) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % 64, 0u) << bytes;
    EXPECT_TRUE(AllZero(b.get(), bytes)) << bytes;
    std::memset(b.get(), 0xab, bytes);
  }
}

TEST(LargeBufferTest, LargeBuffersAreHugePageAlignedResidentAndUnmappedAtTheEnd) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t bytes = 5 * kHuge + 12345;  // not a multiple of anything
  void* where = nullptr;
  {
    std::shared_ptr<void> b = NewLargeBuffer(bytes);
    ASSERT_TRUE(b);
    where = b.get();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(where) % kHuge, 0u);
    EXPECT_TRUE(AllZero(where, bytes));
    std::memset(where, 0xcd, bytes);  // every byte writable
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> resident((bytes + page - 1) / page);
    ASSERT_EQ(::mincore(where, bytes, resident.data()), 0);
    for (unsigned char r : resident) ASSERT_TRUE(r & 1);
  }
  // Given back: the range is no longer mapped (mincore refuses unmapped memory with ENOMEM).
  unsigned char probe = 0;
  EXPECT_NE(::mincore(where, 4096, &probe), 0);
}

}  // namespace
}  // namespace verisub::runtime
