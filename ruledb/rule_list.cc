// Plain rule lists.
#include "ruledb/rule_list.h"

namespace verisub::ruledb {

Status ForEachListLine(std::string_view text, const std::string& source,
                       const std::function<Status(std::string_view line)>& on_line) {
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") + 1 - first);
    Status st = on_line(line);
    if (!st.ok()) return st.WithContext(source + ":" + std::to_string(line_no));
  }
  return Status::Ok();
}

StatusOr<std::vector<Rule>> ParseRuleList(std::string_view text, const std::string& source) {
  std::vector<Rule> rules;
  Status st = ForEachListLine(text, source, [&](std::string_view line) {
    auto rule = ParseRule(line);
    if (!rule.ok()) return rule.status();
    VERISUB_RETURN_IF_ERROR(ValidateRule(*rule));
    rules.push_back(std::move(*rule));
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return rules;
}

}  // namespace verisub::ruledb
