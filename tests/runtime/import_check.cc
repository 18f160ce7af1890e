// ImportMappedAndOpaque (import_check.h).
#include "tests/runtime/import_check.h"

#include <gtest/gtest.h>

#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime::testing {

Graph ImportMappedAndOpaque(const std::string& bytes, uint64_t seed,
                            std::vector<HostTensor>* inputs, std::vector<HostTensor>* outputs) {
  auto mapped = ImportOnnxBytes(bytes, "model");
  EXPECT_TRUE(mapped.ok()) << mapped.status().message();
  if (!mapped.ok()) return Graph();
  ImportOptions opaque_only;
  opaque_only.map_to_spec_ops = false;
  auto plain = ImportOnnxBytes(bytes, "model", opaque_only);
  EXPECT_TRUE(plain.ok()) << plain.status().message();
  if (!plain.ok()) return *mapped;
  EXPECT_EQ(CountOpaque(*plain), plain->num_nodes());
  std::vector<HostTensor> in = RandomInputs(*mapped, seed);
  auto a = Execute(*mapped, in);
  auto b = Execute(*plain, in);
  EXPECT_TRUE(a.ok()) << a.status().message();
  EXPECT_TRUE(b.ok()) << b.status().message();
  if (a.ok() && b.ok()) {
    EXPECT_LT(MaxAbsDiff(*a, *b), 1e-5);
  }
  if (inputs) *inputs = std::move(in);
  if (outputs && a.ok()) *outputs = std::move(a).value();
  return *mapped;
}

}  // namespace verisub::runtime::testing
