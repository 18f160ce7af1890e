// printf-style formatting appended to a string: the reports programs print are built as strings
// by library calls (and tested), then written by the program's main.
#pragma once

#include <string>

namespace verisub::base {

// Appends the formatted text to `*out`, however long it is.
void StringAppendF(std::string* out, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace verisub::base
