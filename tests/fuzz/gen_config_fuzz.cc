// Fuzz target: the generator's config parser and its pre-run estimate (the run itself is the
// estimate's business: a config that parses is not run here).
#include <cstddef>
#include <cstdint>
#include <string>

#include "gen/config.h"
#include "gen/estimate.h"
#include "tests/fuzz/fuzz_check.h"

using namespace verisub::gen;  // NOLINT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = ParseConfig(text, "fuzz.cfg");
  if (!config.ok()) {
    FUZZ_CHECK(config.status().message().rfind("fuzz.cfg", 0) == 0, config.status().message());
    return 0;
  }
  (void)EstimateGeneration(*config, 2, kDefaultGenMemoryBudget);
  // The canonical form parses back to the same config.
  auto again = ParseConfig(FormatConfig(*config), "again.cfg");
  FUZZ_CHECK(again.ok(), again.status().message());
  FUZZ_CHECK(FormatConfig(*again) == FormatConfig(*config), FormatConfig(*config));
  return 0;
}
