// The rule database: header, rules, and loading and writing its protobuf and text files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/file_io.h"
#include "base/status.h"
#include "ruledb/rule.h"

namespace verisub::ruledb {

// 2: rules carry input ranks (version 1 files are refused: their rules were proved by an
// encoding that ignored the ranks axioms are declared for).
// 3: the header carries an integrity digest of itself and the rules (version 2 files have none
// and are refused by default).
inline constexpr uint32_t kSchemaVersion = 3;

struct DatabaseHeader {
  uint32_t schema_version = kSchemaVersion;
  std::string op_set_fingerprint;  // specs::OpSetFingerprintHex() when written by our tools
  std::string generator_config;    // the generator's config text, verbatim
  uint32_t max_ops = 0;            // N
  std::string tool_version;
  std::string z3_version;
  std::vector<std::pair<std::string, int64_t>> counts;  // names are [A-Za-z0-9_.:-]+
  std::string digest;  // filled when reading and writing; computed, never set by callers
};

struct LoadOptions {
  // Keep only rules whose proof status is kProved (the others are counted).
  bool proved_only = true;
  // A file generated from another operator set is an error unless this is set; then it loads
  // with a warning, and rules naming operators or parameters this op set lacks are skipped.
  bool allow_op_set_mismatch = false;
  // A file whose integrity digest is missing or wrong is an error unless this is cleared (then
  // a warning): `verisub-rules` inspects such files, the optimizer never uses them.
  bool check_digest = true;
};

struct RuleDatabase {
  DatabaseHeader header;
  std::vector<Rule> rules;  // in file order
  // Filled by loading.
  int skipped_unknown_operator = 0;  // rules naming an operator/parameter this op set lacks
  int skipped_unproved = 0;          // rules dropped by LoadOptions::proved_only
  bool digest_ok = true;             // false: missing or wrong (loaded without check_digest)
  std::vector<std::string> warnings;
};

// The order rules are written in: fewer nodes first, then by canonical text.
void SortRules(std::vector<Rule>* rules);

// Serialized protobuf and canonical text of a database. Rules are canonicalized and sorted;
// duplicates (equal text) are an error.
StatusOr<std::string> SerializeRuleDatabase(const DatabaseHeader& header, std::vector<Rule> rules);
StatusOr<std::string> FormatRuleDatabaseText(const DatabaseHeader& header, std::vector<Rule> rules);

// Decodes a serialized protobuf (ParseRuleDatabaseBytes) or a text file (ParseRuleDatabaseText).
// Errors name `file` and, for a bad rule, its index and id.
StatusOr<RuleDatabase> ParseRuleDatabaseBytes(std::string_view bytes, const std::string& file,
                                              const LoadOptions& options = {});
StatusOr<RuleDatabase> ParseRuleDatabaseText(std::string_view text, const std::string& file,
                                             const LoadOptions& options = {});

// Converts between the two file forms without the operator registry's help (so it works on
// files of another op set); text -> bytes -> text is byte-identical.
StatusOr<std::string> RuleDatabaseTextToBytes(std::string_view text, const std::string& file);
StatusOr<std::string> RuleDatabaseBytesToText(std::string_view bytes, const std::string& file);

// The text file written beside a protobuf file: `x.pb` -> `x.txt`, otherwise `path + ".txt"`.
std::string TextPathFor(const std::string& path);

// Writes `path` (protobuf) and TextPathFor(path) (text), each to a temporary file renamed into
// place, so a reader never sees a partial file.
Status WriteRuleDatabase(const std::string& path, const DatabaseHeader& header,
                         std::vector<Rule> rules);

// Whether file contents are the text form (its first line), rather than protobuf.
bool IsTextForm(std::string_view contents);

// Loads a protobuf or text file (told apart by IsTextForm).
StatusOr<RuleDatabase> LoadRuleDatabase(const std::string& path, const LoadOptions& options = {});

// The file I/O of base/file_io.h, named here for the callers that always found it here.
using base::CheckOutputPath;
using base::ReadFile;
using base::WriteFileAtomically;

}  // namespace verisub::ruledb
