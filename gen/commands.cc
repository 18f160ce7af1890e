// verisub-gen's modes.
#include "gen/commands.h"

#include <cstdio>
#include <vector>

#include "base/file_io.h"
#include "base/string_printf.h"
#include "gen/config.h"
#include "gen/generator.h"
#include "gen/rule_coverage.h"
#include "ruledb/database.h"
#include "specs/axiom.h"
#include "specs/registry.h"

namespace verisub::gen {
namespace {

int Fail(const Status& st, int code, std::string* err) {
  *err += "verisub-gen: " + st.message() + "\n";
  return code;
}

}  // namespace

int ListOpSet(std::string* out, std::string* err) {
  using namespace specs;  // NOLINT
  auto axioms = AllAxioms();
  if (!axioms.ok()) return Fail(axioms.status(), kExitFailed, err);
  base::StringAppendF(out, "%-14s %-3s %-3s %-34s %s\n", "operator", "in", "out", "layouts",
                      "parameters {generator domain}");
  for (const OpSpec& op : AllOps()) {
    std::string params;
    for (const ParamDesc& d : op.params) {
      params += d.name + "{";
      for (size_t i = 0; i < d.domain.size(); ++i) {
        Params p;
        p[d.slot] = d.domain[i];
        params += (i ? "," : "") + FormatParamValue(d, p);
      }
      params += "} ";
    }
    std::string layouts = op.layouts.layout_agnostic ? "any (elementwise)" : "";
    for (Layout l : op.layouts.layouts)
      layouts += (layouts.empty() ? "" : ",") + std::string(LayoutName(l));
    if (layouts.empty()) layouts = "plain";
    base::StringAppendF(out, "%-14s %-3d %-3d %-34s %s\n", op.name.c_str(), op.num_inputs,
                        op.num_outputs, layouts.c_str(), params.c_str());
  }
  base::StringAppendF(out, "\n%zu operators, %zu axioms, op-set fingerprint %s\n", AllOps().size(),
                      axioms->size(), OpSetFingerprintHex().c_str());
  return kExitOk;
}

int WriteCandidatesCommand(const CandidatesCommand& command, std::string* out, std::string* err) {
  auto config = LoadConfig(command.config_path);
  if (!config.ok()) return Fail(config.status(), kExitUsage, err);
  std::vector<ReferenceRule> reference;
  if (!command.reference_path.empty()) {
    auto text = base::ReadFile(command.reference_path);
    if (!text.ok()) return Fail(text.status(), kExitUsage, err);
    auto rules = ParseReferenceRules(*text, command.reference_path);
    if (!rules.ok()) return Fail(rules.status(), kExitUsage, err);
    reference = std::move(*rules);
  }
  GenOptions options;
  options.threads = command.threads;
  options.progress = command.progress;
  options.rules = false;  // the dump is text
  options.memory_budget_bytes = command.memory_budget_bytes;
  auto result = RunGenerator(*config, options);
  if (!result.ok()) return Fail(result.status(), kExitUsage, err);
  Status st = WriteCandidates(result->texts, command.out_path);
  if (!st.ok()) return Fail(st, kExitFailed, err);
  *out += FormatReport(result->report);
  *out += "candidates written to " + command.out_path + "\n";
  if (command.reference_path.empty()) return kExitOk;
  CoverageReport cov = CheckCoverage(RuleIndex(result->texts), reference);
  base::StringAppendF(
      out,
      "reference rules (%s): %zu; candidates %d, through a smaller equal graph %zu, missing "
      "%zu\n",
      command.reference_path.c_str(), reference.size(), cov.candidates, cov.via.size(),
      cov.missing.size());
  for (const std::string& m : cov.via) *out += "through a smaller equal graph: " + m + "\n";
  for (const std::string& m : cov.missing) *out += "missing: " + m + "\n";
  return cov.missing.empty() ? kExitOk : kExitMissingRules;
}

int GenerateDatabaseCommand(const PipelineOptions& options, std::string* out, std::string* err) {
  auto report = RunPipeline(options);
  if (!report.ok()) return Fail(report.status(), kExitFailed, err);
  *out += FormatReport(report->gen);
  *out += "pruning before proofs:\n" + report->preprune.ToString();
  if (!options.prepruned_path.empty()) {
    base::StringAppendF(out, "%lld candidates for the prover written to %s\n",
                        static_cast<long long>(report->preprune.output),
                        options.prepruned_path.c_str());
    return kExitOk;
  }
  *out += report->verify.Summary() + "\n";
  *out += "pruning after proofs:\n" + report->prune.ToString();
  *out += report->Summary();
  *out += "rules written to " + options.out_path + " and " + ruledb::TextPathFor(options.out_path) +
          "\n";
  return kExitOk;
}

}  // namespace verisub::gen
