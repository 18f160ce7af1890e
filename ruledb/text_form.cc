// Rule database <-> canonical text, without the operator registry (see text_form.h).
#include "ruledb/text_form.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "ruledb/rule.h"
#include "ruledb/rule_text.h"
#include "specs/registry.h"
#include "specs/term.h"

namespace verisub::ruledb {
namespace {

// A rule id as written: 16 lowercase hex digits.
bool IsRuleId(std::string_view id) {
  return id.size() == 16 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

constexpr int64_t kMaxTreeSize = 100000;
constexpr std::string_view kProofSeparator = "  # ";

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-' || c == ':';
}

bool IsName(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsNameChar);
}

std::string FormatDouble(double d) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, res.ptr);
}

template <class T>
StatusOr<T> ParseNumber(std::string_view s, const char* what) {
  T v{};
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || s.empty())
    return InvalidArgument(std::string("bad ") + what + " '" + std::string(s) + "'");
  return v;
}

// Writes pattern values as terms; `.k` is written for multi-output operators (and, for
// operators this op set does not know, whenever k > 0).
class GraphFormatter {
 public:
  explicit GraphFormatter(const v2::Graph& g) : g_(g) {}

  std::string Side() const {
    std::string s;
    for (int i = 0; i < g_.outputs_size(); ++i) {
      if (i) s += " ; ";
      Value(g_.outputs(i), &s);
    }
    return s;
  }

 private:
  void Value(const v2::Value& v, std::string* s) const {
    if (v.node() < 0) {
      *s += InputName(static_cast<int>(v.index()));
      return;
    }
    const v2::Node& n = g_.nodes(v.node());
    const specs::OpSpec* op = specs::FindOp(n.op());
    *s += "(" + n.op();
    if (op ? op->num_outputs > 1 : v.index() > 0) *s += "." + std::to_string(v.index());
    if (n.params_size() > 0) {
      *s += "[";
      for (int i = 0; i < n.params_size(); ++i)
        *s += (i ? "," : "") + n.params(i).name() + "=" + n.params(i).value();
      *s += "]";
    }
    for (const v2::Value& in : n.inputs()) {
      *s += " ";
      Value(in, s);
    }
    *s += ")";
  }

  const v2::Graph& g_;
};

// Names inside a term are term tokens (specs/term.cc): a name character but '.' (the output
// separator) and ':' (found by fuzzing: an operator "ewad:" was written as text the term
// parser refused; tests/fuzz/corpus/rules_proto/regress_colon_in_operator_name.pb).
bool IsTermName(const std::string& s) {
  return IsName(s) && s.find_first_of(".:") == std::string::npos;
}

Status CheckNodeNames(const v2::Graph& g) {
  for (const v2::Node& n : g.nodes()) {
    if (!IsTermName(n.op()))
      return InvalidArgument("operator name '" + n.op() + "' cannot be written as text");
    for (const v2::Param& p : n.params()) {
      if (!IsTermName(p.name()))
        return InvalidArgument("parameter name '" + p.name() + "' cannot be written as text");
      for (char c : p.value())
        if ((!IsNameChar(c) || c == ':') && c != '[' && c != ']' && c != '+' && c != ',')
          return InvalidArgument("parameter value '" + p.value() + "' cannot be written as text");
    }
  }
  return Status::Ok();
}

// Builds a graph message from parsed terms, merging identical nodes; inputs numbered as the
// text names them (by first appearance, the canonical order, so canonical text maps to the
// canonical message).
class GraphBuilder {
 public:
  explicit GraphBuilder(const std::map<std::string, int>& inputs) : inputs_(inputs) {}

  v2::Value Add(const specs::TermAst& t) {
    v2::Value v;
    if (t.is_leaf) {
      v.set_node(-1);
      v.set_index(static_cast<uint32_t>(inputs_.at(t.head)));
      return v;
    }
    v2::Node n;
    n.set_op(t.head);
    for (const auto& [key, value] : t.params) {
      v2::Param* p = n.add_params();
      p->set_name(key);
      p->set_value(value);
    }
    for (const specs::TermAst& a : t.args) *n.add_inputs() = Add(a);
    std::string key = n.SerializeAsString();
    auto [it, inserted] = node_ids_.emplace(key, g_.nodes_size());
    if (inserted) *g_.add_nodes() = std::move(n);
    v.set_node(it->second);
    v.set_index(static_cast<uint32_t>(t.output));
    return v;
  }

