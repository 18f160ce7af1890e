// Fuzz target: every reader of rule text: the database text form, a plain rule list (verisub-opt
// --rules, verisub-verify --verify, verisub-gen --reference), a single rule, and the axiom
// syntax (--extra-axioms). Nesting is bounded (specs::kMaxTermDepth), so no input can exhaust the
// stack.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ruledb/database.h"
#include "ruledb/rule.h"
#include "ruledb/rule_list.h"
#include "specs/axiom.h"
#include "specs/term.h"
#include "tests/fuzz/fuzz_check.h"

using namespace verisub;  // NOLINT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ruledb::LoadOptions lenient;
  lenient.proved_only = false;
  lenient.allow_op_set_mismatch = true;
  lenient.check_digest = false;
  auto db = ruledb::ParseRuleDatabaseText(text, "fuzz.txt", lenient);
  if (!db.ok()) FUZZ_CHECK(db.status().message().rfind("fuzz.txt", 0) == 0, db.status().message());
  auto list = ruledb::ParseRuleList(text, "fuzz.rules");
  if (list.ok()) {
    // A rule that parses prints canonically and parses back to itself.
    for (const ruledb::Rule& r : *list) {
      auto again = ruledb::ParseRule(r.ToText());
      FUZZ_CHECK(again.ok(), r.ToText() + ": " + again.status().message());
      FUZZ_CHECK(again->ToText() == r.ToText(), r.ToText());
    }
  }
  auto term = specs::ParseTermString(text);
  if (term.ok()) {
    auto back = specs::ParseTermString(specs::FormatTerm(*term));
    FUZZ_CHECK(back.ok(), specs::FormatTerm(*term));
  }
  (void)specs::ParseAxioms("fuzz.axioms", text);
  return 0;
}
