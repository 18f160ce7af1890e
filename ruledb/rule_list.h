// Plain rule lists: one canonical rule per line, blank lines and `#` comments ignored. The
// generator's candidate dumps, the verifier's input and hand-written rule fixtures use it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ruledb/rule.h"

namespace verisub::ruledb {

// Each rule is parsed (ParseRule) and validated (ValidateRule); surrounding whitespace on a line
// is ignored. Errors name `source` and the line. Rules carry no proof record (kUnchecked).
StatusOr<std::vector<Rule>> ParseRuleList(std::string_view text, const std::string& source);

// The line walk of such lists, for formats that extend them: calls `on_line` with each line that
// is neither blank nor a `#` comment, trimmed of surrounding whitespace, in order; stops at the
// first error, which gets the context `source:line`.
Status ForEachListLine(std::string_view text, const std::string& source,
                       const std::function<Status(std::string_view line)>& on_line);

}  // namespace verisub::ruledb
