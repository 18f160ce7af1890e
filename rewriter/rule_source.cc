// Where rules come from: the rules database (protobuf or text form) or a plain list of rules.
#include "rewriter/rule_source.h"

#include <dlfcn.h>

#include <filesystem>
#include <sstream>

#include "base/file_io.h"
#include "ruledb/database.h"
#include "ruledb/rule_list.h"

namespace verisub::rewriter {

StatusOr<std::vector<ruledb::Rule>> ParseRulesText(std::string_view text,
                                                   const std::string& source) {
  return ruledb::ParseRuleList(text, source);
}

std::string FindShippedPath(const std::string& relative) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> candidates = {relative};
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path() / "../.." / relative);
    // Installed: share/verisub/ holds what data/ holds in the source tree.
    fs::path rel(relative);
    if (rel.begin() != rel.end() && *rel.begin() == "data")
      candidates.push_back(exe.parent_path() / "../share/verisub" / rel.lexically_relative("data"));
  }
  // Installed beside a library that embeds this code (lib/libverisub.so -> share/verisub).
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&FindShippedPath), &info) != 0 && info.dli_fname) {
    fs::path rel(relative), lib = fs::weakly_canonical(info.dli_fname, ec);
    if (!ec && rel.begin() != rel.end() && *rel.begin() == "data")
      candidates.push_back(lib.parent_path() / "../share/verisub" / rel.lexically_relative("data"));
  }
#ifdef VERISUB_SOURCE_DIR
  candidates.push_back(fs::path(VERISUB_SOURCE_DIR) / relative);
#endif
  for (const fs::path& p : candidates)
    if (fs::exists(p, ec)) return p.lexically_normal().string();
  return "";
}

std::string FindDefaultRules() {
  std::string p = FindShippedPath(kDefaultRulesPath);
  return p.empty() ? kDefaultRulesPath : p;
}

StatusOr<std::vector<ruledb::Rule>> LoadRules(const std::string& path) {
  auto read = base::ReadFile(path);
  if (!read.ok())
    return Status(read.status().code(),
                  "rules file: " + read.status().message() +
                      " (pass --rules PATH, e.g. a text file with one rule per line)");
  std::string bytes = std::move(read).value();
  // Zero rules is never what a user meant: say so rather than optimize with nothing.
  if (bytes.find_first_not_of(" \t\r\n") == std::string::npos)
    return InvalidArgument("rules file '" + path + "' is empty");
  bool plain_text = !ruledb::IsTextForm(bytes);
  for (unsigned char c : bytes)
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') plain_text = false;
  if (plain_text) {
    auto rules = ParseRulesText(bytes, path);
    if (rules.ok() && rules->empty())
      return InvalidArgument("rules file '" + path + "' has no rules (only comments)");
    return rules;
  }
  // A rules database (protobuf or its text form): schema, op set and ids are checked on load;
  // unproved rules are kept here so that RuleSet::Compile counts them (and --allow-unproved
  // can use them).
  ruledb::LoadOptions options;
  options.proved_only = false;
  auto db = ruledb::LoadRuleDatabase(path, options);
  if (!db.ok()) return db.status();
  if (db->rules.empty()) return InvalidArgument("rules database '" + path + "' has no rules");
  return std::move(db->rules);
}

}  // namespace verisub::rewriter
