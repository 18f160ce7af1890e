// Load-time benchmark: writes a database of N distinct rules (fixture rules and relu-wrapped
// copies) and prints the time to load it as protobuf and as text. Usage, from the source root:
// ruledb_load_bench [--count N]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

#include "base/flags.h"
#include "ruledb/database.h"
#include "ruledb/prune.h"
#include "tests/ruledb/fixture.h"

namespace verisub::ruledb {
namespace {

// Wraps every output of a single-output rule in `depth` unary ops, cycling through four, which
// keeps rules distinct and realistic in size.
std::vector<Rule> MakeRules(const std::vector<Rule>& base, size_t n) {
  const char* ops[] = {"relu", "tanh", "sigmoid", "transpose[perm=[1,0]]"};
  std::vector<Rule> rules;
  for (size_t k = 0; rules.size() < n; ++k) {
    for (const Rule& r : base) {
      if (rules.size() == n) break;
      if (r.src.outputs.size() != 1 && k > 0) continue;
      std::string text = r.ToText();
      size_t arrow = text.find(" => ");
      std::string src = text.substr(0, arrow), dst = text.substr(arrow + 4);
      for (size_t d = k; d > 0; d /= 4) {
        src = std::string("(") + ops[d % 4] + " " + src + ")";
        dst = std::string("(") + ops[d % 4] + " " + dst + ")";
      }
      auto parsed = ParseRule(src + " => " + dst);
      if (!parsed.ok()) continue;
      parsed->proof = r.proof;
      rules.push_back(*parsed);
    }
  }
  return rules;
}

// Loads `p` 20 times and prints the best wall and CPU time.
int TimeLoad(const std::string& p) {
  double best = 1e9, best_cpu = 1e9;
  size_t loaded = 0;
  for (int rep = 0; rep < 20; ++rep) {
    auto start = std::chrono::steady_clock::now();
    std::clock_t cpu_start = std::clock();
    auto db = LoadRuleDatabase(p);
    double cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (cpu_ms < best_cpu) best_cpu = cpu_ms;
    if (!db.ok()) {
      std::fprintf(stderr, "%s\n", db.status().message().c_str());
      return 1;
    }
    loaded = db->rules.size();
    if (ms < best) best = ms;
  }
  auto size = ReadFile(p);
  std::printf("%s: %zu rules, %zu bytes, load %.2f ms wall, %.2f ms CPU (best of 20)\n", p.c_str(),
              loaded, size.ok() ? size->size() : 0, best, best_cpu);
  return 0;
}

int Main(int argc, char** argv) {
  int64_t n = 1000;
  base::Flags flags("ruledb_load_bench", "[--count N]",
                    "Times loading (protobuf and text) and pruning of N generated rules.");
  flags.Int64("--count", &n, 1, 100000000, "rules in the generated database");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  auto base = testing::LoadFixtureRules();
  if (!base.ok()) {
    std::fprintf(stderr, "%s\n", base.status().message().c_str());
    return 1;
  }
  std::vector<Rule> rules = MakeRules(*base, static_cast<size_t>(n));
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("verisub_ruledb_bench_" + std::to_string(::getpid()) + ".pb"))
                               .string();
  Status st = WriteRuleDatabase(path, testing::TestHeader(), rules);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  for (const std::string& p : {path, TextPathFor(path)})
    if (TimeLoad(p) != 0) return 1;
  // The shipped database, when run from the source folder.
  for (const char* p : {"data/rules/taso.pb", "data/rules/taso.txt"})
    if (std::filesystem::exists(p) && TimeLoad(p) != 0) return 1;
  // Pruning the same rules (they are irredundant apart from the relu-wrapped copies).
  auto start = std::chrono::steady_clock::now();
  auto pruned = PruneRules(rules);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!pruned.ok()) {
    std::fprintf(stderr, "%s\n", pruned.status().message().c_str());
    return 1;
  }
  std::printf("PruneRules: %zu -> %zu rules in %.1f ms\n%s", rules.size(), pruned->rules.size(), ms,
              pruned->report.ToString().c_str());
  std::filesystem::remove(path);
  std::filesystem::remove(TextPathFor(path));
  return 0;
}

}  // namespace
}  // namespace verisub::ruledb

int main(int argc, char** argv) { return verisub::ruledb::Main(argc, argv); }
