// The operator set: every OpSpec by kind and by name, and the op-set fingerprint.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "specs/op_spec.h"

namespace verisub::specs {

// All operators, indexed by OpKind. Built once, immutable.
const std::vector<OpSpec>& AllOps();
const OpSpec& GetOp(OpKind kind);
const OpSpec* FindOp(std::string_view name);

// Hash of every operator's name, arity, parameters, value domains and axioms text (not its
// layouts, which are the runtime's concern): a
// rules file records it to say which op set it was generated from.
uint64_t OpSetFingerprint();
std::string OpSetFingerprintHex();

// A canonical description of one operator (what the fingerprint hashes); also printed by
// `verisub-gen --list-ops`.
std::string DescribeOp(const OpSpec& op);

}  // namespace verisub::specs
