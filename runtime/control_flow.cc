// ONNX control flow: captured names, a subgraph interpreter on the reference kernels, and the
// If, Loop and Scan kernels.
#include "runtime/control_flow.h"

#include <deque>
#include <optional>
#include <set>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime {
namespace {

// Appends to `out` (once each, `seen`) the names `g` reads that neither it nor its nested
// subgraphs define.
void FreeNames(const onnx::GraphProto& g, std::set<std::string>* seen,
               std::vector<std::string>* out) {
  std::set<std::string> local;
  for (const auto& i : g.input()) local.insert(i.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& t : g.sparse_initializer()) local.insert(t.values().name());
  auto read = [&](const std::string& name) {
    if (!name.empty() && !local.count(name) && seen->insert(name).second) out->push_back(name);
  };
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) read(in);
    for (const auto& a : n.attribute()) {
      std::vector<std::string> inner;
      std::set<std::string> inner_seen;
      if (a.has_g()) FreeNames(a.g(), &inner_seen, &inner);
      for (const auto& sg : a.graphs()) FreeNames(sg, &inner_seen, &inner);
      for (const auto& name : inner) read(name);
    }
    for (const auto& o : n.output())
      if (!o.empty()) local.insert(o);
  }
  for (const auto& o : g.output()) read(o.name());
}

void RenameFree(onnx::GraphProto* g, const std::map<std::string, std::string>& renames) {
  std::set<std::string> local;
  for (const auto& i : g->input()) local.insert(i.name());
  for (const auto& t : g->initializer()) local.insert(t.name());
  auto rename = [&](std::string* name) {
    if (local.count(*name)) return;
    if (auto it = renames.find(*name); it != renames.end()) *name = it->second;
  };
  for (auto& n : *g->mutable_node()) {
    for (auto& in : *n.mutable_input()) rename(&in);
    // A name this graph defines hides the outer one inside the nested subgraphs too.
    std::map<std::string, std::string> inner = renames;
    for (const auto& name : local) inner.erase(name);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) RenameFree(a.mutable_g(), inner);
      for (auto& sg : *a.mutable_graphs()) RenameFree(&sg, inner);
    }
    for (const auto& o : n.output())
      if (!o.empty()) local.insert(o);
  }
  for (auto& o : *g->mutable_output()) rename(o.mutable_name());
}

const onnx::GraphProto* GraphAttr(const KernelContext& ctx, const char* name) {
  const onnx::AttributeProto* a = ctx.FindAttr(name);
  return a && a->has_g() ? &a->g() : nullptr;
}

bool Truth(const HostTensor& t) {
  return IsFloatType(t.elem_type) ? t.DoubleAt(0) != 0 : t.IntAt(0) != 0;
}

// A subgraph ready to run on the reference kernels: each node's kernel, the values its own
// subgraphs capture and the reads of every name, found once (a Loop runs its body per
// iteration). `Run` binds the declared inputs in order (owned: a value the subgraph reads last
// may be consumed) and the names read from enclosing scopes; errors name the node at fault. A
// Concat that reads a value for the last time first, along an axis with nothing before it,
// appends to that value's storage (a Loop that accumulates its results so copies each element
// about twice, not once per iteration).
class Subgraph {
 public:
  // `opset`: the model's, which the nodes' kernels see.
  Subgraph(const onnx::GraphProto& g, int64_t opset)
      : g_(g), opset_(opset), nested_(g.node_size()) {
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& np = g.node(i);
      kernels_.push_back(FindOnnxKernel(np.domain(), np.op_type()));
      where_.push_back("subgraph node '" + np.name() + "' (" + np.op_type() + ")");
      for (const auto& name : np.input()) ++reads_[name];
      if (HasSubgraph(np)) nested_[i] = CapturedNames(np);
      for (const auto& name : nested_[i]) ++reads_[name];
    }
    for (const auto& o : g.output()) ++reads_[o.name()];
  }

  StatusOr<std::vector<HostTensor>> Run(
      std::vector<HostTensor> inputs,
      const std::map<std::string, const HostTensor*>& captured) const;

 private:
  const onnx::GraphProto& g_;
  int64_t opset_;
  std::vector<const OnnxKernel*> kernels_;
  std::vector<std::string> where_;
  std::vector<std::vector<std::string>> nested_;  // captured by each node's subgraphs
  std::map<std::string, int> reads_;              // node inputs, captures, then outputs
};

