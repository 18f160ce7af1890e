// Parsing and printing the graph text form.
#include "runtime/graph_text.h"

#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "runtime/memory_budget.h"
#include "runtime/spec_graph_builder.h"
#include "specs/registry.h"
#include "specs/term.h"

namespace verisub::runtime {
namespace {

// Dimensions separated by `sep` ("4,4,3,3" or "4x4x3x3"), each an integer >= 0.
StatusOr<std::vector<int64_t>> ParseDimList(const std::string& text, char sep) {
  std::vector<int64_t> dims;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, sep)) {
    int64_t d = -1;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (ec != std::errc() || ptr != item.data() + item.size() || d < 0)
      return InvalidArgument("bad dimension '" + item + "' in '" + text + "'");
    dims.push_back(d);
  }
  return dims;
}

// The text carries no data: a weight gets pseudo-random contents, so its size is bounded (a
// corrupt or adversarial shape must be an error, not an allocation; found by fuzzing).
constexpr int64_t kMaxWeightElements = int64_t{1} << 24;

Status CheckWeightSize(const std::string& name, const std::vector<int64_t>& dims) {
  const int64_t elements = TensorBytes(dims, 1);  // -1 on overflow
  if (elements < 0 || elements > kMaxWeightElements)
    return InvalidArgument("weight '" + name + "': shape too large");
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> ParseDims(const std::string& text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']')
    return InvalidArgument("shape '" + text + "' is not [d,...]");
  return ParseDimList(text.substr(1, text.size() - 2), ',');
}

class TextBuilder {
 public:
  Status Line(const std::string& line) {
    std::stringstream in(line);
    std::string kind, name;
    in >> kind;
    if (kind == "input" || kind == "weight") {
      std::string shape;
      in >> name >> shape;
      auto dims = ParseDims(shape);
      if (!dims.ok()) return dims.status();
      if (kind == "weight") VERISUB_RETURN_IF_ERROR(CheckWeightSize(name, *dims));
      names_[name] = kind == "input" ? b_.Input(name, *dims)
                                     : b_.Weight(name, *dims, std::hash<std::string>()(name));
      return Status::Ok();
    }
    std::string rest;
    std::getline(in, rest);
    if (kind == "let") {
      size_t eq = rest.find('=');
      if (eq == std::string::npos) return InvalidArgument("let without '=': " + line);
      std::stringstream nm(rest.substr(0, eq));
      nm >> name;
      auto v = Term(rest.substr(eq + 1));
      if (!v.ok()) return v.status();
      names_[name] = *v;
      return Status::Ok();
    }
    if (kind == "output") {
      auto v = Term(rest);
      if (!v.ok()) return v.status();
      b_.Output(*v);
      return Status::Ok();
    }
    if (kind == "layout") return LayoutLine(rest);
    return InvalidArgument("unknown line: " + line);
  }

  StatusOr<Graph> Finish() {
    VERISUB_ASSIGN_OR_RETURN(Graph g, b_.Finish());
    for (const auto& [v, layout] : layouts_) {
      const Value& val = g.value(v);
      if (!val.rank_known || !specs::LayoutFitsRank(layout, static_cast<int>(val.dims.size())))
        return InvalidArgument("layout " + std::string(specs::LayoutName(layout)) + " of '" +
                               val.name + "' does not fit its shape");
      g.mutable_value(v).layout = layout;
    }
    return g;
  }

 private:
  StatusOr<int> Term(const std::string& text) {
    auto ast = specs::ParseTermString(text);
    if (!ast.ok()) return ast.status();
    return Build(*ast);
  }

  StatusOr<int> Build(const specs::TermAst& t) {
    if (t.is_leaf) {
      auto it = names_.find(t.head);
      if (it != names_.end()) return it->second;
      if (t.head.rfind("folded-", 0) == 0) {  // a weight the optimizer computed
        auto dims = ParseDimList(t.head.substr(7), 'x');
        if (!dims.ok()) return dims.status();
        VERISUB_RETURN_IF_ERROR(CheckWeightSize(t.head, *dims));
        return names_[t.head] = b_.Weight(t.head, *dims, std::hash<std::string>()(t.head));
      }
      return InvalidArgument("unknown value '" + t.head + "'");
    }
    std::vector<int> args;
    for (const specs::TermAst& a : t.args) {
      auto v = Build(a);
      if (!v.ok()) return v.status();
      args.push_back(*v);
    }
    std::string op = t.head;
    if (!t.params.empty()) {
      op += "[";
      for (size_t i = 0; i < t.params.size(); ++i)
        op += (i ? "," : "") + t.params[i].first + "=" + t.params[i].second;
      op += "]";
    }
    // Equal terms are one node.
    auto key = std::make_tuple(op, args);
    auto it = nodes_.find(key);
    if (it == nodes_.end()) {
      std::vector<int> outs;
      if (op.rfind("onnx-", 0) == 0) {
        if (args.size() != 1) return InvalidArgument(op + " takes one input here");
        outs = {b_.Opaque(op.substr(5), args[0])};
      } else {
        auto made = b_.Ops(op, args);
        if (!made.ok()) return made.status();
        outs = std::move(*made);
      }
      it = nodes_.emplace(key, outs).first;
    }
    if (t.output >= static_cast<int>(it->second.size()))
      return InvalidArgument(op + " has no output " + std::to_string(t.output));
    return it->second[t.output];
  }

