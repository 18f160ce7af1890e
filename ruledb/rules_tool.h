// `verisub-rules`: inspect rule database files (stats, dump, diff, check).
#pragma once

#include <string>
#include <vector>

#include "ruledb/database.h"

namespace verisub::ruledb {

// Counts by size (operators in source + target), by operator (rules using it), by number of
// outputs and by proof status.
std::string FormatRuleStats(const RuleDatabase& db);

// Rules of `b` not in `a` (`+ id text`) and of `a` not in `b` (`- id text`), by id, sorted by
// id, then a summary line.
std::string FormatRuleDiff(const RuleDatabase& a, const RuleDatabase& b);

// Checks schema version, op-set fingerprint and proof status; returns the report and sets
// *ok to whether everything is in order.
std::string CheckRuleDatabase(const RuleDatabase& db, bool* ok);

// Runs `verisub-rules ARGS...` (args exclude the program name); output goes to *out, errors
// and warnings to *err. Returns the exit code: 0 ok, 1 a check failed or a file could not be
// read, 2 usage error.
int RunRulesTool(const std::vector<std::string>& args, std::string* out, std::string* err);

}  // namespace verisub::ruledb