  v2::Graph Side(const std::vector<specs::TermAst>& terms) {
    for (const specs::TermAst& t : terms) *g_.add_outputs() = Add(t);
    return std::move(g_);
  }

 private:
  const std::map<std::string, int>& inputs_;
  std::map<std::string, int> node_ids_;
  v2::Graph g_;
};

// `id status [axioms=a,b] seconds=s [reason="..."]`
Status ParseProofSuffix(std::string_view s, v2::Rule* r) {
  std::string_view reason;
  if (size_t q = s.find(" reason="); q != std::string_view::npos) {
    reason = s.substr(q + 8);
    s = s.substr(0, q);
  }
  std::vector<std::string_view> words;
  for (size_t start = 0; start <= s.size();) {
    size_t sp = std::min(s.find(' ', start), s.size());
    words.push_back(s.substr(start, sp - start));
    start = sp + 1;
  }
  if (words.size() < 3) return InvalidArgument("expected '# id status seconds=...' after the rule");
  if (!IsRuleId(words[0])) return InvalidArgument("bad rule id '" + std::string(words[0]) + "'");
  r->set_id(std::string(words[0]));
  v2::ProofRecord* p = r->mutable_proof();
  std::optional<ProofStatus> status = ParseProofStatusName(words[1]);
  if (!status) return InvalidArgument("unknown proof status '" + std::string(words[1]) + "'");
  p->set_status(ProofStatusToProto(*status));
  size_t w = 2;
  if (words[w].substr(0, 7) == "axioms=") {
    std::string_view list = words[w].substr(7);
    for (size_t start = 0; start <= list.size();) {
      size_t comma = std::min(list.find(',', start), list.size());
      std::string_view a = list.substr(start, comma - start);
      if (!IsName(a)) return InvalidArgument("bad axiom name '" + std::string(a) + "'");
      p->add_axioms_used(std::string(a));
      start = comma + 1;
    }
    ++w;
  }
  if (w >= words.size() || words[w].substr(0, 8) != "seconds=")
    return InvalidArgument("expected seconds=...");
  VERISUB_ASSIGN_OR_RETURN(double sec, ParseNumber<double>(words[w].substr(8), "seconds"));
  p->set_seconds(sec);
  if (++w != words.size())
    return InvalidArgument("unexpected '" + std::string(words[w]) + "' in the proof record");
  if (reason.data()) {
    VERISUB_ASSIGN_OR_RETURN(std::string text, UnquoteString(reason));
    if (text.empty()) return InvalidArgument("empty reason is written by leaving it out");
    p->set_reason(text);
  }
  return Status::Ok();
}

// Header fields in the order they are written.
enum class Field {
  kSchemaVersion,
  kOpSet,
  kMaxOps,
  kTool,
  kZ3,
  kConfig,
  kCount,
  kNumRules,
  kDigest
};
constexpr std::pair<Field, const char*> kFields[] = {
    {Field::kSchemaVersion, "schema_version"},
    {Field::kOpSet, "op_set_fingerprint"},
    {Field::kMaxOps, "max_ops"},
    {Field::kTool, "tool_version"},
    {Field::kZ3, "z3_version"},
    {Field::kConfig, "generator_config"},
    {Field::kCount, "count"},
    {Field::kNumRules, "num_rules"},
    {Field::kDigest, "digest"},
};

