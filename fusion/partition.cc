#include "fusion/partition.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "fusion/lower.h"
#include "runtime/memory_budget.h"

namespace verisub::fusion {

using runtime::Graph;
using runtime::kNoValue;

namespace {

// A node that only moves data: a view (a reshape) or a copy (a transpose, a slice, a
// concatenation), as the library runs them.
enum class Movement { kNone, kView, kCopy };
Movement MovesData(const runtime::Node& n) {
  using specs::OpKind;
  if (n.op) {
    if (n.op == OpKind::kReshape) return Movement::kView;
    return n.op == OpKind::kTranspose || n.op == OpKind::kSlice || n.op == OpKind::kConcat
               ? Movement::kCopy
               : Movement::kNone;
  }
  if (!n.domain.empty()) return Movement::kNone;
  static const char* kViews[] = {"Reshape",   "Flatten",  "Squeeze",
                                 "Unsqueeze", "Identity", "Dropout"};
  if (std::any_of(std::begin(kViews), std::end(kViews),
                  [&](const char* t) { return n.op_type == t; }))
    return Movement::kView;
  return n.op_type == "Transpose" || n.op_type == "Concat" ? Movement::kCopy : Movement::kNone;
}

bool MovesDataOnly(const Graph& g, const std::vector<int>& members) {
  return std::all_of(members.begin(), members.end(),
                     [&](int i) { return MovesData(g.node(i)) != Movement::kNone; });
}

// Whether every reindex of `g` reads its output's innermost axis at unit stride along its input's
// innermost axis (offsets from the other axes aside): the kernel's vector loads are contiguous.
bool InnermostDense(const SubGraph& g) {
  for (const SubNode& n : g.nodes) {
    if (n.kind != SubOpKind::kReindex || n.dims.empty()) continue;
    const int jo = static_cast<int>(n.dims.size()) - 1;
    if (n.dims[jo] == 1) continue;
    const int ki = static_cast<int>(n.map.size()) - 1;
    bool dense =
        ki >= 0 && n.map[ki].coef[jo] == 1 && n.map[ki].divisor == 1 && n.map[ki].modulus == 0;
    for (int k = 0; dense && k < ki; ++k) dense = n.map[k].coef[jo] == 0;
    if (!dense) return false;
  }
  return true;
}

// Whether a generated kernel for `members` can beat the library: it computes something, or it
// moves data in one pass where the library copies twice or more (a concatenation and the channel
// shuffle after it). One copy alone the library runs as a view or a strided copy, which a
// generated gather does not beat.
bool WorthGenerating(const Graph& g, const std::vector<int>& members) {
  int copies = 0;
  for (int i : members) {
    const Movement m = MovesData(g.node(i));
    if (m == Movement::kNone) return true;
    copies += m == Movement::kCopy;
  }
  return copies >= 2;
}

constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max();

// Per node of `p`, the nodes reading its value, in increasing order.
std::vector<std::vector<int>> Readers(const FusionProblem& p) {
  const int n = static_cast<int>(p.nodes.size());
  std::vector<std::vector<int>> readers(n);
  for (int i = 0; i < n; ++i)
    for (int v : p.nodes[i].reads)
      if (v < n) readers[v].push_back(i);
  return readers;
}

// Branch and bound over one connected component, its nodes from last to first: a node joins the
// one kernel reading it (when nothing else reads it and the reduction domains agree) or starts a
// kernel of its own. Every valid partition is reached so: a kernel's nodes but its last are read
// inside it only. Costs only grow along a branch (a value's reads are priced when its producer is
// decided, after all its readers), so the cost so far bounds the branch.
class ComponentSearch {
 public:
  ComponentSearch(const FusionProblem& p, const std::vector<std::vector<int>>& readers,
                  std::vector<int> nodes_descending, int64_t max_states)
      : p_(p),
        readers_(readers),
        order_(std::move(nodes_descending)),
        max_states_(max_states),
        kernel_of_(p.nodes.size(), -1) {}

  // Returns the kernel of each node of the component (in the order given), kernels numbered from 0.
  std::vector<int> Solve(bool search) {
    if (search)
      Visit(0);
    else
      Descend();
    std::vector<int> out(order_.size());
    for (size_t k = 0; k < order_.size(); ++k) out[k] = best_[k];
    exhausted_ |= !search;
    return out;
  }
  int64_t cost() const { return best_cost_; }
  int64_t states() const { return states_; }
  bool exact() const { return !exhausted_; }

 private:
  struct Kernel {
    int domain = 0;
    std::vector<int> outside_reads;  // values from outside the problem it reads
  };
  struct Undo {
    int kernel;
    bool opened;
    int domain;
    size_t reads;
    int64_t cost;
  };

  // The kernel node order_[k] may join, or -1; `reader_kernels` receives its readers' kernels.
  int Joinable(int i, std::vector<int>* reader_kernels) const {
    reader_kernels->clear();
    for (int r : readers_[i]) {
      const int k = kernel_of_[r];
      if (std::find(reader_kernels->begin(), reader_kernels->end(), k) == reader_kernels->end())
        reader_kernels->push_back(k);
    }
    const FusionProblem::Node& node = p_.nodes[i];
    if (node.escapes || reader_kernels->size() != 1) return -1;
    const int domain = kernels_[reader_kernels->front()].domain;
    return node.domain == 0 || domain == 0 || node.domain == domain ? reader_kernels->front() : -1;
  }

