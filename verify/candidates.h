// Reading and writing candidate dumps: one rule per line in canonical text form (`src => dst`);
// blank lines and lines starting with `#` are skipped.
#pragma once

#include <string>
#include <vector>

#include "ruledb/rule.h"

namespace verisub::verify {

// Errors name the file and line.
StatusOr<std::vector<ruledb::Rule>> ReadCandidates(const std::string& path);
StatusOr<std::vector<ruledb::Rule>> ParseCandidates(const std::string& text,
                                                    const std::string& source_name);

}  // namespace verisub::verify
