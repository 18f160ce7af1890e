// `verisub-rules`: inspect rule database files (stats, dump, diff, check).
#pragma once

#include <functional>
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

// Checks schema version, integrity digest, op-set fingerprint and proof status; returns the
// report and sets *ok to whether everything is in order.
std::string CheckRuleDatabase(const RuleDatabase& db, bool* ok);

// What `check --reprove` needs from outside ruledb: decides every rule again, overwriting its
// proof record, and returns a one-line summary. The program supplies it (verisub-rules links
// the verifier; the runtime half, which links ruledb, never does).
using ReproveFn = std::function<StatusOr<std::string>(std::vector<Rule>* rules)>;

// Re-proves the rules of `db` that claim a proof; every one must be proved again. Returns the
// report and sets *ok.
std::string ReproveRuleDatabase(const RuleDatabase& db, const ReproveFn& reprove, bool* ok);

// Runs `verisub-rules ARGS...` (args exclude the program name); output goes to *out, errors
// and warnings to *err. Returns the exit code: 0 ok, 1 a check failed or a file could not be
// read, 2 usage error. `reprove` serves `check --reprove` (refused when empty).
int RunRulesTool(const std::vector<std::string>& args, std::string* out, std::string* err,
                 const ReproveFn& reprove = {});

}  // namespace verisub::ruledb