  // Puts node i into `kernel` (-1: a new one, read by `reader_kernels`).
  Undo Apply(int i, int kernel, const std::vector<int>& reader_kernels) {
    const FusionProblem::Node& node = p_.nodes[i];
    const int n = static_cast<int>(p_.nodes.size());
    Undo u{kernel, kernel < 0, 0, 0, cost_};
    if (u.opened) {
      u.kernel = static_cast<int>(kernels_.size());
      kernels_.push_back(Kernel());
      cost_ += kKernelCostBytes + p_.bytes[i] * (1 + static_cast<int64_t>(reader_kernels.size()));
    }
    Kernel& k = kernels_[u.kernel];
    u.domain = k.domain;
    u.reads = k.outside_reads.size();
    if (node.domain != 0) k.domain = node.domain;
    for (int v : node.reads)
      if (v >= n &&
          std::find(k.outside_reads.begin(), k.outside_reads.end(), v) == k.outside_reads.end()) {
        k.outside_reads.push_back(v);
        cost_ += p_.bytes[v];
      }
    kernel_of_[i] = u.kernel;
    return u;
  }

  void Revert(int i, const Undo& u) {
    kernel_of_[i] = -1;
    cost_ = u.cost;
    if (u.opened) {
      kernels_.pop_back();
      return;
    }
    kernels_[u.kernel].domain = u.domain;
    kernels_[u.kernel].outside_reads.resize(u.reads);
  }

  void Record() {
    best_cost_ = cost_;
    best_.resize(order_.size());
    for (size_t k = 0; k < order_.size(); ++k) best_[k] = kernel_of_[order_[k]];
  }

  void Visit(size_t k) {
    if (cost_ >= best_cost_) return;
    if (k == order_.size()) {
      Record();
      return;
    }
    if (++states_ > max_states_ && best_cost_ < kInfinite) {
      exhausted_ = true;
      return;
    }
    const int i = order_[k];
    std::vector<int> reader_kernels;
    const int join = Joinable(i, &reader_kernels);
    if (join >= 0) {
      const Undo u = Apply(i, join, reader_kernels);
      Visit(k + 1);
      Revert(i, u);
      if (exhausted_) return;
    }
    const Undo u = Apply(i, -1, reader_kernels);
    Visit(k + 1);
    Revert(i, u);
  }

  // Joins wherever a node can: the search's first branch, without recursion (large components).
  void Descend() {
    std::vector<int> reader_kernels;
    for (int i : order_) {
      ++states_;
      Apply(i, Joinable(i, &reader_kernels), reader_kernels);
    }
    Record();
  }

