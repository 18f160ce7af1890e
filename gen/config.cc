// Reading and writing generator configs.
#include "gen/config.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>

#include "base/file_io.h"
#include "gen/graph_code.h"
#include "ruledb/rule.h"
#include "specs/registry.h"

namespace verisub::gen {
namespace {

// An interchangeable group's members are tracked in a 64-bit mask (enumerator.cc).
constexpr int kMaxGroupMembers = 64;

bool SameConsumers(std::vector<Consumer> a, std::vector<Consumer> b) {
  auto less = [](const Consumer& x, const Consumer& y) {
    return x.kind != y.kind ? x.kind < y.kind : x.arg < y.arg;
  };
  std::sort(a.begin(), a.end(), less);
  std::sort(b.begin(), b.end(), less);
  return std::equal(
      a.begin(), a.end(), b.begin(), b.end(),
      [](const Consumer& x, const Consumer& y) { return x.kind == y.kind && x.arg == y.arg; });
}

// Splits on whitespace, keeping bracketed text ("[2, 4]") in one token.
std::vector<std::string> Tokenize(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : line) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if ((c == ' ' || c == '\t' || c == '\r') && depth <= 0) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else if (!(depth > 0 && (c == ' ' || c == '\t'))) {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// Splits "a,b,[1,0]" on the commas outside brackets.
std::vector<std::string> SplitValues(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

StatusOr<int64_t> ParseInt(const std::string& s, int64_t lo, int64_t hi, const char* what) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size())
    return InvalidArgument(std::string(what) + ": expected an integer, got '" + s + "'");
  if (v < lo || v > hi)
    return InvalidArgument(std::string(what) + ": " + s + " is outside [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]");
  return v;
}

StatusOr<bool> ParseBool(const std::string& s, const char* what) {
  if (s == "yes" || s == "true" || s == "1") return true;
  if (s == "no" || s == "false" || s == "0") return false;
  return InvalidArgument(std::string(what) + ": expected yes or no, got '" + s + "'");
}

StatusOr<specs::Shape> ParseShape(const std::string& s) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']')
    return InvalidArgument("bad shape '" + s + "': expected [d0,d1,...] or [] for a scalar");
  std::vector<int64_t> dims;
  std::string body = s.substr(1, s.size() - 2);
  if (!body.empty()) {
    for (const std::string& d : SplitValues(body)) {
      auto v = ParseInt(d, 1, 1 << 20, ("bad shape '" + s + "'").c_str());
      if (!v.ok()) return v.status();
      dims.push_back(*v);
    }
  }
  auto shape = specs::Shape::FromVector(dims);
  if (!shape.ok()) return InvalidArgument("bad shape '" + s + "': " + shape.status().message());
  return *shape;
}

// Parses the value of `consumers=`: operator names, each optionally `.argument`.
StatusOr<std::vector<Consumer>> ParseConsumers(const std::string& text) {
  std::vector<Consumer> out;
  for (const std::string& item : SplitValues(text)) {
    size_t dot = item.find('.');
    std::string name = item.substr(0, dot);
    const specs::OpSpec* op = specs::FindOp(name);
    if (!op) return InvalidArgument("consumers: unknown operator '" + name + "'");
    Consumer c{op->kind, -1};
    if (dot != std::string::npos) {
      auto arg = ParseInt(item.substr(dot + 1), 0, op->num_inputs - 1,
                          ("consumers: argument of '" + name + "'").c_str());
      if (!arg.ok()) return arg.status();
      c.arg = static_cast<int>(*arg);
    }
    out.push_back(c);
  }
  return out;
}

// Takes a trailing `consumers=...` token off `t`, if there is one.
StatusOr<std::vector<Consumer>> TakeConsumers(std::vector<std::string>* t) {
  if (t->empty() || t->back().rfind("consumers=", 0) != 0) return std::vector<Consumer>();
  auto c = ParseConsumers(t->back().substr(10));
  t->pop_back();
  return c;
}

