// Plain rule lists: one canonical rule per line, blank lines and `#` comments ignored. The
// generator's candidate dumps, the verifier's input and hand-written rule fixtures use it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ruledb/rule.h"

namespace verisub::ruledb {

// Each rule is parsed (ParseRule) and validated (ValidateRule); surrounding whitespace on a line
// is ignored. Errors name `source` and the line. Rules carry no proof record (kUnchecked).
StatusOr<std::vector<Rule>> ParseRuleList(std::string_view text, const std::string& source);

}  // namespace verisub::ruledb
