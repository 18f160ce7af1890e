// Page advice: populated pages are resident, dropped pages are not and read back as zeros,
// ranges are rounded inward to whole pages.
#include "base/page_advice.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace verisub::base {
namespace {

class PageAdviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    page_ = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    bytes_ = 64 * page_;
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    data_ = static_cast<char*>(p);
  }
  void TearDown() override { ::munmap(data_, bytes_); }
  // Pages of the buffer that are resident now.
  std::vector<bool> Resident() const {
    std::vector<unsigned char> v(bytes_ / page_);
    EXPECT_EQ(::mincore(data_, bytes_, v.data()), 0);
    std::vector<bool> out;
    for (unsigned char c : v) out.push_back(c & 1);
    return out;
  }
  size_t page_ = 0, bytes_ = 0;
  char* data_ = nullptr;
};

TEST_F(PageAdviceTest, PopulateWriteMapsWholePagesInsideTheRange) {
  for (bool r : Resident()) ASSERT_FALSE(r);  // fresh anonymous memory: nothing mapped yet
  // From the middle of page 2 to the middle of page 10: pages 3..9 are whole.
  AdvisePages(data_ + 2 * page_ + 7, 8 * page_, PageAdvice::kPopulateWrite);
  const std::vector<bool> resident = Resident();
  if (!resident[3]) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14+)";
  for (size_t i = 0; i < resident.size(); ++i)
    EXPECT_EQ(resident[i], i >= 3 && i <= 9) << "page " << i;
}

TEST_F(PageAdviceTest, DontNeedDropsWholePagesOnly) {
  std::memset(data_, 7, bytes_);
  AdvisePages(data_ + page_ / 2, 4 * page_, PageAdvice::kDontNeed);  // pages 1..3 whole
  EXPECT_EQ(data_[0], 7);                                            // page 0: partly covered
  EXPECT_EQ(data_[page_], 0);        // dropped anonymous pages read back as zeros
  EXPECT_EQ(data_[3 * page_], 0);
  EXPECT_EQ(data_[4 * page_], 7);    // page 4: partly covered
  // Advice on nothing, or on less than a page, changes nothing and does not fail.
  AdvisePages(nullptr, 100, PageAdvice::kDontNeed);
  AdvisePages(data_ + 5 * page_ + 1, page_ - 2, PageAdvice::kDontNeed);
  EXPECT_EQ(data_[5 * page_ + 1], 7);
  AdvisePages(data_, bytes_, PageAdvice::kHugePages);  // advice only
  EXPECT_EQ(data_[10 * page_], 7);
}

}  // namespace
}  // namespace verisub::base
