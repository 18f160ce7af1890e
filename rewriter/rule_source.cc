// Where rules come from: the rules database (protobuf or text form) or a plain list of rules.
#include "rewriter/rule_source.h"

#include <fstream>
#include <sstream>

#include "ruledb/database.h"

namespace verisub::rewriter {

StatusOr<std::vector<ruledb::Rule>> ParseRulesText(std::string_view text,
                                                   const std::string& source) {
  std::vector<ruledb::Rule> rules;
  size_t pos = 0;
  int line_no = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') {
      if (end == text.size()) break;
      continue;
    }
    size_t last = line.find_last_not_of(" \t\r");
    line = line.substr(first, last - first + 1);
    auto rule = ruledb::ParseRule(line);
    if (!rule.ok()) return rule.status().WithContext(source + ":" + std::to_string(line_no));
    Status valid = ruledb::ValidateRule(*rule);
    if (!valid.ok()) return valid.WithContext(source + ":" + std::to_string(line_no));
    rules.push_back(std::move(rule).value());
    if (end == text.size()) break;
  }
  return rules;
}

StatusOr<std::vector<ruledb::Rule>> LoadRules(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return NotFound("rules file '" + path +
                    "' cannot be opened (pass --rules PATH, e.g. a text file with one rule per "
                    "line)");
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string bytes = buf.str();
  bool plain_text = !ruledb::IsTextForm(bytes);
  for (unsigned char c : bytes)
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') plain_text = false;
  if (plain_text) return ParseRulesText(bytes, path);
  // A rules database (protobuf or its text form): schema, op set and ids are checked on load;
  // unproved rules are kept here so that RuleSet::Compile counts them (and --allow-unproved
  // can use them).
  ruledb::LoadOptions options;
  options.proved_only = false;
  auto db = ruledb::LoadRuleDatabase(path, options);
  if (!db.ok()) return db.status();
  return std::move(db->rules);
}

}  // namespace verisub::rewriter
