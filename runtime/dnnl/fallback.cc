// The reference kernel of a node as a step of a oneDNN model: inputs converted to plain and
// copied into host tensors, the node run by runtime::RunNode, outputs copied back.
#include "runtime/dnnl/fallback.h"

#include <algorithm>
#include <cstring>

#include "runtime/dnnl/dynamic_ops.h"
#include "runtime/executor.h"

namespace verisub::runtime::dnnl_backend {

void EmitReference(KernelBuilder& b) {
  const Node& n = b.node();
  struct In {
    int slot = kNoValue;  // slot read at run time (plain), kNoValue when omitted
    std::shared_ptr<const HostTensor> constant;
    bool host = false;
    std::vector<int64_t> dims;
  };
  std::vector<In> ins;
  std::vector<int> reads, writes;
  for (int v : n.inputs) {
    In in;
    if (v != kNoValue) {
      const Slot& s = b.slot(v);
      in.constant = s.constant;
      in.host = s.host;
      in.dims = s.dims;
      if (!s.constant) {
        in.slot = s.host || IsPlain(s.desc) ? v : b.Converted(v, PlainDesc(s.dims));
        reads.push_back(in.slot);
      }
    }
    ins.push_back(std::move(in));
  }
  std::vector<int> outs = n.outputs;
  for (int v : outs) {
    if (v == kNoValue) continue;
    Slot& s = b.mutable_slot(v);
    if (!s.host) s.desc = PlainDesc(s.dims);
    s.alias_of = -1;
    writes.push_back(v);
  }
  const Graph* g = &b.graph();
  const Node* node = &n;
  std::vector<const HostTensor*> constants;
  for (const In& in : ins) constants.push_back(in.constant.get());
  std::shared_ptr<DynamicKernel> dynamic = MakeDynamicKernel(b, constants);
  if (dynamic) b.CountVariant("kernels of run-time shape");
  // The output may stay in channel blocks where every reader takes them (a convolution's output
  // read by the next convolution, an activation, a residual add or a pool): none of them, nor
  // anything after them, ever sees it in that layout unless it takes it.
  if (dynamic && n.outputs.size() == 1 && n.outputs[0] != kNoValue) {
    const int v = n.outputs[0];
    const auto& readers = b.ReadersOf(v);
    const Slot& s = b.slot(v);
    if (s.host && !s.graph_output && !readers.empty() &&
        std::all_of(readers.begin(), readers.end(), [&](const std::pair<int, int>& r) {
          return TakesChannelBlocks(b.graph().node(r.first), static_cast<size_t>(r.second));
        })) {
      dynamic->AllowChannelBlockedOutput();
      b.CountVariant("outputs left in channel blocks");
    }
  }
  // A host input read last here may be computed over in place (an activation over a mask
  // head's 80 MB: no fresh tensor, no page faults).
  // Of Add and Mul (exactly commutative in floating point) the second input may be the one
  // computed over, as a bias written first (Add(bias, x)) leaves it.
  auto consumable = [&](size_t k) {
    return k < ins.size() && ins[k].host && b.ConsumableHost(n.inputs[k]);
  };
  const bool commutes = n.opaque() && n.domain.empty() && ins.size() == 2 &&
                        (n.op_type == "Add" || n.op_type == "Mul");
  const size_t consumed = !consumable(0) && commutes && consumable(1) ? 1 : 0;
  const bool consume = dynamic && !n.inputs.empty() && n.outputs.size() == 1 &&
                       consumable(consumed) && b.slot(n.outputs[0]).host;
  // A host input read last here by a node that only renames its dims (an Unsqueeze of Mask
  // R-CNN's 80 MB of pasted masks) becomes the output as it is: the dims are computed by the
  // node's kernel on a tensor without data, then set on the input's tensor.
  static const char* kRenames[] = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity"};
  const bool rename = n.opaque() && n.outputs.size() == 1 && n.outputs[0] != kNoValue &&
                      !ins.empty() && ins[0].host && b.ConsumableHost(n.inputs[0]) &&
                      b.slot(n.outputs[0]).host &&
                      std::any_of(std::begin(kRenames), std::end(kRenames),
                                  [&](const char* t) { return n.op_type == t; });
  if (rename) b.CountVariant("host value renamed in place");
  std::vector<bool> out_host;
  std::vector<std::vector<int64_t>> out_dims;
  for (int v : outs) {
    out_host.push_back(v == kNoValue || b.slot(v).host);
    out_dims.push_back(v == kNoValue ? std::vector<int64_t>{} : b.slot(v).dims);
  }
  b.EmitHost(
      [g, node, ins, outs, out_host, out_dims, dynamic, consume, consumed,
       rename](RunState& st) -> Status {
        // Input k's tensor where it is a constant or a host value, else null.
        auto held = [&](size_t k) -> const HostTensor* {
          return ins[k].constant ? ins[k].constant.get()
                 : ins[k].host   ? st.host[ins[k].slot].get()
                                 : nullptr;
        };
        if (rename && st.host[ins[0].slot] && !st.host[ins[0].slot]->channel_block) {
          const std::shared_ptr<const HostTensor>& t = st.host[ins[0].slot];
          // Done in place already (a profile rerunning the step alone): the output is there.
          if (st.host[outs[0]] == t) return Status::Ok();
          if (t.use_count() == 1) {
            HostTensor shape_only;
            shape_only.elem_type = t->elem_type;
            shape_only.dims = t->dims;
            std::vector<const HostTensor*> ptrs(ins.size(), nullptr);
            ptrs[0] = &shape_only;
            for (size_t k = 1; k < ins.size(); ++k) ptrs[k] = held(k);
            if (std::all_of(ins.begin() + 1, ins.end(), [](const In& in) {
                  return in.constant || in.host || in.slot == kNoValue;
                })) {
              auto out = RunNode(*g, *node, ptrs);
              if (!out.ok()) return out.status().WithContext("node '" + node->name + "'");
              const_cast<HostTensor*>(t.get())->dims = (*out)[0].dims;  // see `consume`
              st.host[outs[0]] = t;
              if (!st.profiling) st.host[ins[0].slot].reset();  // see RunState::profiling
              return Status::Ok();
            }
          }
        }
        if (consume && st.host[ins[consumed].slot] &&
            st.host[ins[consumed].slot].use_count() == 1) {
          // Host tensors are made non-const (fallback's own outputs, below): the const view
          // is the only one, so the tensor may be written.
          // A profile's input slot keeps the tensor too (dead in this run; a profile that reruns
          // this step alone still finds an input, and then does not write over it again); a
          // run's is freed, so the next reader may compute over the tensor in place again (a
          // bias added in place, then the heads' Reshape renaming it: 0.04 ms a copy).
          const std::shared_ptr<const HostTensor> t = st.host[ins[consumed].slot];
          // The inputs with the one computed over first (swapped where it is the second of a
          // commutative pair).
          std::vector<const HostTensor*> others(ins.size(), nullptr);
          for (size_t k = 0; k < ins.size(); ++k) others[k] = held(k);
          std::swap(others[0], others[consumed]);
          const bool blocked = std::any_of(others.begin(), others.end(), [](const HostTensor* o) {
            return o && o->channel_block;
          });
          if ((!blocked || dynamic->TakesChannelBlocks()) &&
              dynamic->RunInPlaceAll(st, const_cast<HostTensor*>(t.get()), others)) {
            st.host[outs[0]] = t;
            if (!st.profiling) st.host[ins[consumed].slot].reset();
            return Status::Ok();
          }
        }
        std::vector<HostTensor> tmp(ins.size());
        std::vector<const HostTensor*> ptrs(ins.size(), nullptr);
        for (size_t k = 0; k < ins.size(); ++k) {
          const In& in = ins[k];
          if (in.constant) {
            ptrs[k] = in.constant.get();
          } else if (in.slot == kNoValue) {
            continue;
          } else if (in.host) {
            ptrs[k] = st.host[in.slot].get();
          } else {
            tmp[k].elem_type = kFloat;
            tmp[k].dims = in.dims;
            tmp[k].f32.resize(CountElements(in.dims));
            std::memcpy(tmp[k].f32.data(), st.mem[in.slot].get_data_handle(),
                        tmp[k].f32.size() * sizeof(float));
            ptrs[k] = &tmp[k];
          }
        }
        // Inputs in channel blocks, in row-major order for a kernel that does not take them (or
        // that declined them).
        auto row_major = [&] {
          for (size_t k = 0; k < ptrs.size(); ++k)
            if (ptrs[k] && ptrs[k]->channel_block) {
              tmp[k] = RowMajor(st, *ptrs[k]);
              ptrs[k] = &tmp[k];
            }
        };
        auto blocked = [&] {
          return std::any_of(ptrs.begin(), ptrs.end(),
                             [](const HostTensor* p) { return p && p->channel_block; });
        };
        if (!dynamic || !dynamic->TakesChannelBlocks()) row_major();
        std::optional<HostTensor> fast;
        if (dynamic && ptrs[0]) fast = dynamic->RunAll(st, ptrs);
        if (!fast && blocked()) {
          row_major();
          if (dynamic && ptrs[0]) fast = dynamic->RunAll(st, ptrs);
        }
        StatusOr<std::vector<HostTensor>> out = std::vector<HostTensor>(1);
        st.ran_reference_kernel = !fast;
        if (fast)
          (*out)[0] = std::move(*fast);
        else
          out = RunNode(*g, *node, ptrs);
        if (!out.ok()) return out.status().WithContext("node '" + node->name + "'");
        for (size_t k = 0; k < outs.size(); ++k) {
          if (outs[k] == kNoValue) continue;
          HostTensor& t = (*out)[k];
          if (out_host[k]) {
            st.host[outs[k]] = std::make_shared<HostTensor>(std::move(t));  // see `consume`
            continue;
          }
          if (t.channel_block) t = RowMajor(st, t);  // read by other steps as oneDNN memory
          if (t.dims != out_dims[k])
            return InternalError("node '" + node->name + "' produced " + DimsToString(t.dims) +
                                 ", expected " + DimsToString(out_dims[k]));
          std::vector<float> f = t.f32;
          if (t.elem_type != kFloat) {
            std::vector<double> d = t.ToDoubles();
            f.assign(d.begin(), d.end());
          }
          std::memcpy(st.mem[outs[k]].get_data_handle(), f.data(), f.size() * sizeof(float));
        }
        return Status::Ok();
      },
      reads, writes, /*reference=*/true);
}

}  // namespace verisub::runtime::dnnl_backend
