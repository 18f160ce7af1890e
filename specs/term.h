// S-expression terms over operators, shared by the axioms (specs/) and the rule text form
// (ruledb/): `(conv2d[stride_h=1,activation=relu] x (enlarge[kernel_h=3,kernel_w=3] w))`,
// `(split.1[axis=0] t)`, leaves are bare tokens (`x`, `?a`).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace verisub::specs {

struct TermAst {
  bool is_leaf = false;
  std::string head;  // operator name, or the leaf token
  int output = 0;    // `.k` suffix: which output of a multi-output operator
  std::vector<std::pair<std::string, std::string>> params;  // in written order
  std::vector<TermAst> args;
};

// Deepest nesting the parser accepts: far above any rule or axiom (the generator's graphs have a
// handful of operators), far below what would exhaust the stack of the recursive parser.
inline constexpr int kMaxTermDepth = 256;

// Parses one term starting at *pos (skipping spaces) and advances *pos past it. Errors give the
// column (1-based) within `text`.
StatusOr<TermAst> ParseTerm(std::string_view text, size_t* pos);
// Parses a whole string as one term; trailing text is an error.
StatusOr<TermAst> ParseTermString(std::string_view text);
std::string FormatTerm(const TermAst& t);

struct OpSpec;
// The operator an application term (not a leaf) names, checked against the registry: it exists,
// takes as many inputs as the term gives, has the output the term selects and every parameter
// the term writes. The one resolver of terms for axioms and rules; what a parameter's text
// means (a value, or a variable in axioms) is the caller's.
StatusOr<const OpSpec*> ResolveTermOp(const TermAst& t);

}  // namespace verisub::specs
