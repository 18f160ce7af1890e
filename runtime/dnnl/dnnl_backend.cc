// The oneDNN backend's prepare driver: folds constants, plans fusion, creates each group's
// kernel (retrying on plain inputs, else the reference kernel) and hands the steps to the
// prepared model.
#include "runtime/dnnl/dnnl_backend.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "runtime/constant_folding.h"
#include "runtime/dnnl/builder.h"
#include "runtime/dnnl/fallback.h"
#include "runtime/dnnl/fusion.h"
#include "runtime/dnnl/prepared_model.h"
#include "runtime/executor.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

using namespace dnnl_backend;

bool OnDevice(const Value& v) {
  if (v.elem_type != kFloat || !v.rank_known) return false;
  for (int64_t d : v.dims)
    if (d <= 0) return false;
  return true;
}

class Driver {
 public:
  Driver(ModelDraft* d, PrepareStats* stats) : d_(d), stats_(stats) {}

  Status BuildGroup(const Group& grp) {
    const Node& n = d_->graph->node(grp.kernel_node);
    if (KernelFn kernel = Kernels().Find(grp.pattern.empty() ? n.KindName() : grp.pattern)) {
      for (bool plain : {false, true}) {
        KernelBuilder b(d_, grp, plain);
        // The kernel's own refusal is kept here: a dnnl::error holds only a pointer to its
        // message, which died with the kernel's Status (DnnlCall read freed memory).
        Status refused = Status::Ok();
        Status st = DnnlCall(n.name, [&] {
          refused = kernel(b);
          if (!refused.ok()) throw dnnl::error(dnnl_unimplemented, "kernel refused");
        });
        if (!refused.ok()) st = refused;
        if (st.ok()) {
          for (Step& s : b.TakeSteps()) d_->steps.push_back(std::move(s));
          stats_->fused_nodes += static_cast<int>(grp.members.size()) - 1;
          return Status::Ok();
        }
      }
    }
    if (grp.members.size() > 1) {  // run the members one by one
      std::vector<int> members = grp.members;
      std::sort(members.begin(), members.end());
      for (int m : members) VERISUB_RETURN_IF_ERROR(BuildGroup(Single(m)));
      return Status::Ok();
    }
    if (!HasKernel(n)) return Unimplemented("node '" + n.name + "': no kernel for " + n.KindName());
    KernelBuilder b(d_, grp, true);
    VERISUB_RETURN_IF_ERROR(DnnlCall(n.name, [&] { EmitReference(b); }));
    for (Step& s : b.TakeSteps()) d_->steps.push_back(std::move(s));
    ++stats_->fallback_nodes;
    ++stats_->fallback_kinds[n.KindName()];
    return Status::Ok();
  }

  Group Single(int i) const {
    Group g;
    g.kernel_node = g.last_node = i;
    g.members = {i};
    const Node& n = d_->graph->node(i);
    g.output = n.outputs.empty() ? kNoValue : n.outputs[0];
    return g;
  }

 private:
  ModelDraft* d_;
  PrepareStats* stats_;
};

