// The one proof-status table: every status round-trips through its text name and its protobuf
// value, and values outside the table are refused, not cast.
#include "ruledb/proof_status.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace verisub::ruledb {
namespace {

constexpr ProofStatus kAll[] = {ProofStatus::kUnchecked, ProofStatus::kProved,
                                ProofStatus::kNotProved, ProofStatus::kUnknown,
                                ProofStatus::kTimeout,   ProofStatus::kError};

TEST(ProofStatusTest, NamesAndProtoValuesRoundTrip) {
  std::set<std::string> names;
  std::set<int> protos;
  for (ProofStatus s : kAll) {
    names.insert(ProofStatusName(s));
    protos.insert(static_cast<int>(ProofStatusToProto(s)));
    EXPECT_EQ(ParseProofStatusName(ProofStatusName(s)), s) << ProofStatusName(s);
    EXPECT_EQ(ProofStatusFromProto(ProofStatusToProto(s)), s) << ProofStatusName(s);
  }
  EXPECT_EQ(names.size(), std::size(kAll));
  EXPECT_EQ(protos.size(), std::size(kAll));
  EXPECT_STREQ(ProofStatusName(ProofStatus::kNotProved), "not_proved");
  EXPECT_EQ(ProofStatusToProto(ProofStatus::kTimeout), v2::PROOF_STATUS_TIMEOUT);
}

TEST(ProofStatusTest, UnknownValuesAreRefused) {
  EXPECT_FALSE(ParseProofStatusName("maybe").has_value());
  EXPECT_FALSE(ParseProofStatusName("").has_value());
  EXPECT_FALSE(ProofStatusFromProto(static_cast<v2::ProofStatus>(99)).has_value());
  EXPECT_FALSE(ProofStatusFromProto(static_cast<v2::ProofStatus>(-1)).has_value());
}

}  // namespace
}  // namespace verisub::ruledb