// Expands `name=v1,v2 ...` assignments into every parameter combination; a parameter that is
// not named takes every value of its generator domain.
StatusOr<std::vector<specs::Params>> ParseParamChoices(const specs::OpSpec& op,
                                                       const std::vector<std::string>& args,
                                                       uint32_t* input_ranks) {
  std::map<std::string, std::vector<int64_t>> chosen;
  for (const std::string& arg : args) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
      return InvalidArgument("expected parameter=value[,value...], got '" + arg + "'");
    std::string pname = arg.substr(0, eq);
    if (pname == "input_rank" && input_ranks) {
      for (const std::string& r : SplitValues(arg.substr(eq + 1))) {
        auto v = ParseInt(r, 0, specs::kMaxRank, "input_rank");
        if (!v.ok()) return v.status();
        *input_ranks |= 1u << *v;
      }
      continue;
    }
    const specs::ParamDesc* d = op.FindParam(pname);
    if (!d) {
      std::string known;
      for (const auto& p : op.params) known += (known.empty() ? "" : ", ") + p.name;
      return InvalidArgument("'" + op.name + "' has no parameter '" + pname + "'" +
                             (known.empty() ? " (it has none)" : " (it has: " + known + ")"));
    }
    if (chosen.count(pname)) return InvalidArgument("parameter '" + pname + "' given twice");
    for (const std::string& text : SplitValues(arg.substr(eq + 1))) {
      specs::Params p;
      Status st = specs::ParseParamValue(*d, text, &p);
      if (!st.ok()) return InvalidArgument("'" + op.name + "': " + st.message());
      if (d->type == specs::ParamType::kEnum &&
          std::find(d->domain.begin(), d->domain.end(), p[d->slot]) == d->domain.end()) {
        std::string allowed;
        for (int64_t v : d->domain) {
          specs::Params q;
          q[d->slot] = v;
          allowed += (allowed.empty() ? "" : "|") + specs::FormatParamValue(*d, q);
        }
        return InvalidArgument("'" + op.name + "': parameter '" + pname + "': value '" + text +
                               "' is outside its domain (" + allowed + ")");
      }
      if (d->type == specs::ParamType::kShape || d->type == specs::ParamType::kFloat)
        return Unimplemented("'" + op.name + "': parameter '" + pname +
                             "' takes shapes or floats, which the generator does not enumerate");
      chosen[pname].push_back(p[d->slot]);
    }
  }
  std::vector<specs::Params> out = {specs::Params()};
  for (const specs::ParamDesc& d : op.params) {
    auto it = chosen.find(d.name);
    const std::vector<int64_t>& values = it != chosen.end() ? it->second : d.domain;
    if (values.empty())
      return InvalidArgument("'" + op.name + "': parameter '" + d.name +
                             "' has no generator domain; give its values");
    std::vector<specs::Params> next;
    for (const specs::Params& base : out)
      for (int64_t v : values) {
        specs::Params p = base;
        p[d.slot] = v;
        next.push_back(p);
      }
    out = std::move(next);
  }
  return out;
}

class Parser {
 public:
  explicit Parser(GenConfig* c) : c_(c) {}

