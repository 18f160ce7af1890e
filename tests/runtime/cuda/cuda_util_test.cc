// cuBLAS is opened on first use rather than linked (cuda_util.h); opening it and finding every
// function needs no GPU, so this runs on every machine the CUDA code is built on.
#include "runtime/cuda/cuda_util.h"

#include <gtest/gtest.h>

namespace verisub::runtime::cuda_util {
namespace {

TEST(CudaUtilTest, CublasOpensOnFirstUseWithEveryFunction) {
  auto api = Cublas();
  ASSERT_TRUE(api.ok()) << api.status().ToString();
#define VERISUB_EXPECT_LOADED(f) EXPECT_NE((*api)->f, nullptr) << #f;
  VERISUB_CUBLAS_FUNCTIONS(VERISUB_EXPECT_LOADED)
#undef VERISUB_EXPECT_LOADED
  EXPECT_EQ(&LoadedCublas(), *api);  // loaded once
}

}  // namespace
}  // namespace verisub::runtime::cuda_util
