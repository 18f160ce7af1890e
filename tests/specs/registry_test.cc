// The operator registry: names, arities, parameter descriptors and the op-set fingerprint.
#include "specs/registry.h"

#include <gtest/gtest.h>

#include <set>

namespace verisub::specs {
namespace {

TEST(RegistryTest, EveryOperatorIsFoundByName) {
  std::set<std::string> names;
  for (const OpSpec& op : AllOps()) {
    EXPECT_TRUE(names.insert(op.name).second) << op.name;
    ASSERT_EQ(FindOp(op.name), &op);
    EXPECT_EQ(&GetOp(op.kind), &op);
    EXPECT_NE(op.shape_rule, nullptr) << op.name;
    EXPECT_LE(op.num_inputs, kMaxOpInputs);
    EXPECT_LE(op.num_outputs, kMaxOpOutputs);
    std::set<int> slots;
    for (const ParamDesc& d : op.params) {
      EXPECT_TRUE(slots.insert(d.slot).second) << op.name << "." << d.name;
      for (int64_t v : d.domain) {
        Params p;
        p[d.slot] = v;
        EXPECT_TRUE(CheckParamValue(d, p).ok()) << op.name << "." << d.name;
      }
    }
  }
  EXPECT_EQ(FindOp("conv3d"), nullptr);
  EXPECT_EQ(names.size(), 21u);
}

TEST(RegistryTest, FingerprintIsStableAndCoversAxioms) {
  EXPECT_EQ(OpSetFingerprint(), OpSetFingerprint());
  EXPECT_EQ(OpSetFingerprintHex().size(), 16u);
  std::string d = DescribeOp(*FindOp("matmul"));
  EXPECT_NE(d.find("matmul_assoc"), std::string::npos);
  EXPECT_NE(d.find("activation {none,relu,sigmoid,tanh}"), std::string::npos);
}

}  // namespace
}  // namespace verisub::specs
