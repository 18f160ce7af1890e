// Candidate dumps: one canonical rule per line.
#include "verify/candidates.h"

#include <fstream>
#include <sstream>

#include "ruledb/rule_list.h"

namespace verisub::verify {

StatusOr<std::vector<ruledb::Rule>> ParseCandidates(const std::string& text,
                                                    const std::string& source_name) {
  return ruledb::ParseRuleList(text, source_name);
}

StatusOr<std::vector<ruledb::Rule>> ReadCandidates(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open candidates file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseCandidates(ss.str(), path);
}

}  // namespace verisub::verify
