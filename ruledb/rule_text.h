// The one parser of rule text, `src => dst [where ?x:R ...]` with each side one or more terms
// joined by `;`, before any operator is looked up: ParseRule builds a rule against the operator
// registry from it, the database text form a protobuf message without the registry.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "specs/term.h"

namespace verisub::ruledb {

struct RuleTextAst {
  std::vector<specs::TermAst> src, dst;  // one term per output
  // Input name (`?a`) -> index, numbered by first appearance in the source, then the target.
  std::map<std::string, int> inputs;
  int src_inputs = 0;  // inputs the source names: indices 0 .. src_inputs-1
  // One rank per input index when the text has a where clause.
  std::optional<std::vector<int>> input_ranks;
};

// Errors name the side and output and give the column within the side.
StatusOr<RuleTextAst> ParseRuleTextAst(std::string_view text);

}  // namespace verisub::ruledb
