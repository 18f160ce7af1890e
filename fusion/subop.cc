#include "fusion/subop.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "fusion/subop_eval.h"

namespace verisub::fusion {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

const char* UnaryName(UnaryFn f) {
  switch (f) {
    case UnaryFn::kNeg:
      return "neg";
    case UnaryFn::kRecip:
      return "recip";
    case UnaryFn::kExp:
      return "exp";
    case UnaryFn::kLog:
      return "log";
    case UnaryFn::kSqrt:
      return "sqrt";
    case UnaryFn::kErf:
      return "erf";
    case UnaryFn::kTanh:
      return "tanh";
    case UnaryFn::kAbs:
      return "abs";
  }
  return "?";
}

const char* BinaryName(BinaryFn f) {
  switch (f) {
    case BinaryFn::kAdd:
      return "add";
    case BinaryFn::kMul:
      return "mul";
    case BinaryFn::kMax:
      return "max";
    case BinaryFn::kMin:
      return "min";
    case BinaryFn::kLess:
      return "less";
    case BinaryFn::kPow:
      return "pow";
  }
  return "?";
}

namespace {

int Push(SubGraph* g, SubNode n) {
  g->nodes.push_back(std::move(n));
  return static_cast<int>(g->nodes.size()) - 1;
}

}  // namespace

int SubGraph::Input(std::vector<int64_t> d) {
  SubNode n;
  n.kind = SubOpKind::kInput;
  n.input = static_cast<int>(input_dims.size());
  input_dims.push_back(d);
  n.dims = std::move(d);
  return Push(this, std::move(n));
}

int SubGraph::Const(double v, std::vector<int64_t> d) {
  SubNode n;
  n.kind = SubOpKind::kConst;
  n.value = v;
  n.dims = std::move(d);
  return Push(this, std::move(n));
}

int SubGraph::Unary(UnaryFn f, int a) {
  SubNode n;
  n.kind = SubOpKind::kUnary;
  n.unary = f;
  n.args = {a};
  n.dims = nodes[a].dims;
  return Push(this, std::move(n));
}

int SubGraph::Binary(BinaryFn f, int a, int b) {
  SubNode n;
  n.kind = SubOpKind::kBinary;
  n.binary = f;
  n.args = {a, b};
  n.dims = nodes[a].dims;
  return Push(this, std::move(n));
}

int SubGraph::Select(int mask, int a, int b) {
  SubNode n;
  n.kind = SubOpKind::kSelect;
  n.args = {mask, a, b};
  n.dims = nodes[a].dims;
  return Push(this, std::move(n));
}

int SubGraph::Reindex(int a, std::vector<int64_t> d, std::vector<AxisMap> map, double fill) {
  SubNode n;
  n.kind = SubOpKind::kReindex;
  n.args = {a};
  n.dims = std::move(d);
  n.map = std::move(map);
  n.value = fill;
  return Push(this, std::move(n));
}

int SubGraph::Reduce(ReduceFn f, int a, std::vector<int> axes) {
  SubNode n;
  n.kind = SubOpKind::kReduce;
  n.reduce = f;
  n.args = {a};
  n.dims = nodes[a].dims;
  std::sort(axes.begin(), axes.end());
  for (int ax : axes) n.dims[ax] = 1;
  n.reduce_axes = std::move(axes);
  return Push(this, std::move(n));
}

int SubGraph::Transpose(int a, const std::vector<int>& perm) {
  const std::vector<int64_t> from = nodes[a].dims;
  if (perm.size() != from.size()) return -1;
  std::vector<int64_t> to(from.size());
  std::vector<AxisMap> map(from.size());
  std::vector<bool> seen(from.size(), false);
  for (AxisMap& m : map) m.coef.assign(from.size(), 0);
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int>(from.size()) || seen[perm[i]]) return -1;
    seen[perm[i]] = true;
    to[i] = from[perm[i]];
    map[perm[i]].coef[i] = 1;
  }
  return Reindex(a, std::move(to), std::move(map));
}

bool IsBroadcast(const SubGraph& g, const SubNode& n) {
  const std::vector<int64_t>& in = g.dims(n.args[0]);
  if (in.size() != n.dims.size()) return false;
  for (size_t k = 0; k < n.map.size(); ++k) {
    const AxisMap& m = n.map[k];
    if (m.offset != 0 || m.divisor != 1 || m.modulus != 0) return false;
    for (size_t j = 0; j < m.coef.size(); ++j)
      if (m.coef[j] != (j == k && in[k] != 1 ? 1 : 0)) return false;
  }
  return true;
}

