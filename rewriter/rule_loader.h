// Rules read and compiled, at once or on a thread of their own while the caller imports its
// model: the two took about 0.5 s each on ResNet-50 (2-core machine), one after the other.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "rewriter/rule_set.h"
#include "ruledb/rule.h"

namespace verisub::rewriter {

struct LoadedRules {
  std::shared_ptr<const RuleSet> set;
  std::map<std::string, ruledb::ProofRecord> proofs;  // by rule id; only when asked for
  double read_seconds = 0;
  double compile_seconds = 0;
};

// LoadRules, then RuleSet::Compile; errors as theirs.
StatusOr<LoadedRules> LoadRuleSet(const std::string& path, const RuleSetOptions& options,
                                  bool with_proofs = false);

// LoadRuleSet begun on another thread when constructed.
class RuleSetLoader {
 public:
  RuleSetLoader(std::string path, RuleSetOptions options, bool with_proofs = false);
  RuleSetLoader(const RuleSetLoader&) = delete;
  RuleSetLoader& operator=(const RuleSetLoader&) = delete;
  ~RuleSetLoader();  // waits for the thread when Get was not called
  // The result (waiting for it); once.
  StatusOr<LoadedRules> Get();

 private:
  std::future<StatusOr<LoadedRules>> result_;
};

}  // namespace verisub::rewriter
