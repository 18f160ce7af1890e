// Helpers for specs tests.
#include "tests/specs/test_util.h"

#include "specs/term.h"

namespace verisub::specs::testing {

StatusOr<std::vector<Tensor<double>>> RunOp(const std::string& op_with_params,
                                            const std::vector<Tensor<double>>& inputs) {
  auto ast = ParseTermString("(" + op_with_params + ")");
  if (!ast.ok()) return ast.status();
  const OpSpec* op = FindOp(ast->head);
  if (!op) return NotFound("no operator " + ast->head);
  Params p = op->DefaultParams();
  for (const auto& [k, v] : ast->params) {
    const ParamDesc* d = op->FindParam(k);
    if (!d) return NotFound("no parameter " + k);
    VERISUB_RETURN_IF_ERROR(ParseParamValue(*d, v, &p));
  }
  const Tensor<double>* in[kMaxOpInputs];
  for (size_t i = 0; i < inputs.size(); ++i) in[i] = &inputs[i];
  std::vector<Tensor<double>> out(op->num_outputs);
  VERISUB_RETURN_IF_ERROR(Evaluate(DoubleSemantics(), op->kind, p, in, out.data()));
  return out;
}

}  // namespace verisub::specs::testing
