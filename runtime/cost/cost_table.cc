// Cost tables: text form, checks, merge.
#include "runtime/cost/cost_table.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "base/file_io.h"
#include "base/string_printf.h"
#include "runtime/cost/cost_table.pb.h"

namespace verisub::runtime {
namespace {

constexpr char kMagic[] = "verisub-cost-table";
// A table of a million entries is about 150 MB of text.
constexpr uint64_t kMaxTableBytes = uint64_t{512} << 20;

namespace pb = verisub::costs::v1;

// Collects the text-format parser's complaints instead of letting protobuf log them.
class Collector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first.empty())
      first = "line " + std::to_string(line + 1) + ", column " + std::to_string(column + 1) + ": " +
              message;
  }
  void AddWarning(int, int, const std::string&) override {}
  std::string first;
};

}  // namespace

bool CostTableHeader::SameMachine(const CostTableHeader& o) const {
  return engine == o.engine && engine_version == o.engine_version &&
         backend_revision == o.backend_revision && cpu_model == o.cpu_model && isa == o.isa &&
         threads == o.threads;
}

std::string CostTableHeader::Describe() const {
  return engine + " " + engine_version + " (backend r" + std::to_string(backend_revision) + "), " +
         isa + ", " + std::to_string(threads) + (threads == 1 ? " thread, " : " threads, ") +
         cpu_model;
}

std::string CostTableHeader::FileName() const {
  std::string name = engine + "-" + engine_version + "-r" + std::to_string(backend_revision) + "-" +
                     isa + "-t" + std::to_string(threads) + "-" + cpu_model;
  std::string out;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    char m = std::isalnum(u) || c == '.' ? static_cast<char>(std::tolower(u)) : '-';
    if (m == '-' && (out.empty() || out.back() == '-')) continue;
    out += m;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out + ".costs.txt";
}

namespace {

StatusOr<pb::CostTable> ParseText(std::string_view text, const std::string& source) {
  pb::CostTable proto;
  google::protobuf::TextFormat::Parser parser;
  Collector errors;
  parser.RecordErrorsTo(&errors);
  if (text.size() > kMaxTableBytes)
    return InvalidArgument("cost table '" + source + "' is larger than " +
                           std::to_string(kMaxTableBytes >> 20) + " MB");
  if (!parser.ParseFromString(std::string(text), &proto))
    return InvalidArgument("cost table '" + source + "' does not parse: " +
                           (errors.first.empty() ? "malformed text" : errors.first));
  return proto;
}

constexpr char kParsedMagic[] = "verisub-parsed-cost-table ";

}  // namespace

StatusOr<CostTable> CostTable::Parse(std::string_view text, const std::string& source) {
  VERISUB_ASSIGN_OR_RETURN(pb::CostTable proto, ParseText(text, source));
  return FromProto(&proto, source);
}

StatusOr<CostTable> CostTable::Load(const std::string& path, const std::string& parsed_dir) {
  if (parsed_dir.empty()) return Load(path);
  // Both files are mapped, not read: a 9 MB table read into a fresh string cost 43 ms of page
  // faults before its hash, its 6.5 MB copy 31 ms more (this VM, 11:40 UTC). Anything the mapping
  // refuses (an empty or missing file, a device) takes the reading path for its error.
  auto text = base::MappedFile::Open(path, kMaxTableBytes);
  if (!text.ok()) return Load(path);
  text->Populate(text->data(), text->size());
  const std::string_view text_view(static_cast<const char*>(text->data()), text->size());
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string where = fs::absolute(path, ec).lexically_normal().string();
  const fs::path copy =
      fs::path(parsed_dir) / (base::Hex64(XXH3_64bits(where.data(), where.size())) + ".costs.pb");
  const XXH128_hash_t h = XXH3_128bits(text_view.data(), text_view.size());
  const std::string first_line = kParsedMagic + base::Hex64(h.high64) + base::Hex64(h.low64) + "\n";
  if (auto bytes = base::MappedFile::Open(copy.string(), kMaxTableBytes); bytes.ok()) {
    bytes->Populate(bytes->data(), bytes->size());
    const std::string_view b(static_cast<const char*>(bytes->data()), bytes->size());
    pb::CostTable proto;
    if (b.substr(0, first_line.size()) == first_line &&
        proto.ParseFromArray(b.data() + first_line.size(),
                             static_cast<int>(b.size() - first_line.size())))
      if (auto t = FromProto(&proto, path); t.ok()) return t;
  }
  VERISUB_ASSIGN_OR_RETURN(pb::CostTable proto, ParseText(text_view, path));
  std::string out;
  const bool serialized = proto.SerializeToString(&out);
  VERISUB_ASSIGN_OR_RETURN(CostTable table, FromProto(&proto, path));
  if (fs::create_directories(parsed_dir, ec), !ec && serialized)
    (void)base::WriteFileAtomically(copy.string(), first_line + out);  // best-effort
  return table;
}