  Status Line(const std::vector<std::string>& t) {
    const std::string& key = t[0];
    auto need = [&](size_t n) -> Status {
      if (t.size() != n)
        return InvalidArgument("'" + key + "' takes " + std::to_string(n - 1) + " value(s), got " +
                               std::to_string(t.size() - 1));
      return Status::Ok();
    };
    if (key == "max_ops" || key == "threads" || key == "seed" || key == "double_tests" ||
        key == "max_graphs") {
      VERISUB_RETURN_IF_ERROR(need(2));
      int64_t hi = key == "max_ops"        ? 8
                   : key == "threads"      ? 1024
                   : key == "double_tests" ? 64
                                           : INT64_MAX;
      int64_t lo = key == "max_ops" || key == "double_tests" ? 1 : 0;
      auto v = ParseInt(t[1], lo, hi, key.c_str());
      if (!v.ok()) return v.status();
      if (key == "max_ops") c_->max_ops = static_cast<int>(*v);
      if (key == "threads") c_->threads = static_cast<int>(*v);
      if (key == "seed") c_->seed = static_cast<uint64_t>(*v);
      if (key == "double_tests") c_->double_tests = static_cast<int>(*v);
      if (key == "max_graphs") c_->max_graphs = static_cast<uint64_t>(*v);
      return Status::Ok();
    }
    if (key == "tolerance") {
      VERISUB_RETURN_IF_ERROR(need(2));
      double v = 0;
      auto [ptr, ec] = std::from_chars(t[1].data(), t[1].data() + t[1].size(), v);
      if (ec != std::errc() || ptr != t[1].data() + t[1].size() || !(v > 0 && v < 1))
        return InvalidArgument("tolerance: expected a number in (0, 1), got '" + t[1] + "'");
      c_->tolerance = v;
      return Status::Ok();
    }
    if (key == "break_commutative" || key == "identity_graphs" || key == "drop_composite_pairs" ||
        key == "index_level_proofs") {
      VERISUB_RETURN_IF_ERROR(need(2));
      auto v = ParseBool(t[1], key.c_str());
      if (!v.ok()) return v.status();
      if (key == "break_commutative") c_->break_commutative = *v;
      if (key == "identity_graphs") c_->identity_graphs = *v;
      if (key == "drop_composite_pairs") c_->drop_composite_pairs = *v;
      if (key == "index_level_proofs") c_->index_level_proofs = *v;
      return Status::Ok();
    }
    if (key == "pairs") {
      VERISUB_RETURN_IF_ERROR(need(2));
      if (t[1] != "star" && t[1] != "all")
        return InvalidArgument("pairs: expected star or all, got '" + t[1] + "'");
      c_->all_pairs = t[1] == "all";
      return Status::Ok();
    }
    if (key == "input" || key == "constant" || key == "fold") {
      std::vector<std::string> rest = t;
      auto consumers = TakeConsumers(&rest);
      if (!consumers.ok()) return consumers.status();
      if (key == "fold") return Fold(rest, *consumers);
      return key == "input" ? Input(rest, *consumers) : Op(rest, true, *consumers);
    }
    if (key == "op") return Op(t, false, {});
    if (key == "candidate") {
      if (t.size() < 2) return InvalidArgument("expected 'candidate RULE'");
      std::string text = t[1];
      for (size_t i = 2; i < t.size(); ++i) text += " " + t[i];
      auto rule = ruledb::ParseRule(text);
      if (!rule.ok()) return rule.status().WithContext("candidate");
      c_->candidates.push_back(rule->ToText());
      return Status::Ok();
    }
    return InvalidArgument(
        "unknown keyword '" + key +
        "' (expected max_ops, threads, seed, double_tests, tolerance, "
        "max_graphs, break_commutative, identity_graphs, pairs, drop_composite_pairs, "
        "index_level_proofs, input, constant, fold, op, candidate)");
  }

 private:
  // fold OPERATOR INPUT... [param=values...] [consumers=...]: the operator on named inputs.
  Status Fold(const std::vector<std::string>& t, const std::vector<Consumer>& consumers) {
    const char* usage = "expected 'fold OPERATOR INPUT... [param=values...] [consumers=...]'";
    if (t.size() < 2) return InvalidArgument(usage);
    const specs::OpSpec* op = specs::FindOp(t[1]);
    if (!op) return InvalidArgument("unknown operator '" + t[1] + "'");
    if (op->is_constant || op->num_outputs != 1)
      return InvalidArgument(
          "fold: '" + op->name + "' " +
          (op->is_constant ? "is a constant; use 'constant'" : "has more than one output"));
    const size_t first_param = 2 + static_cast<size_t>(op->num_inputs);
    if (t.size() < first_param)
      return InvalidArgument("fold '" + op->name + "': " + std::to_string(op->num_inputs) +
                             " inputs expected; " + usage);
    std::vector<int> sources;
    for (size_t i = 2; i < first_param; ++i) {
      auto it = input_index_.find(t[i]);
      if (it == input_index_.end())
        return InvalidArgument("fold '" + op->name + "': unknown input '" + t[i] +
                               "' (declare inputs before folds)");
      sources.push_back(it->second);
    }
    auto choices = ParseParamChoices(*op, {t.begin() + first_param, t.end()}, nullptr);
    if (!choices.ok()) return choices.status();
    for (const specs::Params& p : *choices)
      c_->constants.push_back({OpInstance{op->kind, p, 0}, sources, consumers, true});
    return Status::Ok();
  }

