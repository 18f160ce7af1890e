// The proof-status table.
#include "ruledb/proof_status.h"

#include "base/status.h"

namespace verisub::ruledb {
namespace {

struct ProofStatusEntry {
  ProofStatus status;
  v2::ProofStatus proto;
  const char* name;
};

constexpr ProofStatusEntry kProofStatuses[] = {
    {ProofStatus::kUnchecked, v2::PROOF_STATUS_UNCHECKED, "unchecked"},
    {ProofStatus::kProved, v2::PROOF_STATUS_PROVED, "proved"},
    {ProofStatus::kNotProved, v2::PROOF_STATUS_NOT_PROVED, "not_proved"},
    {ProofStatus::kUnknown, v2::PROOF_STATUS_UNKNOWN, "unknown"},
    {ProofStatus::kTimeout, v2::PROOF_STATUS_TIMEOUT, "timeout"},
    {ProofStatus::kError, v2::PROOF_STATUS_ERROR, "error"},
};

const ProofStatusEntry& EntryOf(ProofStatus s) {
  for (const ProofStatusEntry& e : kProofStatuses)
    if (e.status == s) return e;
  VERISUB_CHECK(!"every ProofStatus has an entry in kProofStatuses");
  return kProofStatuses[0];
}

}  // namespace

const char* ProofStatusName(ProofStatus s) { return EntryOf(s).name; }

std::optional<ProofStatus> ParseProofStatusName(std::string_view name) {
  for (const ProofStatusEntry& e : kProofStatuses)
    if (name == e.name) return e.status;
  return std::nullopt;
}

v2::ProofStatus ProofStatusToProto(ProofStatus s) { return EntryOf(s).proto; }

std::optional<ProofStatus> ProofStatusFromProto(v2::ProofStatus s) {
  for (const ProofStatusEntry& e : kProofStatuses)
    if (e.proto == s) return e.status;
  return std::nullopt;
}

}  // namespace verisub::ruledb
