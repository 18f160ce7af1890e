// Candidate dumps: one canonical rule per line.
#include "verify/candidates.h"

#include <fstream>
#include <sstream>

namespace verisub::verify {

StatusOr<std::vector<ruledb::Rule>> ParseCandidates(const std::string& text,
                                                    const std::string& source_name) {
  std::vector<ruledb::Rule> rules;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    auto rule = ruledb::ParseRule(line.substr(first));
    if (!rule.ok()) return rule.status().WithContext(source_name + ":" + std::to_string(line_no));
    Status valid = ruledb::ValidateRule(*rule);
    if (!valid.ok()) return valid.WithContext(source_name + ":" + std::to_string(line_no));
    rules.push_back(std::move(*rule));
  }
  return rules;
}

StatusOr<std::vector<ruledb::Rule>> ReadCandidates(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open candidates file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseCandidates(ss.str(), path);
}

}  // namespace verisub::verify