// `seen` collects the fields read so far: each but `count` appears once, and all of them must.
Status ParseHeaderLine(std::string_view line, v2::Header* h, unsigned* seen) {
  size_t colon = line.find(": ");
  if (colon == std::string_view::npos) return InvalidArgument("expected '# key: value'");
  std::string_view key = line.substr(0, colon), value = line.substr(colon + 2);
  for (const auto& [field, name] : kFields) {
    if (key != name) continue;
    const unsigned bit = 1u << static_cast<int>(field);
    if (field != Field::kCount && (*seen & bit))
      return InvalidArgument("header field '" + std::string(key) + "' given twice");
    *seen |= bit;
    switch (field) {
      case Field::kSchemaVersion: {
        VERISUB_ASSIGN_OR_RETURN(uint32_t v, ParseNumber<uint32_t>(value, name));
        h->set_schema_version(v);
        return Status::Ok();
      }
      case Field::kMaxOps: {
        VERISUB_ASSIGN_OR_RETURN(uint32_t v, ParseNumber<uint32_t>(value, name));
        h->set_max_ops(v);
        return Status::Ok();
      }
      case Field::kNumRules: {
        VERISUB_ASSIGN_OR_RETURN(uint32_t v, ParseNumber<uint32_t>(value, name));
        h->set_num_rules(v);
        return Status::Ok();
      }
      case Field::kOpSet:
      case Field::kTool:
      case Field::kZ3:
      case Field::kConfig:
      case Field::kDigest: {
        VERISUB_ASSIGN_OR_RETURN(std::string s, UnquoteString(value));
        if (field == Field::kDigest) h->set_digest(s);
        if (field == Field::kOpSet) h->set_op_set_fingerprint(s);
        if (field == Field::kTool) h->set_tool_version(s);
        if (field == Field::kZ3) h->set_z3_version(s);
        if (field == Field::kConfig) h->set_generator_config(s);
        return Status::Ok();
      }
      case Field::kCount: {
        size_t sp = value.find(' ');
        if (sp == std::string_view::npos || !IsName(value.substr(0, sp)))
          return InvalidArgument("expected 'count: name value'");
        v2::Count* c = h->add_counts();
        c->set_name(std::string(value.substr(0, sp)));
        VERISUB_ASSIGN_OR_RETURN(int64_t v, ParseNumber<int64_t>(value.substr(sp + 1), "count"));
        c->set_value(v);
        return Status::Ok();
      }
    }
  }
  return InvalidArgument("unknown header field '" + std::string(key) + "'");
}

Status CheckHeaderComplete(unsigned seen) {
  for (const auto& [field, name] : kFields)
    if (field != Field::kCount && !(seen & (1u << static_cast<int>(field))))
      return InvalidArgument(std::string("header field '") + name + "' missing (truncated file?)");
  return Status::Ok();
}

}  // namespace

int64_t TreeTextSize(const v2::Graph& g, uint32_t num_inputs, int64_t limit) {
  std::vector<int64_t> size(g.nodes_size());
  auto value_size = [&](const v2::Value& v, int before) -> int64_t {
    if (v.node() < 0) return v.node() == -1 && v.index() < num_inputs ? 1 : -1;
    return v.node() < before ? size[v.node()] : -1;
  };
  for (int i = 0; i < g.nodes_size(); ++i) {
    size[i] = 1;
    for (const v2::Value& in : g.nodes(i).inputs()) {
      int64_t s = value_size(in, i);
      if (s < 0) return -1;
      size[i] = std::min(limit + 1, size[i] + s);
    }
  }
  int64_t total = 0;
  for (const v2::Value& out : g.outputs()) {
    int64_t s = value_size(out, g.nodes_size());
    if (s < 0) return -1;
    total = std::min(limit + 1, total + s);
  }
  return total;
}

StatusOr<std::string> FormatRuleLine(const v2::Rule& r) {
  // What the parser reads back (found by fuzzing: a protobuf id of other characters was
  // written as text that did not parse).
  if (!IsRuleId(r.id())) return InvalidArgument("bad rule id " + QuoteString(r.id().substr(0, 32)));
  for (const v2::Graph* g : {&r.src(), &r.dst()}) {
    int64_t size = TreeTextSize(*g, r.num_inputs(), kMaxTreeSize);
    if (size < 0) return InvalidArgument("graph reference out of range");
    if (size > kMaxTreeSize) return InvalidArgument("rule too large to write as text");
    if (g->outputs_size() == 0) return InvalidArgument("a side without outputs");
    VERISUB_RETURN_IF_ERROR(CheckNodeNames(*g));
  }
  std::string s = GraphFormatter(r.src()).Side() + " => " + GraphFormatter(r.dst()).Side();
  if (r.input_ranks_size() > 0) {
    if (static_cast<uint32_t>(r.input_ranks_size()) != r.num_inputs())
      return InvalidArgument("input ranks do not match the inputs");
    s += InputRanksText(std::vector<int>(r.input_ranks().begin(), r.input_ranks().end()));
  }
  s += kProofSeparator;
  s += r.id() + " ";
  const v2::ProofRecord& p = r.proof();
  std::optional<ProofStatus> status = ProofStatusFromProto(p.status());
  if (!status)
    return InvalidArgument("unknown proof status " + std::to_string(static_cast<int>(p.status())));
  s += ProofStatusName(*status);
  if (p.axioms_used_size() > 0) {
    s += " axioms=";
    for (int i = 0; i < p.axioms_used_size(); ++i) {
      if (!IsName(p.axioms_used(i)))
        return InvalidArgument("axiom name '" + p.axioms_used(i) + "' cannot be written as text");
      s += (i ? "," : "") + p.axioms_used(i);
    }
  }
  s += " seconds=" + FormatDouble(p.seconds());
  if (!p.reason().empty()) s += " reason=" + QuoteString(p.reason());
  return s;
}

