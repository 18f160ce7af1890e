// Rule text syntax.
#include "ruledb/rule_text.h"

#include <cctype>
#include <utility>

#include "specs/tensor.h"

namespace verisub::ruledb {
namespace {

// Splits rule text into the rule and its where clause (the text after the `where` keyword, or
// a null view when there is none).
std::pair<std::string_view, std::string_view> SplitWhereClause(std::string_view text) {
  constexpr std::string_view kWhere = "where";
  for (size_t pos = text.find(kWhere); pos != std::string_view::npos;
       pos = text.find(kWhere, pos + 1)) {
    size_t end = pos + kWhere.size();
    bool word_start = pos > 0 && std::isspace(static_cast<unsigned char>(text[pos - 1]));
    bool word_end = end == text.size() || std::isspace(static_cast<unsigned char>(text[end]));
    if (word_start && word_end) return {text.substr(0, pos), text.substr(end)};
  }
  return {text, {}};
}

// Parses a where clause (`?x:2 ?y:4`) against the inputs of the rule text (name -> index):
// every input exactly once, ranks 0..specs::kMaxRank. Returns one rank per input index.
StatusOr<std::vector<int>> ParseInputRanks(std::string_view clause,
                                           const std::map<std::string, int>& inputs) {
  std::vector<int> ranks(inputs.size(), -1);
  size_t pos = 0;
  while (true) {
    while (pos < clause.size() && std::isspace(static_cast<unsigned char>(clause[pos]))) ++pos;
    if (pos == clause.size()) break;
    size_t end = pos;
    while (end < clause.size() && !std::isspace(static_cast<unsigned char>(clause[end]))) ++end;
    std::string_view item = clause.substr(pos, end - pos);
    pos = end;
    size_t colon = item.rfind(':');
    if (colon == std::string_view::npos)
      return InvalidArgument("where: expected ?input:rank, got '" + std::string(item) + "'");
    auto it = inputs.find(std::string(item.substr(0, colon)));
    if (it == inputs.end())
      return InvalidArgument("where: '" + std::string(item.substr(0, colon)) +
                             "' is not an input of the rule");
    std::string_view digits = item.substr(colon + 1);
    if (digits.size() != 1 || digits[0] < '0' || digits[0] - '0' > specs::kMaxRank)
      return InvalidArgument("where: bad rank '" + std::string(digits) + "' for " + it->first);
    if (ranks[it->second] >= 0) return InvalidArgument("where: " + it->first + " is given twice");
    ranks[it->second] = digits[0] - '0';
  }
  for (const auto& [name, index] : inputs)
    if (ranks[index] < 0) return InvalidArgument("where: no rank for input " + name);
  return ranks;
}

// Numbers the inputs of `t` in the order the text writes them (depth first, left to right).
Status NumberInputs(const specs::TermAst& t, std::map<std::string, int>* inputs) {
  if (t.is_leaf) {
    if (t.head.size() < 2 || t.head[0] != '?')
      return InvalidArgument("input '" + t.head + "' must be written ?name");
    inputs->emplace(t.head, static_cast<int>(inputs->size()));
    return Status::Ok();
  }
  for (const specs::TermAst& a : t.args) VERISUB_RETURN_IF_ERROR(NumberInputs(a, inputs));
  return Status::Ok();
}

Status ParseSide(std::string_view text, const char* side, std::vector<specs::TermAst>* terms,
                 std::map<std::string, int>* inputs) {
  size_t start = 0;
  while (true) {
    size_t semi = text.find(';', start);
    std::string_view part =
        text.substr(start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
    auto ast = specs::ParseTermString(part);
    if (!ast.ok())
      return ast.status().WithContext(std::string(side) + " output " +
                                      std::to_string(terms->size()));
    VERISUB_RETURN_IF_ERROR(NumberInputs(*ast, inputs).WithContext(side));
    terms->push_back(std::move(*ast));
    if (semi == std::string_view::npos) return Status::Ok();
    start = semi + 1;
  }
}

}  // namespace

StatusOr<RuleTextAst> ParseRuleTextAst(std::string_view full_text) {
  auto [text, where] = SplitWhereClause(full_text);
  size_t arrow = text.find("=>");
  if (arrow == std::string_view::npos) return InvalidArgument("expected 'source => target'");
  if (text.find("=>", arrow + 2) != std::string_view::npos)
    return InvalidArgument("more than one '=>'");
  RuleTextAst ast;
  VERISUB_RETURN_IF_ERROR(ParseSide(text.substr(0, arrow), "source", &ast.src, &ast.inputs));
  ast.src_inputs = static_cast<int>(ast.inputs.size());
  VERISUB_RETURN_IF_ERROR(ParseSide(text.substr(arrow + 2), "target", &ast.dst, &ast.inputs));
  if (where.data()) {
    VERISUB_ASSIGN_OR_RETURN(std::vector<int> ranks, ParseInputRanks(where, ast.inputs));
    ast.input_ranks = std::move(ranks);
  }
  return ast;
}

}  // namespace verisub::ruledb
