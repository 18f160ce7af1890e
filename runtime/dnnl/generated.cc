// Clusters of memory-bound nodes run by one generated kernel each (PrepareOptions::generator,
// `--fusion subop`): the kernel reads its inputs in the layouts they are stored in (plain,
// channels-last, blocked; a layout is one more reindex of the generated code) and writes its
// output in its first full-size activation input's layout, else in the one assigned to it.
#include <cstring>

#include "runtime/dnnl/builder.h"

namespace verisub::runtime::dnnl_backend {
namespace {

Status GeneratedKernelFn(KernelBuilder& b) {
  ModelDraft& d = b.draft();
  const Group& grp = b.group();
  if (!d.generator || grp.generated < 0 || grp.generated >= static_cast<int>(d.generated.size()))
    return InternalError("generated kernel: no cluster");
  const KernelCluster& cluster = d.generated[grp.generated];
  const int y = cluster.output;
  if (!b.Dnnl(y) || b.OutputType(y) != memory::data_type::f32)
    return Unimplemented("generated kernel: float32 output only");
  // Inputs: weights copied once (as float32), activations read where they are stored.
  struct Input {
    int slot = kNoValue;
    std::shared_ptr<const std::vector<float>> fixed;
  };
  std::vector<Input> inputs;
  std::vector<int> reads;
  std::vector<specs::Layout> layouts;
  // The output in its first full-size activation input's layout, as the library's element-wise
  // kernels keep theirs (then the kernel runs in that layout's index space, no conversion);
  // else the layout assigned to it; else plain.
  std::optional<specs::Layout> out_layout;
  for (int v : cluster.inputs) {
    Input in;
    specs::Layout layout = specs::Layout::kPlain;
    if (b.constant(v)) {
      // Any type: a mask of booleans reads as 0 and 1.
      const std::vector<double> data = b.constant(v)->ToDoubles();
      in.fixed = std::make_shared<const std::vector<float>>(data.begin(), data.end());
    } else {
      if (!b.Dnnl(v)) return Unimplemented("generated kernel: an input on the host");
      const Desc stored = b.StoredDesc(v);
      // A smaller operand (a pooled squeeze-excite vector) is read plain: converting it costs
      // next to nothing, and the kernel then indexes it without division.
      const bool small = CountElements(b.dims(v)) < CountElements(b.dims(y));
      const std::optional<specs::Layout> l = stored.data_type() == memory::data_type::f32 && !small
                                                 ? LayoutOf(stored, b.dims(v))
                                                 : std::nullopt;
      in.slot = l ? (b.slot(v).desc == stored ? v : b.Converted(v, stored)) : b.PlainFloat(v);
      if (l) layout = *l;
      if (!out_layout && b.dims(v) == b.dims(y)) out_layout = layout;
      reads.push_back(in.slot);
    }
    layouts.push_back(layout);
    inputs.push_back(std::move(in));
  }
  if (!out_layout) out_layout = b.AssignedLayout(y);
  const specs::Layout output_layout = out_layout.value_or(specs::Layout::kPlain);
  const std::optional<Desc> out_desc = LayoutDesc(b.dims(y), output_layout);
  if (!out_desc) return Unimplemented("generated kernel: the output's layout");
  auto made = d.generator->Kernel(b.graph(), cluster, layouts, output_layout);
  if (!made.ok()) {  // the nodes run on the library's kernels; the first reason is reported
    if (d.generator_error.empty()) d.generator_error = made.status().message();
    return made.status();
  }
  std::shared_ptr<const GeneratedKernel> kernel = std::move(made).value();
  b.Define(y, *out_desc);
  b.EmitHost(
      [kernel, inputs, y](RunState& st) -> Status {
        std::vector<const float*> ptrs;
        ptrs.reserve(inputs.size());
        for (const Input& in : inputs)
          ptrs.push_back(in.fixed ? in.fixed->data()
                                  : static_cast<const float*>(st.mem[in.slot].get_data_handle()));
        return kernel->Run(ptrs, static_cast<float*>(st.mem[y].get_data_handle()));
      },
      reads, {y});
  b.SetStepKind(kernel->name());
  ++d.generated_kernels;
  d.generated_nodes += static_cast<int>(cluster.nodes.size());
  return Status::Ok();
}

}  // namespace

void AddGeneratedKernels(KernelRegistry* r) { r->Add("pattern:generated", GeneratedKernelFn); }

}  // namespace verisub::runtime::dnnl_backend
