// printf-style appending.
#include "base/string_printf.h"

#include <cstdarg>
#include <cstdio>

namespace verisub::base {

void StringAppendF(std::string* out, const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  if (n > 0) {
    const size_t at = out->size();
    out->resize(at + n + 1);
    std::vsnprintf(out->data() + at, n + 1, format, again);
    out->resize(at + n);
  }
  va_end(again);
}

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace verisub::base