// The 8-bit weights of `g` (QuantizedWeight), before the prepare folds their DequantizeLinear.
std::map<std::string, QuantizedWeight> QuantizedWeights(const Graph& g, int64_t opset) {
  std::map<std::string, QuantizedWeight> out;
  if (!HasInt8DotKernels()) return out;
  for (const auto& np : g.nodes()) {
    const Node& n = *np;
    if (!n.opaque() || n.op_type != "DequantizeLinear" || !n.domain.empty() || !n.onnx ||
        n.inputs.size() < 2 || n.outputs.size() != 1 || n.outputs[0] == kNoValue)
      continue;
    const auto constant = [&](size_t k) -> const HostTensor* {
      return k < n.inputs.size() && n.inputs[k] != kNoValue ? g.value(n.inputs[k]).constant.get()
                                                            : nullptr;
    };
    const HostTensor *w = constant(0), *scale = constant(1), *zero = constant(2);
    if (!w || w->elem_type != kInt8 || w->dims.empty() || !scale ||
        (n.inputs.size() > 2 && n.inputs[2] != kNoValue && !zero))
      continue;
    if (zero) {
      const std::vector<int64_t> z = zero->ToInts();
      if (std::any_of(z.begin(), z.end(), [](int64_t v) { return v != 0; })) continue;
    }
    int64_t axis = KernelContext(*n.onnx, opset, {}).AttrInt("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(w->dims.size());
    const int64_t count = scale->NumElements();
    if (count != 1 &&
        (axis < 0 || axis >= static_cast<int64_t>(w->dims.size()) || count != w->dims[axis]))
      continue;
    QuantizedWeight q;
    q.axis = count == 1 ? -1 : static_cast<int>(axis);
    q.data = g.value(n.inputs[0]).constant;
    for (int64_t i = 0; i < count; ++i) q.scales.push_back(static_cast<float>(scale->DoubleAt(i)));
    out[g.value(n.outputs[0]).name] = std::move(q);
  }
  return out;
}

// Values written as their 8-bit steps (ModelDraft::eight_bit): the output of a QuantizeLinear /
// DequantizeLinear pair that ends a convolution's group or is a group of its own
// ("pattern:fake_quant"), no graph output, read only as the input of convolutions and matmuls
// that run in int8 (Int8OperandsOf). The producer writes 8 bits where
// its kernel can (else float32, as before); a reader that cannot take them after all converts
// them back (KernelBuilder::Converted dequantizes).
std::map<int, FakeQuant> EightBitValues(const Graph& g, const FusionPlan& plan,
                                        const ModelDraft& d) {
  std::map<int, FakeQuant> out;
  if (!Int8KernelsEnabled()) return out;
  std::vector<std::vector<int>> readers(g.num_values());
  for (int i = 0; i < g.num_nodes(); ++i)
    for (int v : g.node(i).inputs)
      if (v != kNoValue) readers[v].push_back(i);
  std::vector<char> is_output(g.num_values(), 0);
  for (int v : g.outputs()) is_output[v] = 1;
  auto int8_group = [&](const Group& grp) { return Int8OperandsOf(g, d, grp).has_value(); };
  // Node i reads v as its group's int8 kernel's input, or as the residual a convolution's
  // group adds before its trailing pair (Group::trailing_quantize) when that group's output is
  // 8 bits too (its destination then holds the residual's steps).
  auto reads_as_8_bits = [&](int i, int v) {
    const int gi = plan.group_of[i];
    if (gi < 0) return false;
    const Group& grp = plan.groups[gi];
    const Node& n = g.node(i);
    if (grp.kernel_node == i)
      return n.inputs[0] == v && std::count(n.inputs.begin(), n.inputs.end(), v) == 1 &&
             int8_group(grp);
    if (grp.trailing_quantize < 0 || !out.count(grp.output) || !int8_group(grp)) return false;
    for (const PostOp& op : grp.post_ops)
      if (op.kind == PostOp::kSum && op.node == i && op.operands[0] == v) return true;
    return false;
  };
  for (const Group& grp : plan.groups) {
    if (grp.pattern != "pattern:fake_quant" &&
        (!grp.pattern.empty() || !IsConv(g.node(grp.kernel_node))))
      continue;
    const int v = grp.output;
    if (v == kNoValue || is_output[v] || readers[v].empty()) continue;
    if (const std::optional<FakeQuant> fq = PairProducing(g, d.producers, v)) out[v] = *fq;
  }
  // The candidates whose every reader takes 8 bits, to a fixpoint (a residual read as 8 bits
  // needs the reading group's output in 8 bits).
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = out.begin(); it != out.end();) {
      bool all = true;
      for (int r : readers[it->first]) all = all && reads_as_8_bits(r, it->first);
      if (all) {
        ++it;
      } else {
        it = out.erase(it);
        changed = true;
      }
    }
  }
  return out;
}