  Status Input(const std::vector<std::string>& t, const std::vector<Consumer>& consumers) {
    if (t.size() != 3 && t.size() != 4)
      return InvalidArgument("expected 'input NAME SHAPE [GROUP] [consumers=OP[.ARG],...]'");
    InputDecl in;
    in.consumers = consumers;
    in.name = t[1];
    if (input_index_.count(in.name))
      return InvalidArgument("input '" + in.name + "' defined twice");
    auto shape = ParseShape(t[2]);
    if (!shape.ok()) return shape.status().WithContext("input '" + in.name + "'");
    in.shape = *shape;
    in.group = t.size() == 4 ? t[3] : in.name;
    int members = 1;
    for (const InputDecl& o : c_->inputs) {
      if (o.group != in.group) continue;
      ++members;
      if (o.shape != in.shape)
        return InvalidArgument("input '" + in.name + "' has shape " + in.shape.ToString() +
                               " but '" + o.name + "' in its group '" + in.group + "' has " +
                               o.shape.ToString() + "; interchangeable inputs need one shape");
      if (!SameConsumers(o.consumers, in.consumers))
        return InvalidArgument("input '" + in.name + "' and '" + o.name + "' in group '" +
                               in.group + "' have different consumers=; interchangeable " +
                               "inputs need the same");
    }
    if (members > kMaxGroupMembers)
      return InvalidArgument("group '" + in.group + "' has more than " +
                             std::to_string(kMaxGroupMembers) + " inputs");
    input_index_[in.name] = static_cast<int>(c_->inputs.size());
    c_->inputs.push_back(std::move(in));
    return Status::Ok();
  }

  Status Op(const std::vector<std::string>& t, bool constant,
            const std::vector<Consumer>& consumers) {
    size_t first_param = constant ? 3 : 2;
    if (t.size() < first_param)
      return InvalidArgument(
          constant ? "expected 'constant OPERATOR INPUT [param=values...] [consumers=...]'"
                   : "expected 'op OPERATOR [param=values...]'");
    const specs::OpSpec* op = specs::FindOp(t[1]);
    if (!op) return InvalidArgument("unknown operator '" + t[1] + "'");
    if (op->is_constant != constant)
      return InvalidArgument("'" + op->name + "' " +
                             (constant ? "is not a constant; use 'op'"
                                       : "is a constant; use 'constant " + op->name + " INPUT'"));
    if (op->num_inputs > kMaxGraphOpInputs)
      return Unimplemented("'" + op->name + "' takes " + std::to_string(op->num_inputs) +
                           " inputs; the generator enumerates operators of up to " +
                           std::to_string(kMaxGraphOpInputs));
    int source = 0;
    if (constant) {
      auto it = input_index_.find(t[2]);
      if (it == input_index_.end())
        return InvalidArgument("constant '" + op->name + "': unknown input '" + t[2] +
                               "' (declare inputs before constants)");
      source = it->second;
    }
    uint32_t input_ranks = 0;
    auto choices = ParseParamChoices(*op, {t.begin() + first_param, t.end()},
                                     constant ? nullptr : &input_ranks);
    if (!choices.ok()) return choices.status();
    for (const specs::Params& p : *choices) {
      OpInstance inst{op->kind, p, input_ranks};
      if (constant)
        c_->constants.push_back({inst, {source}, consumers, false});
      else
        c_->ops.push_back(inst);
    }
    return Status::Ok();
  }

  GenConfig* c_;
  std::map<std::string, int> input_index_;
};

}  // namespace

