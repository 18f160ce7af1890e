// Structure checks and the reference pricing of a layout assignment.
#include "rewriter/layout_problem.h"

#include <algorithm>
#include <cmath>

#include "rewriter/layout_cost_source.h"

namespace verisub::rewriter {
namespace {

bool IsCandidate(const LayoutProblemValue& v, Format l) {
  return std::find(v.candidates.begin(), v.candidates.end(), l) != v.candidates.end();
}

}  // namespace

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kF32:
      return "f32";
    case Precision::kBf16:
      return "bf16";
    default:
      return "?";
  }
}

std::optional<Precision> ParsePrecision(std::string_view name) {
  for (int p = 0; p < kNumPrecisions; ++p)
    if (PrecisionName(static_cast<Precision>(p)) == name) return static_cast<Precision>(p);
  return std::nullopt;
}

std::string FormatName(Format f) {
  std::string name(specs::LayoutName(f.layout));
  if (f.precision != Precision::kF32) name += ":" + std::string(PrecisionName(f.precision));
  return name;
}

std::optional<std::vector<specs::Layout>> Float32Layouts(std::span<const Format> formats) {
  for (Format f : formats)
    if (f.precision != Precision::kF32) return std::nullopt;
  return LayoutsOf(formats);
}

std::optional<Precision> DataPrecision(const runtime::Graph& g, const runtime::Node& node,
                                       std::span<const Format> inputs,
                                       std::span<const Format> outputs) {
  std::optional<Precision> precision;
  bool mixed = false;
  auto see = [&](int v, Format f) {
    if (v == runtime::kNoValue || g.value(v).constant) return;
    if (!precision) precision = f.precision;
    mixed |= *precision != f.precision;
  };
  for (size_t k = 0; k < inputs.size() && k < node.inputs.size(); ++k)
    see(node.inputs[k], inputs[k]);
  for (size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k)
    see(node.outputs[k], outputs[k]);
  if (mixed) return std::nullopt;
  return precision.value_or(Precision::kF32);
}

std::vector<specs::Layout> LayoutsOf(std::span<const Format> formats) {
  std::vector<specs::Layout> layouts;
  layouts.reserve(formats.size());
  for (Format f : formats) layouts.push_back(f.layout);
  return layouts;
}

std::optional<double> LayoutCostSource::FormatKernelCostUs(const runtime::Graph& g,
                                                           const runtime::Node& node,
                                                           std::span<const Format> inputs,
                                                           std::span<const Format> outputs) const {
  auto in = Float32Layouts(inputs), out = Float32Layouts(outputs);
  if (!in || !out) return std::nullopt;
  return KernelCostUs(g, node, *in, *out);
}

double LayoutCostSource::FormatConversionCostUs(const runtime::Value& value, Format from,
                                                Format to) const {
  if (from.precision != Precision::kF32 || to.precision != Precision::kF32) return kInfiniteCost;
  return ConversionCostUs(value, from.layout, to.layout);
}

