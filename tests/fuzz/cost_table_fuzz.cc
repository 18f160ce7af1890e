// Fuzz target: cost tables (runtime/cost/cost_table.h), the files --cost-table and the per-user
// cache read. A table that parses serializes and parses back to the same bytes (the text form
// is canonical), and every time in it is finite and not negative.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/cost/cost_table.h"
#include "tests/fuzz/fuzz_check.h"

using namespace verisub::runtime;  // NOLINT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto table = CostTable::Parse(text, "fuzz.costs.txt");
  if (!table.ok()) {
    FUZZ_CHECK(table.status().message().find("fuzz.costs.txt") != std::string::npos,
               table.status().message());
    return 0;
  }
  for (const auto& [key, e] : table->entries())
    FUZZ_CHECK(!key.empty() && std::isfinite(e.time_us) && e.time_us >= 0, key);
  const std::string once = table->Serialize();
  auto again = CostTable::Parse(once, "fuzz.costs.txt");
  FUZZ_CHECK(again.ok(), again.status().message());
  FUZZ_CHECK(again->Serialize() == once, "the text form is not canonical");
  return 0;
}
