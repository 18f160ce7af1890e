// The canonical text form of a rule database: a header block of `# key: value` lines, then one
// rule per line with its id and proof record. It is a rendering of the protobuf message, made
// without the operator registry, so text -> protobuf -> text is byte-identical and a file from
// another operator set still converts (unknown operators are skipped later, when decoding).
//
//   # verisub-ruledb
//   # schema_version: 3
//   # op_set_fingerprint: "9c0e4a1b2d3f4e5a"
//   # max_ops: 3
//   # tool_version: "verisub 0.1"
//   # z3_version: "4.12.2"
//   # generator_config: "max_ops = 3\n"
//   # count: proved 120
//   # num_rules: 2
//   # digest: "5d0c8f...": XXH3-128 of the header and the rules (schema 3)
//   (relu (relu ?a)) => (relu ?a)  # 1f0c... proved axioms=relu_idem seconds=0.012
//   (matmul[activation=none] ?a (const_imatmul ?b)) => ?a where ?a:2 ?b:2  # 8e1d... proved ...
//   ...
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "ruledb/ruledb.pb.h"
#include "ruledb/text_escape.h"

namespace verisub::ruledb {

inline constexpr char kDatabaseMagic[] = "verisub-ruledb";

// `src => dst[ where ?a:R ...]  # id status [axioms=a,b] seconds=s [reason="..."]`. Errors on a
// message whose graph references are out of range or whose names cannot be written losslessly.
StatusOr<std::string> FormatRuleLine(const v2::Rule& rule);
StatusOr<v2::Rule> ParseRuleLine(std::string_view line);

StatusOr<std::string> FormatDatabaseText(const v2::RuleDatabase& db);
// Errors name the line (1-based) and, for rule lines, the rule index.
StatusOr<v2::RuleDatabase> ParseDatabaseText(std::string_view text);

// Size of the largest side when written as a tree (shared subterms once per use), or -1 when a
// reference is out of range; rules whose text would be huge are rejected before formatting.
int64_t TreeTextSize(const v2::Graph& g, uint32_t num_inputs, int64_t limit);

}  // namespace verisub::ruledb