// If: the branch the condition picks, run on the captured values.
Status If(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  if (ctx.input(0)->NumElements() != 1)
    return InvalidArgument("If: the condition has " + std::to_string(ctx.input(0)->NumElements()) +
                           " elements, not one");
  const char* branch = Truth(*ctx.input(0)) ? "then_branch" : "else_branch";
  const onnx::GraphProto* g = GraphAttr(ctx, branch);
  if (!g) return InvalidArgument(std::string("If: no ") + branch);
  VERISUB_ASSIGN_OR_RETURN(auto captured, CapturedInputs(ctx));
  VERISUB_ASSIGN_OR_RETURN(std::vector<HostTensor> r, Subgraph(*g, ctx.opset()).Run({}, captured));
  if (r.size() != out->size())
    return InvalidArgument("If: " + std::string(branch) + " has " + std::to_string(r.size()) +
                           " outputs, the node " + std::to_string(out->size()));
  *out = std::move(r);
  return Status::Ok();
}

// Tensors of one shape stacked along a new axis `axis` (0 <= axis <= rank): each viewed with a
// dimension of 1 there, then concatenated along it.
StatusOr<HostTensor> Stack(std::vector<HostTensor> parts, int64_t axis, const std::string& what) {
  if (parts.empty()) return HostTensor::FromInts(kInt64, {0}, {});
  const std::vector<int64_t> d = parts[0].dims;
  for (const auto& p : parts)
    if (p.dims != d || p.elem_type != parts[0].elem_type)
      return InvalidArgument(what + ": iterations produced " + DimsToString(d) + " and " +
                             DimsToString(p.dims));
  const int64_t rank = static_cast<int64_t>(d.size());
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) return InvalidArgument(what + ": axis outside the output's rank");
  std::vector<const HostTensor*> views;
  for (auto& p : parts) {
    p.dims.insert(p.dims.begin() + axis, 1);
    views.push_back(&p);
  }
  return ConcatTensors(views, axis);
}

// Loop: the body run while the trip count and the condition allow, carrying its values; scan
// outputs stacked along a new first axis.
Status Loop(const KernelContext& ctx, std::vector<HostTensor>* out) {
  const onnx::GraphProto* body = GraphAttr(ctx, "body");
  if (!body) return InvalidArgument("Loop: no body");
  const int declared = ctx.node().input_size();
  const int carried = declared - 2;
  if (carried < 0) return InvalidArgument("Loop: needs the trip count and condition inputs");
  if (body->input_size() != carried + 2 || body->output_size() < carried + 1)
    return InvalidArgument("Loop: the body's inputs and outputs do not match the node's");
  const int scans = body->output_size() - 1 - carried;
  if (static_cast<int>(out->size()) != carried + scans)
    return InvalidArgument("Loop: the node has " + std::to_string(out->size()) +
                           " outputs, the body " + std::to_string(carried + scans));
  const HostTensor* m = ctx.input(0);
  const HostTensor* c = ctx.input(1);
  if ((m && m->NumElements() != 1) || (c && c->NumElements() != 1))
    return InvalidArgument("Loop: the trip count and condition must be scalars");
  const int64_t trips = m ? m->IntAt(0) : std::numeric_limits<int64_t>::max();
  bool cond = c ? Truth(*c) : true;
  VERISUB_ASSIGN_OR_RETURN(auto captured, CapturedInputs(ctx));
  const Subgraph step(*body, ctx.opset());
  std::vector<HostTensor> state;
  for (int i = 0; i < carried; ++i) {
    if (!ctx.input(2 + i)) return InvalidArgument("Loop: carried value " + std::to_string(i));
    state.push_back(*ctx.input(2 + i));
  }
  std::vector<std::vector<HostTensor>> scanned(scans);
  for (int64_t it = 0; it < trips && cond; ++it) {
    std::vector<HostTensor> in = {HostTensor::FromInts(kInt64, {}, {it}),
                                  HostTensor::FromInts(kBool, {}, {cond ? 1 : 0})};
    for (auto& s : state) in.push_back(std::move(s));
    VERISUB_ASSIGN_OR_RETURN(std::vector<HostTensor> r, step.Run(std::move(in), captured));
    if (r[0].NumElements() != 1) return InvalidArgument("Loop: the body's condition is not one");
    cond = Truth(r[0]);
    for (int i = 0; i < carried; ++i) state[i] = std::move(r[1 + i]);
    for (int k = 0; k < scans; ++k) scanned[k].push_back(std::move(r[1 + carried + k]));
  }
  for (int i = 0; i < carried; ++i) (*out)[i] = std::move(state[i]);
  for (int k = 0; k < scans; ++k) {
    VERISUB_ASSIGN_OR_RETURN((*out)[carried + k],
                             Stack(std::move(scanned[k]), 0, "Loop scan output"));
  }
  return Status::Ok();
}

