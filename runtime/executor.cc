// Reference executor: spec kernels through specs::Evaluate<DoubleSemantics>, ONNX kernels for
// opaque nodes, values freed after their last use.
#include "runtime/executor.h"

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"
#include "specs/evaluate.h"
#include "specs/ops/transpose.h"
#include "specs/semantics.h"

namespace verisub::runtime {
namespace {

StatusOr<std::vector<HostTensor>> RunSpecNode(const Graph& g, const Node& n,
                                              const std::vector<const HostTensor*>& inputs) {
  const specs::OpSpec& spec = specs::GetOp(*n.op);
  // A transpose moves elements in their own type: folding a classifier's transposed weight
  // (AlexNet's 38 M elements) through doubles cost seconds at every load.
  if (*n.op == specs::OpKind::kTranspose && inputs.size() == 1 && inputs[0]) {
    std::vector<int64_t> perm;
    for (int p : specs::DecodePerm(n.params[specs::ops::kTransposePerm])) perm.push_back(p);
    if (perm.size() == inputs[0]->dims.size()) {
      std::vector<HostTensor> out;
      out.push_back(TransposeTensor(*inputs[0], perm));  // moved, not copied
      return out;
    }
  }
  std::vector<specs::Tensor<double>> in(spec.num_inputs);
  const specs::Tensor<double>* in_ptrs[specs::kMaxOpInputs];
  for (int k = 0; k < spec.num_inputs; ++k) {
    const HostTensor* t = inputs[k];
    if (!t) return InvalidArgument("input " + std::to_string(k) + " is missing");
    const Value& v = g.value(n.inputs[k]);
    if (v.spec_type && v.spec_type->shape.ToVector() == t->dims) {
      in[k].type = *v.spec_type;  // keeps the split trees the shape rules need
    } else {
      auto shape = specs::Shape::FromVector(t->dims);
      if (!shape.ok()) return shape.status();
      in[k].type = specs::TensorType(*shape);
    }
    in[k].data = t->ToDoubles();
    in_ptrs[k] = &in[k];
  }
  specs::Tensor<double> out[specs::kMaxOpOutputs];
  VERISUB_RETURN_IF_ERROR(specs::Evaluate(specs::DoubleSemantics{}, *n.op, n.params, in_ptrs, out));
  std::vector<HostTensor> result;
  for (int k = 0; k < spec.num_outputs; ++k) {
    int32_t type = g.value(n.outputs[k]).elem_type;
    result.push_back(HostTensor::FromDoubles(type, out[k].shape().ToVector(), out[k].data));
  }
  return result;
}

}  // namespace

bool HasKernel(const Node& n) {
  return n.op.has_value() || FindOnnxKernel(n.domain, n.op_type) != nullptr;
}

StatusOr<std::vector<HostTensor>> RunNode(const Graph& g, const Node& n,
                                          const std::vector<const HostTensor*>& inputs) {
  if (n.op) return RunSpecNode(g, n, inputs);
  const OnnxKernel* kernel = FindOnnxKernel(n.domain, n.op_type);
  if (!kernel) return Unimplemented("no reference kernel for " + n.KindName());
  KernelContext ctx(*n.onnx, g.OpsetFor(n.domain), inputs);
  std::vector<HostTensor> outputs(n.outputs.size());
  VERISUB_RETURN_IF_ERROR((*kernel)(ctx, &outputs));
  return outputs;
}

StatusOr<std::vector<HostTensor>> Execute(const Graph& g, const std::vector<HostTensor>& inputs,
                                          const MemoryBudget& budget, const StoreHook& store) {
  VERISUB_RETURN_IF_ERROR(CheckMemoryBudget(g, budget, /*executor=*/true));
  if (inputs.size() != g.inputs().size())
    return InvalidArgument("the graph has " + std::to_string(g.inputs().size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  std::vector<std::shared_ptr<const HostTensor>> env(g.num_values());
  for (int v = 0; v < g.num_values(); ++v) env[v] = g.value(v).constant;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Value& v = g.value(g.inputs()[k]);
    if (!v.Accepts(inputs[k].dims))
      return InvalidArgument("input '" + v.name + "' expects shape " + DimsToString(v.dims) +
                             ", got " + DimsToString(inputs[k].dims));
    if (inputs[k].elem_type != v.elem_type)
      return InvalidArgument("input '" + v.name + "' expects element type " +
                             ElemTypeName(v.elem_type) + ", got " +
                             ElemTypeName(inputs[k].elem_type));
    env[g.inputs()[k]] = std::make_shared<const HostTensor>(inputs[k]);
  }
  std::vector<int> uses = g.UseCounts();
  for (const auto& np : g.nodes()) {
    const Node& n = *np;
    std::vector<const HostTensor*> in;
    for (int v : n.inputs) {
      if (v != kNoValue && !env[v])
        return InternalError("node '" + n.name + "' reads '" + g.value(v).name +
                             "', which has no value");
      in.push_back(v == kNoValue ? nullptr : env[v].get());
    }
    auto out = RunNode(g, n, in);
    if (!out.ok()) return out.status().WithContext("node '" + n.name + "' (" + n.KindName() + ")");
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (n.outputs[k] != kNoValue) {
        if (store) store(n.outputs[k], &(*out)[k]);
        env[n.outputs[k]] = std::make_shared<const HostTensor>(std::move((*out)[k]));
      }
    for (int v : n.inputs)
      if (v != kNoValue && --uses[v] == 0 && !g.value(v).constant) env[v].reset();
  }
  std::vector<HostTensor> result;
  for (int v : g.outputs()) result.push_back(*env[v]);
  return result;
}

}  // namespace verisub::runtime
