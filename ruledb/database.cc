// Rule database files: building, decoding, reading and writing.
#include "ruledb/database.h"

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <xxhash.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <numeric>
#include <optional>
#include <sstream>
#include <unordered_set>

#include "ruledb/proto_rule.h"
#include "ruledb/ruledb.pb.h"
#include "ruledb/text_form.h"
#include "specs/registry.h"

namespace verisub::ruledb {
namespace {

// Deterministic serialization (the same message always gives the same bytes).
template <typename Message>
std::string DeterministicBytes(const Message& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace

namespace {

// The digest of a header (its digest field cleared) and of the rules' serialized bytes, in order.
template <typename RuleBytes>
std::string DigestOf(const v2::Header& with_digest, size_t num_rules, RuleBytes rule_bytes) {
  XXH3_state_t* state = XXH3_createState();
  VERISUB_CHECK(state != nullptr);
  XXH3_128bits_reset(state);
  v2::Header header = with_digest;
  header.clear_digest();
  std::string bytes = DeterministicBytes(header);
  XXH3_128bits_update(state, bytes.data(), bytes.size());
  for (size_t i = 0; i < num_rules; ++i) {
    std::string_view b = rule_bytes(i, &bytes);
    XXH3_128bits_update(state, b.data(), b.size());
  }
  XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

}  // namespace

std::string ComputeDatabaseDigest(const v2::RuleDatabase& db) {
  return DigestOf(db.header(), db.rules_size(), [&](size_t i, std::string* scratch) {
    *scratch = DeterministicBytes(db.rules(static_cast<int>(i)));
    return std::string_view(*scratch);
  });
}

namespace {

StatusOr<v2::RuleDatabase> BuildProto(const DatabaseHeader& h, std::vector<Rule> rules) {
  for (size_t i = 0; i < rules.size(); ++i) {
    Status st = ValidateRule(rules[i]);
    if (!st.ok()) return st.WithContext("rule " + std::to_string(i));
  }
  SortRules(&rules);
  v2::RuleDatabase db;
  v2::Header* ph = db.mutable_header();
  ph->set_magic(kDatabaseMagic);
  ph->set_schema_version(h.schema_version);
  ph->set_op_set_fingerprint(h.op_set_fingerprint);
  ph->set_generator_config(h.generator_config);
  ph->set_max_ops(h.max_ops);
  ph->set_tool_version(h.tool_version);
  ph->set_z3_version(h.z3_version);
  for (const auto& [name, value] : h.counts) {
    v2::Count* c = ph->add_counts();
    c->set_name(name);
    c->set_value(value);
  }
  ph->set_num_rules(static_cast<uint32_t>(rules.size()));
  for (const Rule& r : rules) {
    *db.add_rules() = RuleToProto(r);
    int n = db.rules_size();
    if (n > 1 && db.rules(n - 1).id() == db.rules(n - 2).id())
      return InvalidArgument("duplicate rule " + r.ToText());
  }
  ph->set_digest(ComputeDatabaseDigest(db));
  return db;
}

// A stored id for messages: as is when it looks like one, else quoted and cut short.
std::string PrintableId(const std::string& id) {
  bool hex = id.size() == 16 && std::all_of(id.begin(), id.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
             });
  return hex ? id : QuoteString(id.substr(0, 32));
}

// The header's checks and fields (magic, schema version, operator set).
Status DecodeHeader(const v2::Header& h, const std::string& file, const LoadOptions& options,
                    RuleDatabase* db) {
  if (h.magic() != kDatabaseMagic)
    return DataLoss(file + ": not a verisub rule database (bad magic)");
  if (h.schema_version() != kSchemaVersion)
    return FailedPrecondition(
        file + ": schema version " + std::to_string(h.schema_version()) +
        "; this tool reads version " + std::to_string(kSchemaVersion) +
        (h.schema_version() == 1   ? " (version 1 rules carry no input ranks and were proved "
                                     "without them: regenerate the file with verisub-gen)"
         : h.schema_version() == 2 ? " (version 2 files carry no integrity digest: regenerate "
                                     "the file with verisub-gen --config CONFIG --out FILE)"
                                   : ""));
  db->header.schema_version = h.schema_version();
  db->header.op_set_fingerprint = h.op_set_fingerprint();
  db->header.generator_config = h.generator_config();
  db->header.max_ops = h.max_ops();
  db->header.tool_version = h.tool_version();
  db->header.z3_version = h.z3_version();
  for (const v2::Count& c : h.counts()) db->header.counts.emplace_back(c.name(), c.value());
  const std::string ours = specs::OpSetFingerprintHex();
  if (h.op_set_fingerprint() != ours) {
    std::string msg = file + ": generated from operator set '" + h.op_set_fingerprint() +
                      "', this build has '" + ours + "'";
    if (!options.allow_op_set_mismatch)
      return FailedPrecondition(msg + " (regenerate it, or allow an op-set mismatch)");
    db->warnings.push_back(msg);
  }
  return Status::Ok();
}

// Rule `i` of the file: decoded and kept, or skipped (an operator this build lacks, unproved
// with `proved_only`). `ids` catches duplicates.
Status DecodeRule(const v2::Rule& pr, size_t i, bool check_id, const std::string& file,
                  const LoadOptions& options, std::unordered_set<std::string>* ids,
                  RuleDatabase* db) {
  auto where = [&] {
    return file + ": rule " + std::to_string(i) + " (id " + PrintableId(pr.id()) + ")";
  };
  auto r = RuleFromProto(pr, check_id);
  if (!r.ok()) {
    if (r.status().code() != StatusCode::kNotFound) return r.status().WithContext(where());
    ++db->skipped_unknown_operator;
    db->warnings.push_back(where() + ": skipped: " + r.status().message());
    return Status::Ok();
  }
  if (!ids->insert(pr.id()).second) return DataLoss(where() + ": duplicate rule");
  if (options.proved_only && r->proof.status != ProofStatus::kProved) {
    ++db->skipped_unproved;
    return Status::Ok();
  }
  db->rules.push_back(std::move(*r));
  return Status::Ok();
}

Status CheckRuleCount(const v2::Header& h, size_t rules, const std::string& file) {
  if (h.num_rules() == rules) return Status::Ok();
  return DataLoss(file + ": the header announces " + std::to_string(h.num_rules()) +
                  " rules but the file holds " + std::to_string(rules) + " (truncated?)");
}

// The digest's verdict: the stored digest, and an error or warning when it does not hold.
Status FinishDigest(const v2::Header& h, bool digest_holds, const std::string& computed,
                    const std::string& file, const LoadOptions& options, RuleDatabase* db) {
  db->header.digest = h.digest();
  if (digest_holds) return Status::Ok();
  std::string msg =
      file +
      (h.digest().empty() ? std::string(": no integrity digest")
                          : ": integrity digest mismatch (stored " + PrintableId(h.digest()) +
                                ", computed " + computed + ")") +
      ": the rules or their proof records were changed after the file was written, or the "
      "file was not written by verisub-gen; regenerate it, or re-prove it with "
      "`verisub-rules check --reprove FILE`";
  if (options.check_digest) return DataLoss(msg);
  db->digest_ok = false;
  db->warnings.push_back(msg);
  return Status::Ok();
}

StatusOr<RuleDatabase> Decode(const v2::RuleDatabase& p, const std::string& file,
                              const LoadOptions& options) {
  const v2::Header& h = p.header();
  RuleDatabase db;
  VERISUB_RETURN_IF_ERROR(DecodeHeader(h, file, options, &db));
  VERISUB_RETURN_IF_ERROR(CheckRuleCount(h, p.rules_size(), file));
  db.rules.reserve(p.rules_size());
  // A file whose digest holds is the generator's own output: its rules are canonical and their
  // ids are their texts' (a third of loading went to proving that again rule by rule). Otherwise
  // each rule is checked, so that an edited rule is named before the digest is.
  const std::string computed_digest = ComputeDatabaseDigest(p);
  const bool digest_holds = !h.digest().empty() && computed_digest == h.digest();
  std::unordered_set<std::string> ids;
  for (int i = 0; i < p.rules_size(); ++i)
    VERISUB_RETURN_IF_ERROR(DecodeRule(p.rules(i), i, !digest_holds, file, options, &ids, &db));
  VERISUB_RETURN_IF_ERROR(FinishDigest(h, digest_holds, computed_digest, file, options, &db));
  return db;
}

// A binary database split on the wire without parsing its rules: the header's bytes (every
// occurrence, which parse as one merged message) and each rule's, in file order. False when the
// bytes are no well-formed message.
struct WireDatabase {
  std::string header;
  std::vector<std::string_view> rules;
};

bool SplitWire(std::string_view bytes, WireDatabase* out) {
  if (bytes.size() > INT_MAX) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  using google::protobuf::internal::WireFormatLite;
  while (uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if ((field == 1 || field == 2) &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length;
      if (!in.ReadVarint32(&length)) return false;
      const int at = in.CurrentPosition();
      if (length > bytes.size() - static_cast<size_t>(at) || !in.Skip(static_cast<int>(length)))
        return false;
      std::string_view payload = bytes.substr(at, length);
      if (field == 1)
        out->header.append(payload);
      else
        out->rules.push_back(payload);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage() && in.CurrentPosition() == static_cast<int>(bytes.size());
}

// The generator's own file, decoded a rule at a time: the rules' bytes are hashed as they lie
// in the file, so the digest holds without parsing them, and each is parsed only to decode it
// (the whole file as one message took 45 MB of parse trees for a 3.5 MB file: more than a
// ResNet-50's optimization needs beside its weights). Null when the raw bytes do not give the
// stored digest (an edited or re-serialized file): the caller decodes the whole message, which
// checks every rule.
StatusOr<std::optional<RuleDatabase>> DecodeCanonicalWire(std::string_view bytes,
                                                          const std::string& file,
                                                          const LoadOptions& options) {
  WireDatabase wire;
  v2::Header h;
  if (!SplitWire(bytes, &wire) || !h.ParseFromString(wire.header))
    return std::optional<RuleDatabase>();
  if (h.digest().empty() || DigestOf(h, wire.rules.size(), [&](size_t i, std::string*) {
                              return wire.rules[i];
                            }) != h.digest())
    return std::optional<RuleDatabase>();
  RuleDatabase db;
  VERISUB_RETURN_IF_ERROR(DecodeHeader(h, file, options, &db));
  VERISUB_RETURN_IF_ERROR(CheckRuleCount(h, wire.rules.size(), file));
  db.rules.reserve(wire.rules.size());
  std::unordered_set<std::string> ids;
  v2::Rule pr;  // reused: its buffers grow to the largest rule
  for (size_t i = 0; i < wire.rules.size(); ++i) {
    if (!pr.ParseFromArray(wire.rules[i].data(), static_cast<int>(wire.rules[i].size())))
      return std::optional<RuleDatabase>();
    VERISUB_RETURN_IF_ERROR(DecodeRule(pr, i, /*check_id=*/false, file, options, &ids, &db));
  }
  VERISUB_RETURN_IF_ERROR(FinishDigest(h, true, h.digest(), file, options, &db));
  return std::optional<RuleDatabase>(std::move(db));
}

// Parses into a message on `arena` (one allocation pool instead of one per node: loading is
// about twice as fast).
StatusOr<v2::RuleDatabase*> ParseBytes(std::string_view bytes, const std::string& file,
                                       google::protobuf::Arena* arena) {
  auto* p = google::protobuf::Arena::CreateMessage<v2::RuleDatabase>(arena);
  if (bytes.size() > INT_MAX || !p->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return DataLoss(file +
                    ": not a valid rules file (protobuf parse failed: truncated or corrupt)");
  return p;
}

StatusOr<v2::RuleDatabase> ParseText(std::string_view text, const std::string& file) {
  auto p = ParseDatabaseText(text);
  if (!p.ok()) return p.status().WithContext(file);
  return p;
}

}  // namespace

bool IsTextForm(std::string_view contents) {
  const std::string first = std::string("# ") + kDatabaseMagic + "\n";
  return contents.substr(0, first.size()) == first;
}

void SortRules(std::vector<Rule>* rules) {
  struct Key {
    size_t nodes;
    std::string text;
    size_t index;
  };
  std::vector<Key> keys;
  keys.reserve(rules->size());
  for (size_t i = 0; i < rules->size(); ++i) {
    Rule& r = (*rules)[i];
    r = Canonicalize(r);
    keys.push_back({r.src.nodes.size() + r.dst.nodes.size(), r.ToText(), i});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return a.nodes != b.nodes ? a.nodes < b.nodes : a.text < b.text;
  });
  std::vector<Rule> sorted;
  sorted.reserve(rules->size());
  for (const Key& k : keys) sorted.push_back(std::move((*rules)[k.index]));
  *rules = std::move(sorted);
}

StatusOr<std::string> SerializeRuleDatabase(const DatabaseHeader& header, std::vector<Rule> rules) {
  VERISUB_ASSIGN_OR_RETURN(v2::RuleDatabase p, BuildProto(header, std::move(rules)));
  std::string out;
  if (!p.SerializeToString(&out)) return InternalError("protobuf serialization failed");
  return out;
}

StatusOr<std::string> FormatRuleDatabaseText(const DatabaseHeader& header,
                                             std::vector<Rule> rules) {
  VERISUB_ASSIGN_OR_RETURN(v2::RuleDatabase p, BuildProto(header, std::move(rules)));
  return FormatDatabaseText(p);
}

StatusOr<RuleDatabase> ParseRuleDatabaseBytes(std::string_view bytes, const std::string& file,
                                              const LoadOptions& options) {
  VERISUB_ASSIGN_OR_RETURN(std::optional<RuleDatabase> canonical,
                           DecodeCanonicalWire(bytes, file, options));
  if (canonical) return std::move(*canonical);
  google::protobuf::Arena arena;
  VERISUB_ASSIGN_OR_RETURN(v2::RuleDatabase * p, ParseBytes(bytes, file, &arena));
  return Decode(*p, file, options);
}

StatusOr<RuleDatabase> ParseRuleDatabaseText(std::string_view text, const std::string& file,
                                             const LoadOptions& options) {
  VERISUB_ASSIGN_OR_RETURN(v2::RuleDatabase p, ParseText(text, file));
  return Decode(p, file, options);
}

StatusOr<std::string> RuleDatabaseTextToBytes(std::string_view text, const std::string& file) {
  VERISUB_ASSIGN_OR_RETURN(v2::RuleDatabase p, ParseText(text, file));
  std::string out;
  if (!p.SerializeToString(&out)) return InternalError(file + ": protobuf serialization failed");
  return out;
}

StatusOr<std::string> RuleDatabaseBytesToText(std::string_view bytes, const std::string& file) {
  google::protobuf::Arena arena;
  VERISUB_ASSIGN_OR_RETURN(v2::RuleDatabase * p, ParseBytes(bytes, file, &arena));
  auto text = FormatDatabaseText(*p);
  if (!text.ok()) return text.status().WithContext(file);
  return text;
}

std::string TextPathFor(const std::string& path) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".pb") == 0)
    return path.substr(0, path.size() - 3) + ".txt";
  return path + ".txt";
}

Status WriteRuleDatabase(const std::string& path, const DatabaseHeader& header,
                         std::vector<Rule> rules) {
  VERISUB_ASSIGN_OR_RETURN(v2::RuleDatabase p, BuildProto(header, std::move(rules)));
  std::string bytes;
  if (!p.SerializeToString(&bytes)) return InternalError(path + ": protobuf serialization failed");
  auto text = FormatDatabaseText(p);
  if (!text.ok()) return text.status().WithContext(path);
  VERISUB_RETURN_IF_ERROR(WriteFileAtomically(path, bytes));
  return WriteFileAtomically(TextPathFor(path), *text);
}

StatusOr<RuleDatabase> LoadRuleDatabase(const std::string& path, const LoadOptions& options) {
  VERISUB_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  if (IsTextForm(contents)) return ParseRuleDatabaseText(contents, path, options);
  return ParseRuleDatabaseBytes(contents, path, options);
}

}  // namespace verisub::ruledb
