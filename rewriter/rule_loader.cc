// LoadRuleSet and RuleSetLoader (see rule_loader.h).
#include "rewriter/rule_loader.h"

#include <chrono>
#include <new>
#include <utility>

#include "rewriter/report_html.h"
#include "rewriter/rule_source.h"

namespace verisub::rewriter {

StatusOr<LoadedRules> LoadRuleSet(const std::string& path, const RuleSetOptions& options,
                                  bool with_proofs) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto rules = LoadRules(path);
  if (!rules.ok()) return rules.status();
  LoadedRules out;
  if (with_proofs) out.proofs = ProofRecords(*rules);
  const auto read = Clock::now();
  auto set = RuleSet::Compile(std::move(rules).value(), options);
  if (!set.ok()) return set.status();
  out.set = std::move(set).value();
  out.read_seconds = std::chrono::duration<double>(read - start).count();
  out.compile_seconds = std::chrono::duration<double>(Clock::now() - read).count();
  return out;
}

RuleSetLoader::RuleSetLoader(std::string path, RuleSetOptions options, bool with_proofs)
    : result_(std::async(std::launch::async,
                         [path = std::move(path), options, with_proofs]() -> StatusOr<LoadedRules> {
                           try {
                             return LoadRuleSet(path, options, with_proofs);
                           } catch (const std::bad_alloc&) {
                             return InternalError("out of memory loading rules '" + path + "'");
                           }
                         })) {}

RuleSetLoader::~RuleSetLoader() {
  if (result_.valid()) result_.wait();
}

StatusOr<LoadedRules> RuleSetLoader::Get() {
  if (!result_.valid()) return InternalError("RuleSetLoader::Get called twice");
  return result_.get();
}

}  // namespace verisub::rewriter