StatusOr<GenConfig> ParseConfig(std::string_view text, const std::string& source_name) {
  GenConfig c;
  c.source_name = source_name;
  Parser parser(&c);
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string> tokens = Tokenize(line);
    if (tokens.empty()) continue;
    Status st = parser.Line(tokens);
    if (!st.ok()) return st.WithContext(source_name + ":" + std::to_string(line_no));
  }
  auto whole = [&](const std::string& m) { return InvalidArgument(source_name + ": " + m); };
  if (c.inputs.empty()) return whole("no 'input' lines: the generator needs graph inputs");
  if (c.ops.empty()) return whole("no 'op' lines: the generator needs operators");
  for (const ConstantDecl& k : c.constants)
    for (int source : k.sources) {
      const InputDecl& src = c.inputs[source];
      for (const InputDecl& o : c.inputs)
        if (o.group == src.group && o.name != src.name)
          return whole((k.folded ? "fold '" : "constant '") + specs::GetOp(k.op.kind).name + " " +
                       src.name + "': '" + src.name + "' is interchangeable with '" + o.name +
                       "' (group '" + src.group +
                       "'), but the constant is not; give it an input of its own");
    }
  size_t tensors =
      c.inputs.size() + c.constants.size() + static_cast<size_t>(c.max_ops) * specs::kMaxOpOutputs;
  if (tensors > 255)
    return whole("too many tensors (" + std::to_string(tensors) +
                 " inputs, constants and op outputs); at most 255");
  // The same operator on several lines: one instance that allows the ranks of every line.
  std::stable_sort(c.ops.begin(), c.ops.end());
  std::vector<OpInstance> unique_ops;
  for (const OpInstance& inst : c.ops) {
    if (!unique_ops.empty() && unique_ops.back() == inst) {
      uint32_t& r = unique_ops.back().input_ranks;
      r = (r == 0 || inst.input_ranks == 0) ? 0 : r | inst.input_ranks;
    } else {
      unique_ops.push_back(inst);
    }
  }
  c.ops = std::move(unique_ops);
  std::stable_sort(c.constants.begin(), c.constants.end(),
                   [](const ConstantDecl& a, const ConstantDecl& b) {
                     if (a.folded != b.folded) return b.folded;  // folds after constants
                     return a.sources != b.sources ? a.sources < b.sources : a.op < b.op;
                   });
  std::sort(c.candidates.begin(), c.candidates.end());
  c.candidates.erase(std::unique(c.candidates.begin(), c.candidates.end()), c.candidates.end());
  c.constants.erase(std::unique(c.constants.begin(), c.constants.end(),
                                [](const ConstantDecl& a, const ConstantDecl& b) {
                                  return a.sources == b.sources && a.op == b.op &&
                                         a.folded == b.folded;
                                }),
                    c.constants.end());
  return c;
}

StatusOr<GenConfig> LoadConfig(const std::string& path) {
  constexpr uint64_t kMaxConfigBytes = 1 << 20;
  // A config is a few lines; a larger file is not one.
  VERISUB_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path, kMaxConfigBytes));
  return ParseConfig(text, path);
}

std::string FormatConfig(const GenConfig& c) {
  std::ostringstream o;
  o << "max_ops " << c.max_ops << "\nseed " << c.seed << "\ndouble_tests " << c.double_tests
    << "\ntolerance " << c.tolerance << "\nmax_graphs " << c.max_graphs << "\nbreak_commutative "
    << (c.break_commutative ? "yes" : "no") << "\nidentity_graphs "
    << (c.identity_graphs ? "yes" : "no") << "\npairs " << (c.all_pairs ? "all" : "star")
    << "\ndrop_composite_pairs " << (c.drop_composite_pairs ? "yes" : "no")
    << "\nindex_level_proofs " << (c.index_level_proofs ? "yes" : "no") << "\n";
  auto consumers = [](const std::vector<Consumer>& cs) {
    std::string s;
    for (const Consumer& k : cs)
      s += (s.empty() ? " consumers=" : ",") + specs::GetOp(k.kind).name +
           (k.arg >= 0 ? "." + std::to_string(k.arg) : "");
    return s;
  };
  for (const InputDecl& in : c.inputs)
    o << "input " << in.name << " " << in.shape.ToString() << " " << in.group
      << consumers(in.consumers) << "\n";
  auto params = [](const OpInstance& inst) {
    std::string s;
    const specs::OpSpec& op = specs::GetOp(inst.kind);
    for (const specs::ParamDesc& d : op.params)
      s += " " + d.name + "=" + specs::FormatParamValue(d, inst.params);
    return s;
  };
  for (const ConstantDecl& k : c.constants) {
    o << (k.folded ? "fold " : "constant ") << specs::GetOp(k.op.kind).name;
    for (int source : k.sources) o << " " << c.inputs[source].name;
    o << params(k.op) << consumers(k.consumers) << "\n";
  }
  for (const OpInstance& inst : c.ops) {
    o << "op " << specs::GetOp(inst.kind).name << params(inst);
    std::string ranks;
    for (int r = 0; r <= specs::kMaxRank; ++r)
      if (inst.input_ranks & (1u << r)) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    if (!ranks.empty()) o << " input_rank=" << ranks;
    o << "\n";
  }
  for (const std::string& rule : c.candidates) o << "candidate " << rule << "\n";
  return o.str();
}

}  // namespace verisub::gen
