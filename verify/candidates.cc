// Candidate dumps: one canonical rule per line.
#include "verify/candidates.h"

#include "base/file_io.h"
#include "ruledb/rule_list.h"

namespace verisub::verify {

StatusOr<std::vector<ruledb::Rule>> ParseCandidates(const std::string& text,
                                                    const std::string& source_name) {
  return ruledb::ParseRuleList(text, source_name);
}

StatusOr<std::vector<ruledb::Rule>> ReadCandidates(const std::string& path) {
  auto text = base::ReadFile(path);
  if (!text.ok()) return text.status().WithContext("candidates file");
  return ParseCandidates(*text, path);
}

}  // namespace verisub::verify
