// Quoted strings in the text form of rule databases (header values, proof reasons).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace verisub::ruledb {

// C-style quoting with \\, \", \n, \t, \r and \xHH for other control bytes; other bytes
// (UTF-8 included) are written as they are.
std::string QuoteString(std::string_view s);
// Parses a quoted string that makes up all of `s`; the inverse of QuoteString.
StatusOr<std::string> UnquoteString(std::string_view s);

}  // namespace verisub::ruledb
