// Quoting and unquoting of text-form strings.
#include "ruledb/text_escape.h"

#include <charconv>
#include <cstdio>

namespace verisub::ruledb {

std::string QuoteString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[5];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

StatusOr<std::string> UnquoteString(std::string_view s) {
  if (s.size() < 2 || s.front() != '"' || s.back() != '"')
    return InvalidArgument("expected a quoted string");
  std::string out;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c == '"') return InvalidArgument("unescaped '\"' in a quoted string");
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 2 >= s.size()) return InvalidArgument("dangling '\\' in a quoted string");
    char e = s[++i];
    switch (e) {
      case '\\':
        out += '\\';
        break;
      case '"':
        out += '"';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'x': {
        if (i + 3 >= s.size()) return InvalidArgument("short \\x escape");
        unsigned code = 0;
        const char* first = s.data() + i + 1;
        auto res = std::from_chars(first, first + 2, code, 16);
        if (res.ec != std::errc() || res.ptr != first + 2) return InvalidArgument("bad \\x escape");
        out += static_cast<char>(code);
        i += 2;
        break;
      }
      default:
        return InvalidArgument(std::string("unknown escape '\\") + e + "'");
    }
  }
  return out;
}

}  // namespace verisub::ruledb