// Groups for the generator's clusters. Nodes a convolution or matmul absorbed (post-ops), merged
// concats and folded pads stay the library's; the library's memory-bound patterns (a channel
// affine, a GELU) are open to the generator, which takes such a group whole or leaves it. Nodes
// stored in bfloat16 stay out (generated kernels are float32). A cluster of one node is taken
// too: nothing is fused, but the generated kernel can be the faster one (ViT-B/16's softmax 1.7x,
// GELU 1.3x oneDNN's at one thread); --fusion auto keeps each cluster only where it timed faster.
void AddGeneratedGroups(const Graph& g, KernelGenerator* generator, ModelDraft* d,
                        FusionPlan* plan) {
  std::vector<char> taken(g.num_nodes(), 0);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const int gi = plan->group_of[i];
    if (gi >= 0 && plan->groups[gi].members.size() > 1 && plan->groups[gi].pattern.empty())
      taken[i] = 1;
    if (!d->bf16.empty())
      for (int v : g.node(i).outputs)
        if (v != kNoValue && d->bf16[v]) taken[i] = 1;
  }
  d->generator = generator;
  const auto start = std::chrono::steady_clock::now();
  std::vector<KernelCluster> clusters = generator->Plan(g, taken);
  d->generator_plan_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (KernelCluster& c : clusters) {
    bool whole = true;  // every library group it touches, it covers
    for (int m : c.nodes) {
      const int gi = plan->group_of[m];
      if (gi < 0) continue;
      for (int other : plan->groups[gi].members)
        whole &= std::find(c.nodes.begin(), c.nodes.end(), other) != c.nodes.end();
    }
    if (!whole) continue;
    Group grp;
    grp.kernel_node = grp.last_node = c.nodes.back();
    grp.members = c.nodes;
    grp.output = c.output;
    grp.pattern = "pattern:generated";
    grp.generated = static_cast<int>(d->generated.size());
    d->generated.push_back(std::move(c));
    const int gi = static_cast<int>(plan->groups.size());
    for (int m : grp.members) plan->group_of[m] = gi;
    plan->groups.push_back(std::move(grp));
  }
}

class DnnlBackend : public Backend {
 public:
  std::string Name() const override { return "onednn"; }

  bool CanRun(const Graph&, const Node& n) const override {
    return Kernels().Find(n.KindName()) != nullptr;
  }