StatusOr<CostTable> CostTable::FromProto(pb::CostTable* message, const std::string& source) {
  pb::CostTable& proto = *message;
  const pb::CostTableHeader& h = proto.header();
  if (h.magic() != kMagic)
    return InvalidArgument("'" + source + "' is not a verisub cost table (header.magic is not \"" +
                           kMagic + "\")");
  if (h.schema_version() != kCostTableSchema)
    return InvalidArgument("cost table '" + source + "' has schema " +
                           std::to_string(h.schema_version()) + "; this build reads schema " +
                           std::to_string(kCostTableSchema) + " (measure it again)");
  if (h.threads() < 1 || h.threads() > 4096)
    return InvalidArgument("cost table '" + source + "': header.threads must be in [1, 4096]");
  if (proto.entries_size() > kMaxCostTableEntries)
    return InvalidArgument("cost table '" + source + "' has more than " +
                           std::to_string(kMaxCostTableEntries) + " entries");
  CostTableHeader header{h.engine(),
                         h.engine_version(),
                         h.cpu_model(),
                         h.isa(),
                         static_cast<int>(h.threads()),
                         static_cast<int>(h.backend_revision())};
  CostTable table(std::move(header));
  // Tables are written sorted by key: each entry then goes in at the end of the map in constant
  // time (an unsorted, hand-edited table is still read, in logarithmic time per entry).
  for (int i = 0; i < proto.entries_size(); ++i) {
    pb::CostEntry& e = *proto.mutable_entries(i);
    auto where = [&] { return "cost table '" + source + "', entry " + std::to_string(i + 1); };
    if (e.key().empty()) return InvalidArgument(where() + ": empty key");
    // A measured kernel takes some time, and less than an hour (3.6e9 us): anything else is a
    // damaged or forged table (1e300 us once went through and printed as a 300-digit cost).
    if (!std::isfinite(e.time_us()) || e.time_us() < kMinKernelTimeUs ||
        e.time_us() > kMaxKernelTimeUs)
      return InvalidArgument(where() + " ('" + e.key() +
                             "'): time_us must be finite, from 1e-3 to 3.6e9 (an hour)");
    if (e.runs() > 1000000000u)
      return InvalidArgument(where() + " ('" + e.key() + "'): runs out of range");
    const size_t before = table.entries_.size();
    auto it = table.entries_.emplace_hint(table.entries_.end(), std::move(*e.mutable_key()),
                                          CostTableEntry{e.time_us(), static_cast<int>(e.runs())});
    if (table.entries_.size() == before)
      return InvalidArgument(where() + ": key '" + it->first + "' appears twice");
  }
  return table;
}

StatusOr<CostTable> CostTable::Load(const std::string& path) {
  auto text = base::ReadFile(path, kMaxTableBytes);
  if (!text.ok()) return text.status().WithContext("cost table");
  return Parse(*text, path);
}

std::string CostTable::Serialize() const {
  pb::CostTable proto;
  pb::CostTableHeader* h = proto.mutable_header();
  h->set_magic(kMagic);
  h->set_schema_version(kCostTableSchema);
  h->set_engine(header_.engine);
  h->set_engine_version(header_.engine_version);
  h->set_cpu_model(header_.cpu_model);
  h->set_isa(header_.isa);
  h->set_threads(static_cast<uint32_t>(header_.threads));
  h->set_backend_revision(static_cast<uint32_t>(header_.backend_revision));
  for (const auto& [key, e] : entries_) {  // std::map: sorted by key
    pb::CostEntry* pe = proto.add_entries();
    pe->set_key(key);
    pe->set_time_us(e.time_us);
    pe->set_runs(static_cast<uint32_t>(e.runs));
  }
  std::string out =
      "# verisub cost table (runtime/cost/cost_table.proto): " + header_.Describe() + "\n";
  std::string body;
  google::protobuf::TextFormat::Printer printer;
  printer.SetUseUtf8StringEscaping(true);
  printer.PrintToString(proto, &body);
  return out + body;
}

Status CostTable::Save(const std::string& path) const {
  CostTable merged = *this;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    // A table of the same machine there: keep what it has and we lack. Anything else (another
    // machine, a damaged file) is replaced by ours.
    auto existing = Load(path);
    if (existing.ok() && existing->header().SameMachine(header_)) merged.MergeMissing(*existing);
  }
  return base::WriteFileAtomically(path, merged.Serialize()).WithContext("cost table");
}

std::optional<double> CostTable::Find(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.time_us;
}

void CostTable::Insert(const std::string& key, double time_us, int runs) {
  if (!(time_us >= kMinKernelTimeUs)) time_us = kMinKernelTimeUs;  // NaN too
  entries_[key] = CostTableEntry{std::min(time_us, kMaxKernelTimeUs), runs};
}

int CostTable::MergeMissing(const CostTable& other) {
  int added = 0;
  for (const auto& [key, e] : other.entries_) added += entries_.emplace(key, e).second;
  return added;
}

}  // namespace verisub::runtime