  // `layout TERM NAME`: the value TERM names (a name, or a term of a node already built) is
  // stored in layout NAME.
  Status LayoutLine(const std::string& rest) {
    size_t end = rest.find_last_not_of(" \t");
    size_t space = end == std::string::npos ? end : rest.find_last_of(" \t", end);
    if (space == std::string::npos) return InvalidArgument("expected 'layout VALUE NAME'");
    const std::string name = rest.substr(space + 1, end - space);
    std::optional<specs::Layout> layout = specs::ParseLayout(name);
    if (!layout) return InvalidArgument("unknown layout '" + name + "'");
    VERISUB_ASSIGN_OR_RETURN(specs::TermAst ast, specs::ParseTermString(rest.substr(0, space)));
    if (ast.is_leaf && !names_.count(ast.head))
      return InvalidArgument("layout of unknown value '" + ast.head + "'");
    const size_t nodes_before = nodes_.size();
    VERISUB_ASSIGN_OR_RETURN(int v, Build(ast));
    if (nodes_.size() != nodes_before)
      return InvalidArgument("layout of a value no earlier line computes");
    if (!layouts_.emplace(v, *layout).second) return InvalidArgument("layout given twice");
    return Status::Ok();
  }

  SpecGraphBuilder b_;
  std::map<int, specs::Layout> layouts_;
  std::map<std::string, int> names_;
  std::map<std::tuple<std::string, std::vector<int>>, std::vector<int>> nodes_;
};

}  // namespace

StatusOr<Graph> ParseGraphText(const std::string& text) {
  TextBuilder b;
  std::stringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    VERISUB_RETURN_IF_ERROR(
        b.Line(line.substr(start)).WithContext("line " + std::to_string(number)));
  }
  return b.Finish();
}

std::string PrintGraphText(const Graph& g) {
  std::vector<int> producer = g.Producers();
  std::vector<int> uses = g.UseCounts();
  std::vector<std::string> let_name(g.num_values());
  std::function<std::string(int, bool)> term = [&](int v, bool define) -> std::string {
    const Value& val = g.value(v);
    if (producer[v] < 0) {
      if (val.constant && val.name.rfind("verisub_", 0) == 0) {
        std::string s = "folded";
        for (size_t d = 0; d < val.dims.size(); ++d)
          s += (d ? "x" : "-") + std::to_string(val.dims[d]);
        return s;
      }
      return val.name;
    }
    if (!define && !let_name[v].empty()) return let_name[v];
    const Node& n = g.node(producer[v]);
    std::string s = "(";
    if (n.op) {
      const specs::OpSpec& spec = specs::GetOp(*n.op);
      s += spec.name;
      if (spec.num_outputs > 1) {
        for (size_t k = 0; k < n.outputs.size(); ++k)
          if (n.outputs[k] == v) s += "." + std::to_string(k);
      }
      if (!spec.params.empty()) {
        s += "[";
        for (size_t i = 0; i < spec.params.size(); ++i)
          s += (i ? "," : "") + spec.params[i].name + "=" +
               specs::FormatParamValue(spec.params[i], n.params);
        s += "]";
      }
    } else {
      s += "onnx-" + n.op_type;
    }
    // An omitted optional input (Resize's roi) is written "_".
    for (int in : n.inputs) s += " " + (in == kNoValue ? std::string("_") : term(in, false));
    return s + ")";
  };
  std::string out;
  int lets = 0;
  for (const auto& np : g.nodes()) {
    for (int o : np->outputs) {
      if (o == kNoValue || uses[o] < 2) continue;
      std::string name = "t" + std::to_string(lets++);
      out += "let " + name + " = " + term(o, true) + "\n";
      let_name[o] = name;
    }
  }
  for (int v : g.outputs()) out += "output " + term(v, false) + "\n";
  // Layouts other than plain: graph inputs, then per node its weights and its outputs.
  std::vector<char> printed(g.num_values(), 0);
  auto layout_line = [&](int v) {
    if (v == kNoValue || printed[v] || g.value(v).layout == specs::Layout::kPlain) return;
    printed[v] = 1;
    out +=
        "layout " + term(v, false) + " " + std::string(specs::LayoutName(g.value(v).layout)) + "\n";
  };
  for (int v : g.inputs()) layout_line(v);
  for (const auto& np : g.nodes()) {
    for (int v : np->inputs)
      if (v != kNoValue && producer[v] < 0) layout_line(v);
    for (int v : np->outputs) layout_line(v);
  }
  return out;
}

}  // namespace verisub::runtime
