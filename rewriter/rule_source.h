// Where rules come from: a text file with one canonical rule per line (`#` comments), until the
// protobuf rules database loader is merged into ruledb/. Callers only see LoadRules(path).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ruledb/rule.h"
#include "specs/status.h"

namespace verisub::rewriter {

// Default rules file for verisub-opt, relative to the working directory.
inline constexpr const char* kDefaultRulesPath = "data/rules/taso.rules";

// Parses rules text: one rule per line, blank lines and lines starting with '#' ignored. Every
// rule gets ProofStatus::kUnchecked (text carries no proof record). Errors name `source` and
// the line.
StatusOr<std::vector<ruledb::Rule>> ParseRulesText(std::string_view text,
                                                   const std::string& source);

// Reads a rules file. Text files are parsed with ParseRulesText; a binary (protobuf) database
// is reported as not yet supported. A missing file is NotFound with the path in the message.
StatusOr<std::vector<ruledb::Rule>> LoadRules(const std::string& path);

}  // namespace verisub::rewriter
