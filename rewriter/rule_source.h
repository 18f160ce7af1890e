// Where rules come from: the shipped rules database (ruledb's protobuf file or its text form,
// with proof records), or a plain list of canonical rules, one per line (`#` comments; no proof
// records) for tests and development. Callers only see LoadRules(path).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ruledb/rule.h"

namespace verisub::rewriter {

// Default rules file for verisub-opt, relative to the repository (or working directory).
inline constexpr const char* kDefaultRulesPath = "data/rules/taso.pb";

// A file or folder shipped with verisub, by its path in the source tree ("data/costs"): that
// path under the working directory, under the source tree of the executable's build folder, the
// installed share/verisub/ (for data/), or the source tree this was built from; "" when none
// exists.
std::string FindShippedPath(const std::string& relative);

// Where the shipped database is when no --rules is given: kDefaultRulesPath in the working
// directory, else beside the running executable's tree (`<exe>/../../data/rules/taso.pb` in a
// build directory inside the checkout, `<exe>/../share/verisub/rules/taso.pb` installed), else
// in the source tree this was built from. kDefaultRulesPath when none exists (LoadRules then
// reports it missing).
std::string FindDefaultRules();

// Parses rules text: one rule per line, blank lines and lines starting with '#' ignored. Every
// rule gets ProofStatus::kUnchecked (text carries no proof record). Errors name `source` and
// the line.
StatusOr<std::vector<ruledb::Rule>> ParseRulesText(std::string_view text,
                                                   const std::string& source);

// Reads a rules file: a rules database through ruledb::LoadRuleDatabase (errors name the file
// and rule), otherwise a plain list through ParseRulesText. A missing file is NotFound with the
// path in the message.
StatusOr<std::vector<ruledb::Rule>> LoadRules(const std::string& path);

}  // namespace verisub::rewriter