StatusOr<v2::Rule> ParseRuleLine(std::string_view line) {
  size_t sep = line.find(kProofSeparator);
  if (sep == std::string_view::npos) return InvalidArgument("expected '  # id status ...'");
  VERISUB_ASSIGN_OR_RETURN(RuleTextAst ast, ParseRuleTextAst(line.substr(0, sep)));
  v2::Rule r;
  *r.mutable_src() = GraphBuilder(ast.inputs).Side(ast.src);
  *r.mutable_dst() = GraphBuilder(ast.inputs).Side(ast.dst);
  r.set_num_inputs(static_cast<uint32_t>(ast.inputs.size()));
  if (ast.input_ranks)
    for (int rank : *ast.input_ranks) r.add_input_ranks(static_cast<uint32_t>(rank));
  VERISUB_RETURN_IF_ERROR(ParseProofSuffix(line.substr(sep + kProofSeparator.size()), &r));
  return r;
}

StatusOr<std::string> FormatDatabaseText(const v2::RuleDatabase& db) {
  const v2::Header& h = db.header();
  if (h.magic() != kDatabaseMagic) return InvalidArgument("not a verisub rule database");
  std::string s = std::string("# ") + kDatabaseMagic + "\n";
  s += "# schema_version: " + std::to_string(h.schema_version()) + "\n";
  s += "# op_set_fingerprint: " + QuoteString(h.op_set_fingerprint()) + "\n";
  s += "# max_ops: " + std::to_string(h.max_ops()) + "\n";
  s += "# tool_version: " + QuoteString(h.tool_version()) + "\n";
  s += "# z3_version: " + QuoteString(h.z3_version()) + "\n";
  s += "# generator_config: " + QuoteString(h.generator_config()) + "\n";
  for (const v2::Count& c : h.counts()) {
    if (!IsName(c.name())) return InvalidArgument("count name '" + c.name() + "' is not a name");
    s += "# count: " + c.name() + " " + std::to_string(c.value()) + "\n";
  }
  s += "# num_rules: " + std::to_string(h.num_rules()) + "\n";
  s += "# digest: " + QuoteString(h.digest()) + "\n";
  for (int i = 0; i < db.rules_size(); ++i) {
    auto line = FormatRuleLine(db.rules(i));
    if (!line.ok()) return line.status().WithContext("rule " + std::to_string(i));
    s += *line + "\n";
  }
  return s;
}

StatusOr<v2::RuleDatabase> ParseDatabaseText(std::string_view text) {
  v2::RuleDatabase db;
  size_t line_no = 0;
  bool in_rules = false;
  unsigned seen = 0;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos)
      return InvalidArgument("line " + std::to_string(line_no + 1) +
                             ": missing newline at the end (truncated file?)");
    std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    const std::string where = "line " + std::to_string(line_no);
    if (line.empty()) continue;
    if (line_no == 1) {
      if (line != std::string("# ") + kDatabaseMagic)
        return InvalidArgument(where + ": not a verisub rule database (expected '# " +
                               kDatabaseMagic + "')");
      db.mutable_header()->set_magic(kDatabaseMagic);
      continue;
    }
    if (line.substr(0, 2) == "# ") {
      if (in_rules) return InvalidArgument(where + ": header line after the first rule");
      Status st = ParseHeaderLine(line.substr(2), db.mutable_header(), &seen);
      if (!st.ok()) return st.WithContext(where);
      continue;
    }
    if (!in_rules) VERISUB_RETURN_IF_ERROR(CheckHeaderComplete(seen).WithContext(where));
    in_rules = true;
    auto r = ParseRuleLine(line);
    if (!r.ok())
      return r.status().WithContext(where + " (rule " + std::to_string(db.rules_size()) + ")");
    *db.add_rules() = std::move(*r);
  }
  if (line_no == 0) return InvalidArgument("empty file");
  if (!in_rules) VERISUB_RETURN_IF_ERROR(CheckHeaderComplete(seen).WithContext("end of file"));
  return db;
}

}  // namespace verisub::ruledb