// Scan (opset 9 on): the body run once per slice of the scan inputs along their axes (reversed
// where the direction says), carrying state; each scan output stacked along its axis.
Status Scan(const KernelContext& ctx, std::vector<HostTensor>* out) {
  if (ctx.opset() < 9) return Unimplemented("Scan before opset 9 (sequence_lens input)");
  const onnx::GraphProto* body = GraphAttr(ctx, "body");
  if (!body) return InvalidArgument("Scan: no body");
  const int declared = ctx.node().input_size();
  const int m = static_cast<int>(ctx.AttrInt("num_scan_inputs", 0));
  const int n = declared - m;
  if (m < 1 || n < 0 || body->input_size() != declared)
    return InvalidArgument("Scan: num_scan_inputs does not match the inputs and the body");
  const int k = body->output_size() - n;
  if (k < 0 || static_cast<int>(out->size()) != n + k)
    return InvalidArgument("Scan: the node's outputs do not match the body's");
  auto per = [&](const char* name, int count) -> StatusOr<std::vector<int64_t>> {
    std::vector<int64_t> v = ctx.AttrInts(name);
    if (v.empty()) v.assign(count, 0);
    if (static_cast<int>(v.size()) != count)
      return InvalidArgument(std::string("Scan: ") + name + " has the wrong length");
    return v;
  };
  VERISUB_ASSIGN_OR_RETURN(auto in_axes, per("scan_input_axes", m));
  VERISUB_ASSIGN_OR_RETURN(auto in_dirs, per("scan_input_directions", m));
  VERISUB_ASSIGN_OR_RETURN(auto out_axes, per("scan_output_axes", k));
  VERISUB_ASSIGN_OR_RETURN(auto out_dirs, per("scan_output_directions", k));
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, declared));
  int64_t steps = -1;
  for (int j = 0; j < m; ++j) {
    const HostTensor& x = *ctx.input(n + j);
    VERISUB_ASSIGN_OR_RETURN(in_axes[j], NormalizeAxis(in_axes[j], x.dims.size(), "Scan"));
    const int64_t len = x.dims[in_axes[j]];
    if (steps >= 0 && len != steps)
      return InvalidArgument("Scan: scan inputs of lengths " + std::to_string(steps) + " and " +
                             std::to_string(len));
    steps = len;
  }
  VERISUB_ASSIGN_OR_RETURN(auto captured, CapturedInputs(ctx));
  const Subgraph step(*body, ctx.opset());
  std::vector<HostTensor> state;
  for (int i = 0; i < n; ++i) state.push_back(*ctx.input(i));
  std::vector<std::vector<HostTensor>> scanned(k);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<HostTensor> slices;
    for (int j = 0; j < m; ++j) {
      const int64_t axis = in_axes[j];
      HostTensor slice = SliceAxis(*ctx.input(n + j), axis, in_dirs[j] ? steps - 1 - t : t, 1);
      slice.dims.erase(slice.dims.begin() + axis);
      slices.push_back(std::move(slice));
    }
    std::vector<HostTensor> in;
    for (auto& s : state) in.push_back(std::move(s));
    for (auto& s : slices) in.push_back(std::move(s));
    VERISUB_ASSIGN_OR_RETURN(std::vector<HostTensor> r, step.Run(std::move(in), captured));
    for (int i = 0; i < n; ++i) state[i] = std::move(r[i]);
    for (int j = 0; j < k; ++j) scanned[j].push_back(std::move(r[n + j]));
  }
  for (int i = 0; i < n; ++i) (*out)[i] = std::move(state[i]);
  for (int j = 0; j < k; ++j) {
    if (out_dirs[j]) std::reverse(scanned[j].begin(), scanned[j].end());
    VERISUB_ASSIGN_OR_RETURN((*out)[n + j],
                             Stack(std::move(scanned[j]), out_axes[j], "Scan output"));
  }
  return Status::Ok();
}

