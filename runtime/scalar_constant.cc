// One-element float weights.
#include "runtime/scalar_constant.h"

namespace verisub::runtime {

std::optional<double> ScalarConstant(const Graph& g, int v) {
  if (v == kNoValue || !g.value(v).constant) return std::nullopt;
  const HostTensor& t = *g.value(v).constant;
  if ((t.elem_type != kFloat && t.elem_type != kDouble) || CountElements(t.dims) != 1)
    return std::nullopt;
  return t.DoubleAt(0);
}

}  // namespace verisub::runtime
