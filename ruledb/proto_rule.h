// Conversion between rules and their protobuf messages (operators and parameters by name).
#pragma once

#include "base/status.h"
#include "ruledb/rule.h"
#include "ruledb/ruledb.pb.h"

namespace verisub::ruledb {

// The message for a rule: canonical node order, every parameter by name, id = r.Id().
v2::Rule RuleToProto(const Rule& r);

// Rebuilds a rule against the current operator set and checks that its canonical text hashes
// to the stored id. Errors: kNotFound when the message names an operator, parameter or
// parameter value the op set does not know (a rule from another op set: callers may skip it);
// kDataLoss for anything else (a corrupt message). Without `check_id` (a file whose digest holds)
// the rule is taken as stored, canonical.
StatusOr<Rule> RuleFromProto(const v2::Rule& p, bool check_id = true);

// The header's integrity digest (schema 3): XXH3-128, 32 hex digits, of the header serialized
// with `digest` empty, then of every rule serialized, in order.
std::string ComputeDatabaseDigest(const v2::RuleDatabase& db);

}  // namespace verisub::ruledb