  StatusOr<std::unique_ptr<PreparedModel>> Prepare(const Graph& g,
                                                   const PrepareOptions& options) const override {
    VERISUB_RETURN_IF_ERROR(CheckGraph(g));
    ThreadScope threads(options.num_threads);
    auto graph = std::make_unique<Graph>(g);
    ModelDraft d;
    d.quantized_weights = QuantizedWeights(g, g.DefaultOpset());
    // Weights-only subgraphs left by the import mapping (a Gemm's transposed weight) fold here.
    if (!FoldConstants(graph.get()).ok()) *graph = g;
    const Graph& fg = *graph;
    try {
      d.engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
      d.stream = dnnl::stream(d.engine);
    } catch (const dnnl::error& e) {
      return FailedPrecondition(std::string("oneDNN: no CPU engine: ") + e.what());
    }
    d.graph = &fg;
    if (!options.layouts.empty()) {
      if (static_cast<int>(options.layouts.size()) != g.num_values())
        return InvalidArgument("layouts: " + std::to_string(options.layouts.size()) +
                               " given for " + std::to_string(g.num_values()) + " values");
      // Folding renumbers values: the layouts follow the value names.
      std::map<std::string, specs::Layout> by_name;
      for (int v = 0; v < g.num_values(); ++v) by_name[g.value(v).name] = options.layouts[v];
      d.layouts.assign(fg.num_values(), specs::Layout::kPlain);
      for (int v = 0; v < fg.num_values(); ++v)
        if (auto it = by_name.find(fg.value(v).name); it != by_name.end())
          d.layouts[v] = it->second;
    }
    if (!options.storage_types.empty()) {
      if (static_cast<int>(options.storage_types.size()) != g.num_values())
        return InvalidArgument("storage types: " + std::to_string(options.storage_types.size()) +
                               " given for " + std::to_string(g.num_values()) + " values");
      std::map<std::string, int32_t> by_name;
      bool any = false;
      for (int v = 0; v < g.num_values(); ++v) {
        const int32_t t = options.storage_types[v];
        if (t == kBfloat16) {
          any = true;
        } else if (t != 0 && t != g.value(v).elem_type) {
          return InvalidArgument("storage types: value '" + g.value(v).name + "' of type " +
                                 ElemTypeName(g.value(v).elem_type) + " cannot be stored as " +
                                 ElemTypeName(t));
        }
        by_name[g.value(v).name] = t;
      }
      if (any && !HasBf16Kernels())
        return FailedPrecondition(
            "bfloat16 storage: oneDNN has no native bfloat16 kernels on this CPU (it needs "
            "avx512_core_bf16; this one is " +
            CpuIsaName() + ")");
      d.bf16.assign(fg.num_values(), 0);
      for (int v = 0; v < fg.num_values(); ++v)
        if (auto it = by_name.find(fg.value(v).name); it != by_name.end())
          d.bf16[v] =
              it->second == kBfloat16 && fg.value(v).elem_type == kFloat && !fg.value(v).constant;
    }
    for (int v = 0; v < fg.num_values(); ++v) {
      const Value& val = fg.value(v);
      Slot s;
      s.name = val.name;
      s.dims = val.dims;
      s.elem_type = val.elem_type;
      s.constant = val.constant;
      s.host = !OnDevice(val) || (val.constant && val.constant->elem_type != kFloat);
      if (!s.host) s.desc = PlainDesc(val.dims);
      d.slots.push_back(std::move(s));
    }
    for (int v : fg.inputs()) d.slots[v].graph_input = true;
    for (int v : fg.outputs()) d.slots[v].graph_output = true;
    d.readers = fg.UseCounts();
    d.producers = fg.Producers();
    PrepareStats stats;
    const int compiled_before = options.generator ? options.generator->compiled() : 0;
    const int hits_before = options.generator ? options.generator->cache_hits() : 0;
    const int rewrites_before = options.generator ? options.generator->rule_rewrites() : 0;
    FusionPlan plan = PlanFusion(fg);
    if (!options.library_fusion) plan = Unfused(fg, std::move(plan));
    if (options.generator) AddGeneratedGroups(fg, options.generator.get(), &d, &plan);
    d.eight_bit = EightBitValues(fg, plan, d);
    Driver driver(&d, &stats);
    for (int i = 0; i < fg.num_nodes(); ++i) {
      int gi = plan.group_of[i];
      if (gi >= 0 && plan.groups[gi].last_node != i) continue;
      Group grp = gi >= 0 ? plan.groups[gi] : driver.Single(i);
      VERISUB_RETURN_IF_ERROR(driver.BuildGroup(grp));
      for (int m : grp.members)
        for (int v : fg.node(m).inputs)
          if (v != kNoValue) --d.readers[v];
    }
    stats.steps = static_cast<int>(d.steps.size());
    stats.reorders = d.reorders;
    stats.weight_bytes = d.weight_bytes;
    stats.shared_weight_bytes = d.shared_weight_bytes;
    stats.in_place = d.in_place;
    stats.kernel_variants = d.kernel_variants;
    stats.generated_kernels = d.generated_kernels;
    stats.generated_nodes = d.generated_nodes;
    stats.generator_error = d.generator_error;
    stats.generator_plan_seconds = d.generator_plan_seconds;
    if (options.generator) {
      stats.kernels_compiled = options.generator->compiled() - compiled_before;
      stats.kernel_cache_hits = options.generator->cache_hits() - hits_before;
      stats.subop_rule_rewrites = options.generator->rule_rewrites() - rewrites_before;
    }
    auto prepared =
        DnnlPrepared::Create(std::move(graph), std::move(d), options.num_threads, stats);
    if (!prepared.ok()) return prepared.status();
    return std::unique_ptr<PreparedModel>(std::move(*prepared));
  }
};

}  // namespace

std::unique_ptr<Backend> MakeDnnlBackend() { return std::make_unique<DnnlBackend>(); }

}  // namespace verisub::runtime