// Concat of `first` (consumed) with the node's other inputs along an axis with nothing before
// it: `first`'s storage grows by the others' elements (amortized: vector growth), or nullopt
// where the operands do not allow it (then the kernel runs and reports what is wrong).
std::optional<HostTensor> AppendConcat(const KernelContext& ctx, HostTensor* first) {
  const int64_t r = static_cast<int64_t>(first->dims.size());
  if (r == 0) return std::nullopt;
  int64_t axis = ctx.AttrInt("axis", ctx.opset() < 4 ? 1 : 0);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return std::nullopt;
  for (int64_t d = 0; d < axis; ++d)
    if (first->dims[d] != 1) return std::nullopt;
  std::vector<int64_t> dims = first->dims;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const HostTensor* t = ctx.input(i);
    if (!t || t == first || t->elem_type != first->elem_type || t->dims.size() != dims.size())
      return std::nullopt;
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t->dims[d] != dims[d]) return std::nullopt;
    dims[axis] += t->dims[axis];
  }
  if (CountElements(dims) < 0 || CountElements(dims) > kMaxKernelElements) return std::nullopt;
  HostTensor y = std::move(*first);
  y.dims = dims;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const HostTensor& t = *ctx.input(i);
    if (y.elem_type == kFloat)
      y.f32.insert(y.f32.end(), t.f32.begin(), t.f32.end());
    else if (IsFloatType(y.elem_type))
      y.f64.insert(y.f64.end(), t.f64.begin(), t.f64.end());
    else
      y.ints.insert(y.ints.end(), t.ints.begin(), t.ints.end());
  }
  return y;
}