  const FusionProblem& p_;
  const std::vector<std::vector<int>>& readers_;
  const std::vector<int> order_;
  const int64_t max_states_;
  std::vector<int> kernel_of_;
  std::vector<Kernel> kernels_;
  int64_t cost_ = 0;
  int64_t best_cost_ = kInfinite;
  std::vector<int> best_;
  int64_t states_ = 0;
  bool exhausted_ = false;
};

// Components larger than this are partitioned by the first branch alone (recursion depth).
constexpr size_t kMaxSearchedComponent = 2000;
}  // namespace

std::optional<int64_t> PartitionCost(const FusionProblem& p, const std::vector<int>& kernel_of) {
  const int n = static_cast<int>(p.nodes.size());
  if (static_cast<int>(kernel_of.size()) != n) return std::nullopt;
  const std::vector<std::vector<int>> readers = Readers(p);
  std::map<int, std::vector<int>> members;
  for (int i = 0; i < n; ++i) members[kernel_of[i]].push_back(i);
  int64_t cost = 0;
  for (const auto& [kernel, nodes] : members) {
    int written = 0, domain = 0;
    std::set<int> reads;
    for (int i : nodes) {
      const FusionProblem::Node& node = p.nodes[i];
      bool leaves = node.escapes || readers[i].empty();
      for (int r : readers[i]) leaves |= kernel_of[r] != kernel;
      if (leaves) {
        ++written;
        cost += p.bytes[i];
      }
      if (node.domain != 0) {
        if (domain != 0 && domain != node.domain) return std::nullopt;
        domain = node.domain;
      }
      for (int v : node.reads)
        if (v >= n || kernel_of[v] != kernel) reads.insert(v);
    }
    if (written != 1) return std::nullopt;
    cost += kKernelCostBytes;
    for (int v : reads) cost += p.bytes[v];
  }
  return cost;
}

FusionPartition SolvePartition(const FusionProblem& p, int64_t max_states) {
  const int n = static_cast<int>(p.nodes.size());
  const std::vector<std::vector<int>> readers = Readers(p);
  // Connected components over the values computed inside the problem.
  std::vector<int> parent(n);
  for (int i = 0; i < n; ++i) parent[i] = i;
  auto root = [&](int i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (int i = 0; i < n; ++i)
    for (int v : p.nodes[i].reads)
      if (v < n) parent[root(v)] = root(i);
  std::map<int, std::vector<int>> components;  // by root, nodes descending
  for (int i = n - 1; i >= 0; --i) components[root(i)].push_back(i);
  FusionPartition out;
  out.kernel_of.assign(n, -1);
  std::vector<std::pair<int, int>> local(n);  // per node: its component's root, its kernel there
  for (auto& [r, nodes] : components) {
    ComponentSearch search(p, readers, nodes, max_states);
    const std::vector<int> kernels = search.Solve(nodes.size() <= kMaxSearchedComponent);
    out.cost += search.cost();
    out.states += search.states();
    out.exact &= search.exact();
    for (size_t k = 0; k < nodes.size(); ++k) local[nodes[k]] = {r, kernels[k]};
  }
  // Kernels numbered in order of their first node.
  std::map<std::pair<int, int>, int> number;
  for (int i = 0; i < n; ++i) {
    auto [it, added] = number.emplace(local[i], static_cast<int>(number.size()));
    out.kernel_of[i] = it->second;
  }
  out.kernels = static_cast<int>(number.size());
  return out;
}

std::vector<runtime::KernelCluster> PlanClusters(const Graph& g, const std::vector<char>& taken) {
  // The problem: lowerable nodes not taken, each writing one float value.
  std::vector<int> index(g.num_nodes(), -1), nodes;
  FusionProblem p;
  std::vector<std::pair<std::vector<int64_t>, std::vector<int>>> domains;
  for (int i = 0; i < g.num_nodes(); ++i) {
    if (i < static_cast<int>(taken.size()) && taken[i]) continue;
    if (g.node(i).outputs.size() != 1) continue;
    const std::optional<LoweringInfo> info = Lowerable(g, i);
    if (!info) continue;
    FusionProblem::Node node;
    if (info->reductions > 0) {
      auto key = std::make_pair(info->reduce_dims, info->reduce_axes);
      auto it = std::find(domains.begin(), domains.end(), key);
      node.domain = static_cast<int>(it - domains.begin()) + 1;
      if (it == domains.end()) domains.push_back(std::move(key));
    }
    index[i] = static_cast<int>(nodes.size());
    nodes.push_back(i);
    p.nodes.push_back(std::move(node));
  }
  const int n = static_cast<int>(nodes.size());
  const std::vector<int> producer = g.Producers();
  std::vector<int> value_id(g.num_values(), -1);  // outside values, numbered from n
  auto bytes = [&](int v) {
    return std::max<int64_t>(runtime::TensorBytes(g.value(v).dims, 4), 0);
  };
  for (int k = 0; k < n; ++k) p.bytes.push_back(bytes(g.node(nodes[k]).outputs[0]));
  for (int k = 0; k < n; ++k)
    for (int v : g.node(nodes[k]).inputs) {
      if (v == kNoValue) continue;
      int id = producer[v] >= 0 ? index[producer[v]] : -1;
      if (id < 0) {
        if (value_id[v] < 0) {
          value_id[v] = static_cast<int>(p.bytes.size());
          p.bytes.push_back(bytes(v));
        }
        id = value_id[v];
      }
      std::vector<int>& reads = p.nodes[k].reads;
      if (std::find(reads.begin(), reads.end(), id) == reads.end()) reads.push_back(id);
    }
  // A value escapes when a node outside the problem reads it, or the graph returns it.
  for (int i = 0; i < g.num_nodes(); ++i) {
    if (index[i] >= 0) continue;
    for (int v : g.node(i).inputs)
      if (v != kNoValue && producer[v] >= 0 && index[producer[v]] >= 0)
        p.nodes[index[producer[v]]].escapes = true;
  }
  for (int v : g.outputs())
    if (producer[v] >= 0 && index[producer[v]] >= 0) p.nodes[index[producer[v]]].escapes = true;

  const FusionPartition part = SolvePartition(p);
  std::vector<std::vector<int>> members(part.kernels);
  for (int k = 0; k < n; ++k) members[part.kernel_of[k]].push_back(nodes[k]);
  std::vector<runtime::KernelCluster> out;
  for (const std::vector<int>& m : members) {
    if (!WorthGenerating(g, m)) continue;
    runtime::KernelCluster c;
    c.nodes = m;
    c.output = g.node(m.back()).outputs[0];
    auto lowered = LowerCluster(g, c.nodes, c.output);
    if (!lowered.ok()) continue;  // each node lowers alone; together they always do
    // Data movement that makes another axis innermost (attention's keys transposed to
    // [heads, 64, tokens]) reads at a stride per element; the library's reorder transposes in
    // blocks (ViT-B/16: 123 us generated against 60 us for the library's slice and transpose).
    if (MovesDataOnly(g, m) && !InnermostDense(lowered->graph)) continue;
    c.inputs = lowered->inputs;
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(),
            [](const runtime::KernelCluster& a, const runtime::KernelCluster& b) {
              return a.nodes.back() < b.nodes.back();
            });
  return out;
}

}  // namespace verisub::fusion