int SubGraph::BroadcastTo(int a, const std::vector<int64_t>& d) {
  const std::vector<int64_t>& from = nodes[a].dims;
  if (from == d) return a;
  if (nodes[a].kind == SubOpKind::kConst) return Const(nodes[a].value, d);
  // Numpy broadcasting: `from`'s axes align with the last axes of `d`; an axis of extent 1
  // (or missing) reads index 0.
  const size_t lead = d.size() - from.size();
  std::vector<AxisMap> map(from.size());
  for (size_t k = 0; k < from.size(); ++k) {
    map[k].coef.assign(d.size(), 0);
    if (from[k] != 1) map[k].coef[lead + k] = 1;
  }
  return Reindex(a, d, std::move(map));
}

int SubGraph::num_reductions() const {
  return static_cast<int>(std::count_if(
      nodes.begin(), nodes.end(), [](const SubNode& n) { return n.kind == SubOpKind::kReduce; }));
}

Status CheckSubGraph(const SubGraph& g) {
  auto bad = [](size_t i, const std::string& why) {
    return InternalError("sub-operator graph: node %" + std::to_string(i) + ": " + why);
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const SubNode& n = g.nodes[i];
    for (int a : n.args)
      if (a < 0 || static_cast<size_t>(a) >= i) return bad(i, "operand out of order");
    for (int64_t d : n.dims)
      if (d <= 0) return bad(i, "non-positive extent");
    const size_t arity = n.kind == SubOpKind::kInput || n.kind == SubOpKind::kConst ? 0
                         : n.kind == SubOpKind::kBinary                             ? 2
                         : n.kind == SubOpKind::kSelect                             ? 3
                                                                                    : 1;
    if (n.args.size() != arity) return bad(i, "arity");
    switch (n.kind) {
      case SubOpKind::kInput:
        if (n.input < 0 || static_cast<size_t>(n.input) >= g.input_dims.size() ||
            g.input_dims[n.input] != n.dims)
          return bad(i, "input");
        break;
      case SubOpKind::kUnary:
      case SubOpKind::kBinary:
      case SubOpKind::kSelect:
        for (int a : n.args)
          if (g.nodes[a].dims != n.dims) return bad(i, "operand dims differ");
        break;
      case SubOpKind::kReindex: {
        const SubNode& in = g.nodes[n.args[0]];
        if (n.map.size() != in.dims.size()) return bad(i, "one axis map per input axis");
        for (const AxisMap& m : n.map)
          if (m.coef.size() != n.dims.size() || m.divisor <= 0 || m.modulus < 0)
            return bad(i, "axis map");
        break;
      }
      case SubOpKind::kReduce: {
        const SubNode& in = g.nodes[n.args[0]];
        if (in.dims.size() != n.dims.size() || n.reduce_axes.empty()) return bad(i, "reduce");
        for (int ax : n.reduce_axes)
          if (ax < 0 || static_cast<size_t>(ax) >= n.dims.size() || n.dims[ax] != 1)
            return bad(i, "reduce axis");
        break;
      }
      case SubOpKind::kConst:
        break;
    }
  }
  if (g.output < 0 || static_cast<size_t>(g.output) >= g.nodes.size())
    return InternalError("sub-operator graph: no output");
  return Status::Ok();
}