StatusOr<std::vector<HostTensor>> Subgraph::Run(
    std::vector<HostTensor> inputs,
    const std::map<std::string, const HostTensor*>& captured) const {
  const onnx::GraphProto& g = g_;
  if (static_cast<int>(inputs.size()) != g.input_size())
    return InvalidArgument("subgraph '" + g.name() + "' takes " + std::to_string(g.input_size()) +
                           " inputs, given " + std::to_string(inputs.size()));
  std::map<std::string, const HostTensor*> scope = captured;
  std::deque<HostTensor> owned;                 // stable addresses
  std::map<std::string, HostTensor*> computed;  // owned values, by name
  auto own = [&](const std::string& name, HostTensor t) {
    owned.push_back(std::move(t));
    scope[name] = computed[name] = &owned.back();
  };
  for (int i = 0; i < g.input_size(); ++i) own(g.input(i).name(), std::move(inputs[i]));
  for (const auto& t : g.initializer()) {
    VERISUB_ASSIGN_OR_RETURN(HostTensor h, FromTensorProto(t));
    own(t.name(), std::move(h));
  }
  std::map<std::string, int> reads = reads_;  // left in this run, for consuming at the last
  for (int node = 0; node < g.node_size(); ++node) {
    const onnx::NodeProto& np = g.node(node);
    const std::string& where = where_[node];
    const OnnxKernel* kernel = kernels_[node];
    if (!kernel) return Unimplemented("no reference kernel for " + where);
    std::vector<const HostTensor*> in;
    auto lookup = [&](const std::string& name) -> StatusOr<const HostTensor*> {
      if (name.empty()) return static_cast<const HostTensor*>(nullptr);
      auto it = scope.find(name);
      if (it == scope.end()) return NotFound(where + " reads '" + name + "', defined nowhere");
      return it->second;
    };
    for (const auto& name : np.input()) {
      VERISUB_ASSIGN_OR_RETURN(const HostTensor* t, lookup(name));
      in.push_back(t);
    }
    for (const auto& name : nested_[node]) {
      VERISUB_ASSIGN_OR_RETURN(const HostTensor* t, lookup(name));
      in.push_back(t);
    }
    KernelContext ctx(np, opset_, in);
    std::vector<HostTensor> outs(np.output_size());
    std::optional<HostTensor> appended;
    if (np.op_type() == "Concat" && np.domain().empty() && np.input_size() > 1 &&
        np.output_size() == 1 && computed.count(np.input(0)) && reads[np.input(0)] == 1 &&
        computed[np.input(0)] == in[0])
      appended = AppendConcat(ctx, computed[np.input(0)]);
    if (appended) {
      outs[0] = std::move(*appended);
    } else {
      Status st = (*kernel)(ctx, &outs);
      if (!st.ok()) return st.WithContext(where);
    }
    for (const auto& name : np.input()) --reads[name];
    for (const auto& name : nested_[node]) --reads[name];
    for (int i = 0; i < np.output_size(); ++i)
      if (!np.output(i).empty()) own(np.output(i), std::move(outs[i]));
  }
  std::vector<HostTensor> result;
  for (const auto& o : g.output()) {
    auto it = scope.find(o.name());
    if (it == scope.end())
      return NotFound("subgraph '" + g.name() + "' output '" + o.name() + "' is never computed");
    // A value the subgraph owns and returns once is moved out, not copied (a Loop's carried
    // value grows with every iteration).
    auto mine = computed.find(o.name());
    if (mine != computed.end() && --reads[o.name()] == 0 && mine->second == it->second)
      result.push_back(std::move(*mine->second));
    else
      result.push_back(*it->second);
  }
  return result;
}

}  // namespace

bool HasSubgraph(const onnx::NodeProto& np) {
  for (const auto& a : np.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

std::vector<std::string> CapturedNames(const onnx::NodeProto& np) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& a : np.attribute()) {
    if (a.has_g()) FreeNames(a.g(), &seen, &out);
    for (const auto& g : a.graphs()) FreeNames(g, &seen, &out);
  }
  return out;
}

void RenameCaptured(onnx::NodeProto* np, const std::map<std::string, std::string>& renames) {
  if (renames.empty()) return;
  for (auto& a : *np->mutable_attribute()) {
    if (a.has_g()) RenameFree(a.mutable_g(), renames);
    for (auto& g : *a.mutable_graphs()) RenameFree(&g, renames);
  }
}

StatusOr<std::map<std::string, const HostTensor*>> CapturedInputs(const KernelContext& ctx) {
  const std::vector<std::string> names = CapturedNames(ctx.node());
  const int declared = ctx.node().input_size();
  std::map<std::string, const HostTensor*> out;
  for (size_t i = 0; i < names.size(); ++i) {
    const HostTensor* t = ctx.input(declared + static_cast<int>(i));
    if (!t)
      return InvalidArgument(ctx.op_type() + ": the value '" + names[i] +
                             "' its subgraph reads was not given");
    out[names[i]] = t;
  }
  return out;
}

void AddControlFlowKernels(KernelTable* t) {
  KernelTable& k = *t;
  k["If"] = If;
  k["Loop"] = Loop;
  k["Scan"] = Scan;
}

}  // namespace verisub::runtime
