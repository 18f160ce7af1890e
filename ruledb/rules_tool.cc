// verisub-rules commands.
#include "ruledb/rules_tool.h"

#include <map>
#include <set>

#include "base/flags.h"
#include "specs/registry.h"

namespace verisub::ruledb {
namespace {

constexpr char kCommands[] =
    "commands:\n"
    "  stats FILE    counts by size, operator, outputs, proof status and ranks\n"
    "  dump FILE     the canonical text form\n"
    "  diff A B      rules added and removed, by id\n"
    "  check FILE    schema, digest, op set and proof status (exit 1 on a problem); with\n"
    "                --reprove also proves every rule claimed proved again with Z3\n"
    "Exit codes: 0 ok, 1 a check failed or a file could not be read, 2 bad usage.";

// Inspection loads everything: unproved rules, and files of other op sets (with a warning).
LoadOptions InspectOptions() {
  LoadOptions o;
  o.proved_only = false;
  o.allow_op_set_mismatch = true;
  o.check_digest = false;  // reported by check, warned about by the others
  return o;
}

// Reports an error that stops the command; returns its exit code.
int Fail(const Status& st, std::string* err) {
  *err += st.message() + "\n";
  return 1;
}

void AppendWarnings(const RuleDatabase& db, std::string* err) {
  for (const std::string& w : db.warnings) *err += "warning: " + w + "\n";
  if (db.skipped_unknown_operator > 0)
    *err += "warning: skipped " + std::to_string(db.skipped_unknown_operator) +
            " rules with operators unknown to this build\n";
}

}  // namespace

std::string FormatRuleStats(const RuleDatabase& db) {
  std::map<size_t, int> by_size, by_outputs;
  std::map<std::string, int> by_op, by_status;
  int ranked = 0;
  for (const Rule& r : db.rules) {
    ranked += !r.input_ranks.empty();
    ++by_size[r.src.nodes.size() + r.dst.nodes.size()];
    ++by_outputs[r.src.outputs.size()];
    ++by_status[ProofStatusName(r.proof.status)];
    std::set<std::string> ops;
    for (const PatternGraph* g : {&r.src, &r.dst})
      for (const PatternNode& n : g->nodes) ops.insert(specs::GetOp(n.op).name);
    for (const std::string& op : ops) ++by_op[op];
  }
  std::string s = "rules: " + std::to_string(db.rules.size()) + "\n";
  s += "with input ranks: " + std::to_string(ranked) + "\n";
  if (db.skipped_unknown_operator > 0)
    s += "skipped (unknown operators): " + std::to_string(db.skipped_unknown_operator) + "\n";
  s += "by size (operators in source + target):\n";
  for (const auto& [k, v] : by_size)
    s += "  " + std::to_string(k) + ": " + std::to_string(v) + "\n";
  s += "by outputs:\n";
  for (const auto& [k, v] : by_outputs)
    s += "  " + std::to_string(k) + ": " + std::to_string(v) + "\n";
  s += "by operator (rules using it):\n";
  for (const auto& [k, v] : by_op) s += "  " + k + ": " + std::to_string(v) + "\n";
  s += "by proof status:\n";
  for (const auto& [k, v] : by_status) s += "  " + k + ": " + std::to_string(v) + "\n";
  return s;
}

std::string FormatRuleDiff(const RuleDatabase& a, const RuleDatabase& b) {
  std::map<std::string, std::string> in_a, in_b;
  for (const Rule& r : a.rules) in_a[r.Id()] = r.ToText();
  for (const Rule& r : b.rules) in_b[r.Id()] = r.ToText();
  std::string s;
  int added = 0, removed = 0;
  for (const auto& [id, text] : in_a) {
    if (in_b.count(id)) continue;
    s += "- " + id + " " + text + "\n";
    ++removed;
  }
  for (const auto& [id, text] : in_b) {
    if (in_a.count(id)) continue;
    s += "+ " + id + " " + text + "\n";
    ++added;
  }
  return s + std::to_string(added) + " added, " + std::to_string(removed) + " removed, " +
         std::to_string(in_a.size() - removed) + " unchanged\n";
}

std::string CheckRuleDatabase(const RuleDatabase& db, bool* ok) {
  *ok = true;
  std::string s = "schema version: " + std::to_string(db.header.schema_version) + " (ok)\n";
  if (db.digest_ok) {
    s += "digest: " + db.header.digest + " (matches the header and rules)\n";
  } else {
    s += "digest: " + (db.header.digest.empty() ? std::string("none") : db.header.digest) +
         " (MISMATCH: the file was changed after it was written, or made by hand)\n";
    *ok = false;
  }
  const std::string ours = specs::OpSetFingerprintHex();
  if (db.header.op_set_fingerprint == ours) {
    s += "op set: " + ours + " (matches this build)\n";
  } else {
    s += "op set: " + db.header.op_set_fingerprint + " (MISMATCH: this build has " + ours + ")\n";
    *ok = false;
  }
  if (db.skipped_unknown_operator > 0) {
    s += "rules with unknown operators: " + std::to_string(db.skipped_unknown_operator) + "\n";
    *ok = false;
  }
  int unproved = 0;
  for (const Rule& r : db.rules)
    if (r.proof.status != ProofStatus::kProved) {
      if (unproved++ < 10)
        s += "not proved (" + std::string(ProofStatusName(r.proof.status)) + "): " + r.Id() + " " +
             r.ToText() + "\n";
    }
  s += "rules: " + std::to_string(db.rules.size()) +
       ", proved: " + std::to_string(db.rules.size() - unproved) +
       ", not proved: " + std::to_string(unproved) + "\n";
  if (unproved > 0) *ok = false;
  return s + (*ok ? "OK\n" : "FAILED\n");
}

std::string ReproveRuleDatabase(const RuleDatabase& db, const ReproveFn& reprove, bool* ok) {
  *ok = true;
  std::vector<Rule> claimed;
  for (const Rule& r : db.rules)
    if (r.proof.status == ProofStatus::kProved) claimed.push_back(r);
  std::vector<Rule> again = claimed;
  for (Rule& r : again) r.proof = ProofRecord();
  auto summary = reprove(&again);
  if (!summary.ok()) {
    *ok = false;
    return "reprove: " + summary.status().message() + "\nFAILED\n";
  }
  std::string s = "reprove: " + *summary + "\n";
  int failed = 0;
  for (size_t i = 0; i < again.size(); ++i) {
    if (again[i].proof.status == ProofStatus::kProved) continue;
    if (failed++ < 20)
      s += "claims a proof but is " + std::string(ProofStatusName(again[i].proof.status)) + ": " +
           claimed[i].Id() + " " + claimed[i].ToText() + "\n";
  }
  s += "re-proved " + std::to_string(again.size() - failed) + " of " +
       std::to_string(again.size()) + " rules that claim a proof\n";
  if (failed > 0) *ok = false;
  return s + (*ok ? "OK\n" : "FAILED\n");
}

int RunRulesTool(const std::vector<std::string>& args, std::string* out, std::string* err,
                 const ReproveFn& reprove) {
  std::string cmd;
  std::vector<std::string> files;
  bool do_reprove = false;
  base::Flags flags("verisub-rules", "stats|dump|check FILE | diff A B", kCommands);
  flags.Positional("COMMAND", &cmd, "stats, dump, diff or check")
      .Positionals("FILE", &files, "rules files (two for diff)")
      .Bool("--reprove", &do_reprove, "check: prove every rule claimed proved again with Z3");
  Status parsed = flags.Parse(args);
  if (flags.help_requested()) {
    *out += flags.Help();
    return 0;
  }
  if (parsed.ok() && cmd != "stats" && cmd != "dump" && cmd != "diff" && cmd != "check")
    parsed = InvalidArgument("unknown command '" + cmd + "'");
  if (parsed.ok() && do_reprove && cmd != "check")
    parsed = InvalidArgument("--reprove is an option of check");
  if (parsed.ok() && files.size() != (cmd == "diff" ? 2u : 1u))
    parsed = InvalidArgument(cmd + " takes " + (cmd == "diff" ? "two files" : "one file"));
  if (!parsed.ok()) {
    *err += "verisub-rules: " + parsed.message() + "\n" + flags.Help();
    return 2;
  }
  if (cmd == "dump") {
    // Straight from the file, without the operator registry: a lossless rendering of every
    // rule, including those this build cannot load.
    auto contents = ReadFile(files[0]);
    if (!contents.ok()) return Fail(contents.status(), err);
    StatusOr<std::string> bytes = *contents;
    if (IsTextForm(*contents)) bytes = RuleDatabaseTextToBytes(*contents, files[0]);
    if (!bytes.ok()) return Fail(bytes.status(), err);
    auto text = RuleDatabaseBytesToText(*bytes, files[0]);
    if (!text.ok()) return Fail(text.status(), err);
    *out += *text;
    return 0;
  }
  std::vector<RuleDatabase> dbs;
  for (const std::string& file : files) {
    auto db = LoadRuleDatabase(file, InspectOptions());
    if (!db.ok()) return Fail(db.status(), err);
    AppendWarnings(*db, err);
    dbs.push_back(std::move(*db));
  }
  if (cmd == "stats") {
    *out += FormatRuleStats(dbs[0]);
    return 0;
  }
  if (cmd == "diff") {
    *out += FormatRuleDiff(dbs[0], dbs[1]);
    return 0;
  }
  bool ok = false;
  *out += CheckRuleDatabase(dbs[0], &ok);
  if (do_reprove) {
    if (!reprove) return Fail(Unimplemented("this program cannot re-prove rules"), err);
    bool proved = false;
    *out += ReproveRuleDatabase(dbs[0], reprove, &proved);
    ok = ok && proved;
  }
  return ok ? 0 : 1;
}

}  // namespace verisub::ruledb
