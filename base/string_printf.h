// printf-style formatting appended to a string: the reports programs print are built as strings
// by library calls (and tested), then written by the program's main.
#pragma once

#include <cstdint>
#include <string>

namespace verisub::base {

// Appends the formatted text to `*out`, however long it is.
void StringAppendF(std::string* out, const char* format, ...) __attribute__((format(printf, 2, 3)));

// `v` as 16 lowercase hex digits (hashes in file names and keys).
std::string Hex64(uint64_t v);

}  // namespace verisub::base
