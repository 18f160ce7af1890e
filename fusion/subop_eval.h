// Evaluation of a sub-operator graph under any element semantics: doubles (EvaluateSubGraph, the
// reference generated kernels are tested against) or symbolic expressions (the lowering's
// symbolic check in tests/fusion compares a lowered operator with its spec kernel on polynomials).
// A semantics S provides:
//   using Elem;
//   Elem Constant(double);
//   Elem Unary(UnaryFn, Elem), Binary(BinaryFn, Elem, Elem), Select(Elem mask, Elem a, Elem b);
#pragma once

#include <vector>

#include "base/status.h"
#include "fusion/subop.h"

namespace verisub::fusion {

// `g` on row-major inputs; the output node's values. Errors: a malformed graph, inputs of the
// wrong count or size.
template <class S>
StatusOr<std::vector<typename S::Elem>> EvaluateSubGraphIn(
    const S& s, const SubGraph& g, const std::vector<std::vector<typename S::Elem>>& inputs) {
  using Elem = typename S::Elem;
  VERISUB_RETURN_IF_ERROR(CheckSubGraph(g));
  if (inputs.size() != g.input_dims.size())
    return InvalidArgument("sub-operator graph: " + std::to_string(g.input_dims.size()) +
                           " inputs expected, " + std::to_string(inputs.size()) + " given");
  for (size_t i = 0; i < inputs.size(); ++i)
    if (static_cast<int64_t>(inputs[i].size()) != NumElements(g.input_dims[i]))
      return InvalidArgument("sub-operator graph: input " + std::to_string(i) + " has " +
                             std::to_string(inputs[i].size()) + " elements");
  std::vector<std::vector<Elem>> val(g.nodes.size());
  std::vector<int64_t> idx;
  // Row-major multi-index of flat position `flat` in `dims`.
  auto unflatten = [&idx](int64_t flat, const std::vector<int64_t>& dims) {
    idx.resize(dims.size());
    for (size_t k = dims.size(); k-- > 0;) {
      idx[k] = flat % dims[k];
      flat /= dims[k];
    }
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const SubNode& n = g.nodes[i];
    const int64_t count = NumElements(n.dims);
    std::vector<Elem>& out = val[i];
    switch (n.kind) {
      case SubOpKind::kInput:
        out = inputs[n.input];
        break;
      case SubOpKind::kConst:
        out.assign(count, s.Constant(n.value));
        break;
      case SubOpKind::kUnary:
        out.reserve(count);
        for (int64_t e = 0; e < count; ++e) out.push_back(s.Unary(n.unary, val[n.args[0]][e]));
        break;
      case SubOpKind::kBinary:
        out.reserve(count);
        for (int64_t e = 0; e < count; ++e)
          out.push_back(s.Binary(n.binary, val[n.args[0]][e], val[n.args[1]][e]));
        break;
      case SubOpKind::kSelect:
        out.reserve(count);
        for (int64_t e = 0; e < count; ++e)
          out.push_back(s.Select(val[n.args[0]][e], val[n.args[1]][e], val[n.args[2]][e]));
        break;
      case SubOpKind::kReindex: {
        const std::vector<int64_t>& in_dims = g.nodes[n.args[0]].dims;
        const Elem fill = s.Constant(n.value);
        out.reserve(count);
        for (int64_t e = 0; e < count; ++e) {
          unflatten(e, n.dims);
          int64_t flat = 0;
          bool inside = true;
          for (size_t k = 0; k < n.map.size(); ++k) {
            const AxisMap& m = n.map[k];
            int64_t at = m.offset;
            for (size_t j = 0; j < idx.size(); ++j) at += m.coef[j] * idx[j];
            at = FloorDiv(at, m.divisor);
            if (m.modulus > 0) at = ((at % m.modulus) + m.modulus) % m.modulus;
            inside &= at >= 0 && at < in_dims[k];
            flat = flat * in_dims[k] + at;
          }
          out.push_back(inside ? val[n.args[0]][flat] : fill);
        }
        break;
      }
      case SubOpKind::kReduce: {
        const std::vector<int64_t>& in_dims = g.nodes[n.args[0]].dims;
        const BinaryFn combine = n.reduce == ReduceFn::kSum ? BinaryFn::kAdd : BinaryFn::kMax;
        out.assign(count, s.Constant(0));
        std::vector<bool> seen(count, false);
        for (int64_t e = 0; e < NumElements(in_dims); ++e) {
          unflatten(e, in_dims);
          for (int ax : n.reduce_axes) idx[ax] = 0;
          int64_t flat = 0;
          for (size_t k = 0; k < idx.size(); ++k) flat = flat * n.dims[k] + idx[k];
          const Elem& x = val[n.args[0]][e];
          out[flat] = seen[flat] ? s.Binary(combine, out[flat], x) : x;
          seen[flat] = true;
        }
        break;
      }
    }
  }
  return val[g.output];
}

}  // namespace verisub::fusion
