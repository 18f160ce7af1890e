// A rule's proof status, and its one mapping to the protobuf enum and to the text form's names.
#pragma once

#include <optional>
#include <string_view>

#include "ruledb/ruledb.pb.h"

namespace verisub::ruledb {

enum class ProofStatus {
  kUnchecked,  // not sent to the verifier
  kProved,     // the axioms entail equality of every mapped output
  kNotProved,  // the solver found the negation satisfiable (a countermodel of the axioms)
  kUnknown,    // the solver answered unknown
  kTimeout,    // the query ran out of time
  kError,      // the query could not be built
};

// The name in the text form: "unchecked", "proved", "not_proved", "unknown", "timeout", "error".
const char* ProofStatusName(ProofStatus s);
std::optional<ProofStatus> ParseProofStatusName(std::string_view name);

v2::ProofStatus ProofStatusToProto(ProofStatus s);
// nullopt for a value the schema does not define (a corrupt or newer file).
std::optional<ProofStatus> ProofStatusFromProto(v2::ProofStatus s);

}  // namespace verisub::ruledb
