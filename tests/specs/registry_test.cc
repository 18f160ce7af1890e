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
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumOpKinds));
}

TEST(RegistryTest, FingerprintIsStableAndCoversAxioms) {
  EXPECT_EQ(OpSetFingerprint(), OpSetFingerprint());
  EXPECT_EQ(OpSetFingerprintHex().size(), 16u);
  std::string d = DescribeOp(*FindOp("matmul"));
  EXPECT_NE(d.find("matmul_assoc"), std::string::npos);
  EXPECT_NE(d.find("activation {none,relu,sigmoid,tanh}"), std::string::npos);
}

TEST(RegistryTest, FingerprintLeavesLayoutsOut) {
  const OpSpec& conv = *FindOp("conv2d");
  ASSERT_FALSE(conv.layouts.layouts.empty());
  EXPECT_EQ(DescribeOp(conv).find("layout"), std::string::npos);
  EXPECT_EQ(DescribeOp(conv).find("nchw"), std::string::npos);
}

TEST(RegistryTest, EveryOperatorIsRegisteredInListOrder) {
  int i = 0;
#define VERISUB_EXPECT_LISTED(op, file)                               \
  EXPECT_EQ(static_cast<int>(GetOp(OpKind::k##op).kind), i) << #file; \
  EXPECT_EQ(GetOp(OpKind::k##op).name, #file);                        \
  ++i;
  VERISUB_FOR_EACH_OP(VERISUB_EXPECT_LISTED)
#undef VERISUB_EXPECT_LISTED
  EXPECT_EQ(i, kNumOpKinds);
}

}  // namespace
}  // namespace verisub::specs
