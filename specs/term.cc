// S-expression term parser and printer.
#include "specs/term.h"

#include <cctype>
#include <charconv>

#include "specs/registry.h"

namespace verisub::specs {
namespace {

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '?' || c == '-' ||
         c == '.' || c == '+';
}

void SkipSpace(std::string_view t, size_t* pos) {
  while (*pos < t.size() && std::isspace(static_cast<unsigned char>(t[*pos]))) ++*pos;
}

Status ErrorAt(size_t pos, const std::string& what) {
  return InvalidArgument("column " + std::to_string(pos + 1) + ": " + what);
}

std::string_view ReadToken(std::string_view t, size_t* pos) {
  size_t start = *pos;
  while (*pos < t.size() && IsTokenChar(t[*pos])) ++*pos;
  return t.substr(start, *pos - start);
}

// A parameter value: a bracketed list or a token.
StatusOr<std::string> ReadValue(std::string_view t, size_t* pos) {
  if (*pos < t.size() && t[*pos] == '[') {
    size_t end = t.find(']', *pos);
    if (end == std::string_view::npos) return ErrorAt(*pos, "unterminated list");
    std::string v(t.substr(*pos, end + 1 - *pos));
    *pos = end + 1;
    return v;
  }
  std::string_view v = ReadToken(t, pos);
  if (v.empty()) return ErrorAt(*pos, "expected a parameter value");
  return std::string(v);
}

StatusOr<TermAst> ParseTermAt(std::string_view t, size_t* pos, int depth) {
  SkipSpace(t, pos);
  if (depth > kMaxTermDepth)
    return ErrorAt(*pos, "term nested more than " + std::to_string(kMaxTermDepth) + " deep");
  if (*pos >= t.size()) return ErrorAt(*pos, "expected a term, found the end");
  TermAst term;
  if (t[*pos] != '(') {
    std::string_view tok = ReadToken(t, pos);
    if (tok.empty()) return ErrorAt(*pos, std::string("unexpected character '") + t[*pos] + "'");
    term.is_leaf = true;
    term.head = std::string(tok);
    return term;
  }
  ++*pos;
  SkipSpace(t, pos);
  size_t head_pos = *pos;
  std::string_view head = ReadToken(t, pos);
  if (head.empty()) return ErrorAt(head_pos, "expected an operator name");
  size_t dot = head.rfind('.');
  if (dot != std::string_view::npos && dot + 1 < head.size() &&
      std::isdigit(static_cast<unsigned char>(head[dot + 1]))) {
    std::string_view digits = head.substr(dot + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), term.output);
    if (ec != std::errc() || end != digits.data() + digits.size() || term.output > 255)
      return ErrorAt(head_pos, "bad output index in '" + std::string(head) + "'");
    head = head.substr(0, dot);
  }
  term.head = std::string(head);
  if (*pos < t.size() && t[*pos] == '[') {
    ++*pos;
    while (true) {
      SkipSpace(t, pos);
      if (*pos < t.size() && t[*pos] == ']') {
        ++*pos;
        break;
      }
      size_t key_pos = *pos;
      std::string_view key = ReadToken(t, pos);
      if (key.empty()) return ErrorAt(key_pos, "expected a parameter name");
      SkipSpace(t, pos);
      if (*pos >= t.size() || t[*pos] != '=')
        return ErrorAt(*pos, "expected '=' after '" + std::string(key) + "'");
      ++*pos;
      SkipSpace(t, pos);
      auto value = ReadValue(t, pos);
      if (!value.ok()) return value.status();
      term.params.emplace_back(std::string(key), *value);
      SkipSpace(t, pos);
      if (*pos < t.size() && t[*pos] == ',') ++*pos;
    }
  }
  while (true) {
    SkipSpace(t, pos);
    if (*pos >= t.size()) return ErrorAt(*pos, "missing ')' for '" + term.head + "'");
    if (t[*pos] == ')') {
      ++*pos;
      return term;
    }
    auto arg = ParseTermAt(t, pos, depth + 1);
    if (!arg.ok()) return arg.status();
    term.args.push_back(std::move(*arg));
  }
}

}  // namespace

StatusOr<TermAst> ParseTerm(std::string_view t, size_t* pos) { return ParseTermAt(t, pos, 1); }

StatusOr<TermAst> ParseTermString(std::string_view text) {
  size_t pos = 0;
  auto t = ParseTerm(text, &pos);
  if (!t.ok()) return t;
  SkipSpace(text, &pos);
  if (pos != text.size()) return ErrorAt(pos, "unexpected text after the term");
  return t;
}

std::string FormatTerm(const TermAst& t) {
  if (t.is_leaf) return t.head;
  std::string s = "(" + t.head;
  if (t.output != 0) s += "." + std::to_string(t.output);
  if (!t.params.empty()) {
    s += "[";
    for (size_t i = 0; i < t.params.size(); ++i)
      s += (i ? "," : "") + t.params[i].first + "=" + t.params[i].second;
    s += "]";
  }
  for (const TermAst& a : t.args) s += " " + FormatTerm(a);
  return s + ")";
}

StatusOr<const OpSpec*> ResolveTermOp(const TermAst& t) {
  const OpSpec* op = FindOp(t.head);
  if (!op) return InvalidArgument("unknown operator '" + t.head + "'");
  if (static_cast<int>(t.args.size()) != op->num_inputs)
    return InvalidArgument("'" + op->name + "' takes " + std::to_string(op->num_inputs) +
                           " inputs, got " + std::to_string(t.args.size()));
  if (t.output >= op->num_outputs)
    return InvalidArgument("'" + op->name + "' has no output " + std::to_string(t.output));
  for (const auto& [key, value] : t.params)
    if (!op->FindParam(key))
      return InvalidArgument("'" + op->name + "' has no parameter '" + key + "'");
  return op;
}

}  // namespace verisub::specs
