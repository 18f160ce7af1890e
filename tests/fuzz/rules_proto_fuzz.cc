// Fuzz target: the rules database loader on protobuf bytes, strict and lenient (what
// verisub-opt and verisub-rules do). A file that loads must write back and load again to the
// same rules.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ruledb/database.h"
#include "tests/fuzz/fuzz_check.h"

using namespace verisub::ruledb;  // NOLINT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  LoadOptions strict, lenient;
  lenient.proved_only = false;
  lenient.allow_op_set_mismatch = true;
  lenient.check_digest = false;
  for (const LoadOptions& o : {strict, lenient}) {
    auto db = ParseRuleDatabaseBytes(bytes, "fuzz.pb", o);
    if (!db.ok()) {
      FUZZ_CHECK(db.status().message().rfind("fuzz.pb", 0) == 0, db.status().message());
      continue;
    }
    for (const Rule& r : db->rules) FUZZ_CHECK(r.Id().size() == 16, r.ToText());
    auto again = SerializeRuleDatabase(db->header, db->rules);
    if (!again.ok()) continue;  // e.g. two rules equal once canonicalized
    auto back = ParseRuleDatabaseBytes(*again, "again.pb", lenient);
    FUZZ_CHECK(back.ok(), back.status().message());
    FUZZ_CHECK(back->rules.size() == db->rules.size(), "round trip changed the rule count");
  }
  // The text conversion reads any file the parser accepts.
  auto text = RuleDatabaseBytesToText(bytes, "fuzz.pb");
  if (text.ok()) {
    auto bytes2 = RuleDatabaseTextToBytes(*text, "fuzz.txt");
    FUZZ_CHECK(bytes2.ok(), bytes2.status().message());
  }
  return 0;
}