namespace {

std::string List(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string Number(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

}  // namespace

std::string SubGraphText(const SubGraph& g) {
  std::string s;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const SubNode& n = g.nodes[i];
    s += "%" + std::to_string(i) + " = ";
    switch (n.kind) {
      case SubOpKind::kInput:
        s += "input " + std::to_string(n.input);
        break;
      case SubOpKind::kConst:
        s += "const " + Number(n.value);
        break;
      case SubOpKind::kUnary:
        s += UnaryName(n.unary);
        break;
      case SubOpKind::kBinary:
        s += BinaryName(n.binary);
        break;
      case SubOpKind::kSelect:
        s += "select";
        break;
      case SubOpKind::kReindex: {
        s += "reindex fill " + Number(n.value) + " {";
        for (size_t k = 0; k < n.map.size(); ++k) {
          const AxisMap& m = n.map[k];
          s += (k ? "; " : "") + List(m.coef) + "+" + std::to_string(m.offset) + "/" +
               std::to_string(m.divisor) + "%" + std::to_string(m.modulus);
        }
        s += "}";
        break;
      }
      case SubOpKind::kReduce: {
        s += n.reduce == ReduceFn::kSum ? "reduce_sum [" : "reduce_max [";
        for (size_t k = 0; k < n.reduce_axes.size(); ++k)
          s += (k ? "," : "") + std::to_string(n.reduce_axes[k]);
        s += "]";
        break;
      }
    }
    for (int a : n.args) s += " %" + std::to_string(a);
    s += " : " + List(n.dims) + "\n";
  }
  s += "output %" + std::to_string(g.output) + "\n";
  return s;
}

namespace {

double ApplyUnary(UnaryFn f, double x) {
  switch (f) {
    case UnaryFn::kNeg:
      return -x;
    case UnaryFn::kRecip:
      return 1.0 / x;
    case UnaryFn::kExp:
      return std::exp(x);
    case UnaryFn::kLog:
      return std::log(x);
    case UnaryFn::kSqrt:
      return std::sqrt(x);
    case UnaryFn::kErf:
      return std::erf(x);
    case UnaryFn::kTanh:
      return std::tanh(x);
    case UnaryFn::kAbs:
      return std::fabs(x);
  }
  return 0;
}

double ApplyBinary(BinaryFn f, double a, double b) {
  switch (f) {
    case BinaryFn::kAdd:
      return a + b;
    case BinaryFn::kMul:
      return a * b;
    case BinaryFn::kMax:
      return std::max(a, b);
    case BinaryFn::kMin:
      return std::min(a, b);
    case BinaryFn::kLess:
      return a < b ? 1.0 : 0.0;
    case BinaryFn::kPow:
      return std::pow(a, b);
  }
  return 0;
}

// Doubles, as the generated kernels compute (in float32).
struct DoubleSubops {
  using Elem = double;
  double Constant(double v) const { return v; }
  double Unary(UnaryFn f, double x) const { return ApplyUnary(f, x); }
  double Binary(BinaryFn f, double a, double b) const { return ApplyBinary(f, a, b); }
  double Select(double mask, double a, double b) const { return mask != 0 ? a : b; }
};

}  // namespace

StatusOr<std::vector<double>> EvaluateSubGraph(const SubGraph& g,
                                               const std::vector<std::vector<double>>& inputs) {
  return EvaluateSubGraphIn(DoubleSubops(), g, inputs);
}

bool ReductionsKeepOutputAxes(const SubGraph& g) {
  const std::vector<int64_t>& out = g.dims(g.output);
  std::vector<bool> after(g.nodes.size(), false);  // a reduction's result reaches it
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const SubNode& n = g.nodes[i];
    bool reads_reduced = false;
    for (int a : n.args) reads_reduced = reads_reduced || after[a];
    if (n.kind == SubOpKind::kReduce) {
      const std::vector<int64_t>& in = g.dims(n.args[0]);
      if (in.size() != out.size()) return false;
      for (size_t k = 0; k < in.size(); ++k)
        if (in[k] != out[k] && std::find(n.reduce_axes.begin(), n.reduce_axes.end(),
                                         static_cast<int>(k)) == n.reduce_axes.end())
          return false;
      after[i] = true;
      continue;
    }
    if (reads_reduced && n.kind == SubOpKind::kReindex && !IsBroadcast(g, n)) return false;
    after[i] = reads_reduced;
  }
  return true;
}

int DenseTrailingAxes(const SubGraph& g) {
  int dense = static_cast<int>(g.dims(g.output).size());
  for (const SubNode& n : g.nodes) {
    if (n.kind == SubOpKind::kReduce) return 0;
    if (n.kind != SubOpKind::kReindex) continue;
    const std::vector<int64_t>& in = g.dims(n.args[0]);
    const int rank_out = static_cast<int>(n.dims.size()), rank_in = static_cast<int>(in.size());
    int same = 0;
    for (; same < std::min(rank_out, rank_in); ++same) {
      const int jo = rank_out - 1 - same, ki = rank_in - 1 - same;
      const AxisMap& m = n.map[ki];
      bool identity = in[ki] == n.dims[jo] && m.offset == 0 && m.divisor == 1 &&
                      (m.modulus == 0 || m.modulus >= in[ki]);
      for (int j = 0; j < rank_out && identity; ++j) identity = m.coef[j] == (j == jo ? 1 : 0);
      for (int k = 0; k < rank_in && identity; ++k) identity = k == ki || n.map[k].coef[jo] == 0;
      if (!identity) break;
    }
    dense = std::min(dense, same);
  }
  return dense;
}

}  // namespace verisub::fusion