Status CheckLayoutProblem(const LayoutProblem& p) {
  const int nv = static_cast<int>(p.values.size());
  std::vector<char> defined(nv, 0);
  for (int v = 0; v < nv; ++v) {
    const LayoutProblemValue& val = p.values[v];
    if (!IsCandidate(val, Format()))
      return InvalidArgument("layout problem: value '" + val.name + "' lacks the plain layout");
    for (Format a : val.candidates)
      for (Format b : val.candidates) {
        double c = val.Conversion(a, b);
        if (!std::isfinite(c) || c < 0 || (a == b && c != 0))
          return InvalidArgument("layout problem: value '" + val.name + "' has conversion cost " +
                                 std::to_string(c) + " from " + FormatName(a) + " to " +
                                 FormatName(b));
      }
    defined[v] = val.graph_input;
  }
  for (const LayoutProblemNode& n : p.nodes) {
    for (int v : n.inputs) {
      if (v < 0 || v >= nv)
        return InvalidArgument("layout problem: node '" + n.name + "' reads value id " +
                               std::to_string(v) + " out of range");
      if (!defined[v])
        return InvalidArgument("layout problem: node '" + n.name + "' reads '" + p.values[v].name +
                               "' before it is produced");
    }
    for (int v : n.outputs) {
      if (v < 0 || v >= nv)
        return InvalidArgument("layout problem: node '" + n.name + "' writes value id " +
                               std::to_string(v) + " out of range");
      if (defined[v])
        return InvalidArgument("layout problem: value '" + p.values[v].name +
                               "' is produced twice (second time by node '" + n.name + "')");
      defined[v] = 1;
    }
    if (n.choices.empty())
      return InvalidArgument("layout problem: node '" + n.name + "' has no admissible layouts");
    for (const LayoutChoice& c : n.choices) {
      if (c.inputs.size() != n.inputs.size() || c.outputs.size() != n.outputs.size())
        return InvalidArgument("layout problem: node '" + n.name +
                               "' has a choice with the wrong number of layouts");
      if (!std::isfinite(c.cost_us) || c.cost_us < 0)
        return InvalidArgument("layout problem: node '" + n.name + "' has a choice costing " +
                               std::to_string(c.cost_us));
      for (size_t k = 0; k < c.inputs.size(); ++k)
        if (!IsCandidate(p.values[n.inputs[k]], c.inputs[k]))
          return InvalidArgument("layout problem: node '" + n.name + "' reads '" +
                                 p.values[n.inputs[k]].name + "' in " + FormatName(c.inputs[k]) +
                                 ", not one of its candidate layouts");
      for (size_t k = 0; k < c.outputs.size(); ++k)
        if (!IsCandidate(p.values[n.outputs[k]], c.outputs[k]))
          return InvalidArgument("layout problem: node '" + n.name + "' writes '" +
                                 p.values[n.outputs[k]].name + "' in " + FormatName(c.outputs[k]) +
                                 ", not one of its candidate layouts");
    }
  }
  for (int v = 0; v < nv; ++v)
    if (p.values[v].graph_output && !defined[v])
      return InvalidArgument("layout problem: graph output '" + p.values[v].name +
                             "' is never produced");
  return Status();
}

std::vector<Format> StoredLayouts(const LayoutProblem& p, const std::vector<int>& choice) {
  std::vector<Format> stored(p.values.size(), Format());
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const LayoutProblemNode& n = p.nodes[i];
    const LayoutChoice& c = n.choices[choice[i]];
    for (size_t k = 0; k < n.outputs.size(); ++k) stored[n.outputs[k]] = c.outputs[k];
  }
  return stored;
}

double EvaluateChoices(const LayoutProblem& p, const std::vector<int>& choice) {
  std::vector<Format> stored = StoredLayouts(p, choice);
  // needed[v]: bit set of layouts some reader of v needs.
  std::vector<unsigned> needed(p.values.size(), 0);
  double total = 0;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const LayoutProblemNode& n = p.nodes[i];
    const LayoutChoice& c = n.choices[choice[i]];
    total += c.cost_us;
    for (size_t k = 0; k < n.inputs.size(); ++k) needed[n.inputs[k]] |= 1u << c.inputs[k].index();
  }
  for (size_t v = 0; v < p.values.size(); ++v) {
    if (p.values[v].graph_output) needed[v] |= 1u << Format().index();
    for (int l = 0; l < kNumFormats; ++l)
      if ((needed[v] >> l & 1) && l != stored[v].index())
        total += p.values[v].Conversion(stored[v], Format::FromIndex(l));
  }
  return total;
}

int PlainChoice(const LayoutProblemNode& n) {
  for (size_t c = 0; c < n.choices.size(); ++c) {
    const LayoutChoice& ch = n.choices[c];
    bool plain =
        std::all_of(ch.inputs.begin(), ch.inputs.end(), [](Format l) { return l == Format(); }) &&
        std::all_of(ch.outputs.begin(), ch.outputs.end(), [](Format l) { return l == Format(); });
    if (plain) return static_cast<int>(c);
  }
  return -1;
}

}  // namespace verisub::rewriter
