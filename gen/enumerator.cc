// The enumeration: a per-thread worker runs the depth-first search under one first operator.
#include "gen/enumerator.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <thread>
#include <unordered_map>

#include "gen/graph_code.h"
#include "gen/type_cache.h"
#include "specs/evaluate.h"
#include "specs/semantics.h"

namespace verisub::gen {
namespace {

constexpr uint64_t kReportBatch = 4096;

struct TaskOutput {
  std::vector<uint8_t> arena;
  std::vector<GraphEntry> graphs;
};

class Worker {
 public:
  Worker(const SearchSpace& s, const GraphCodec& codec, ProgressCounters* progress,
         std::atomic<bool>* stop, std::atomic<uint64_t>* total)
      : s_(s), codec_(codec), progress_(progress), stop_(stop), total_(total) {
    const GenConfig& c = *s.config;
    num_initial_ = static_cast<int>(s.initial.size());
    slots_.resize(num_initial_ + 2 * c.max_ops);
    for (int i = 0; i < num_initial_; ++i) {
      Slot& sl = slots_[i];
      const InitialTensor& t = s.initial[i];
      sl.type = types_.Intern(t.type);
      sl.key = t.key;
      sl.value = &s.modint[i];
      sl.hash = HashTensor(s.modint[i], types_.hash(sl.type));
      sl.producer = -1;
      sl.is_input = t.is_input;
      sl.group = t.group;
      sl.member = t.member;
    }
    out_.resize(c.max_ops);
    codes_.assign(c.max_ops + 1, 0);
    memo_.resize(size_t{1} << 20);
    member_uses_.resize(s.num_groups);
    members_used_.assign(s.num_groups, 0);
    for (const InitialTensor& t : s.initial)
      if (static_cast<int>(member_uses_[t.group].size()) <= t.member)
        member_uses_[t.group].resize(t.member + 1, 0);
    for (const OpInstance& inst : c.ops) {
      const specs::OpSpec& op = specs::GetOp(inst.kind);
      arity_.push_back(op.num_inputs);
      outputs_.push_back(op.num_outputs);
      commutative_.push_back(op.commutative && c.break_commutative);
      swappable_.push_back(op.commutative);
      idempotent_.push_back(op.idempotent);
      enlarge_.push_back(inst.kind == specs::OpKind::kEnlarge);
    }
  }

  // The first operators of all graphs, in enumeration order.
  std::vector<GraphOp> RootChoices() {
    roots_ = &root_list_;
    Expand();
    roots_ = nullptr;
    return std::move(root_list_);
  }

  void RunTask(const GraphOp& first, uint32_t task, TaskOutput* out) {
    task_ = task;
    out_task_ = out;
    Try(first.inst, first.in[0], first.in[1], first.in[2]);
    Flush();
  }

  EnumerationStats stats;

 private:
  struct Slot {
    int type = 0;
    uint64_t key = 0;  // structural: distinct for distinct computations
    uint64_t hash = 0;
    const specs::Tensor<uint32_t>* value = nullptr;
    int producer = -1;  // operator index, -1 for initial tensors
    int consumers = 0;
    bool is_input = false;
    int group = 0, member = 0;
  };
  struct OpRec {
    GraphOp op;
    uint64_t key;
  };
  struct MemoEntry {
    uint64_t key = 0;
    uint64_t hash[specs::kMaxOpOutputs] = {0, 0};
  };

  // Tries every operator application on the current graph.
  void Expand() {
    // Tensors grouped by type, in id order.
    std::vector<int> type_ids;
    std::vector<std::vector<uint8_t>> by_type;
    auto add = [&](int id) {
      int t = slots_[id].type;
      size_t i = std::find(type_ids.begin(), type_ids.end(), t) - type_ids.begin();
      if (i == type_ids.size()) {
        type_ids.push_back(t);
        by_type.emplace_back();
      }
      by_type[i].push_back(static_cast<uint8_t>(id));
    };
    for (int i = 0; i < num_initial_; ++i) add(i);
    for (size_t k = 0; k < ops_.size(); ++k)
      for (int j = 0; j < outputs_[ops_[k].op.inst]; ++j)
        add(num_initial_ + 2 * static_cast<int>(k) + j);
    const auto& insts = s_.config->ops;
    // Which instances accept each pair of types (bit i: instance i): one cache lookup per pair.
    const size_t n = type_ids.size();
    const bool masks = insts.size() <= 64;
    std::vector<uint64_t> accepts;
    if (masks) {
      accepts.resize(n * (n + 1));
      for (size_t a = 0; a < n; ++a)
        for (size_t b = 0; b <= n; ++b)
          accepts[a * (n + 1) + b] =
              types_.Accepting(insts, type_ids[a], b == 0 ? -1 : type_ids[b - 1]);
    }
    auto ok = [&](size_t inst, size_t a, int b) {  // b: type index, -1 for unary
      bool accepted = masks ? (accepts[a * (n + 1) + (b + 1)] >> inst) & 1
                            : types_
                                  .Infer(insts[inst], static_cast<int>(inst), type_ids[a],
                                         b < 0 ? -1 : type_ids[b], &stats.shape_rejected)
                                  .ok;
      if (masks && !accepted) ++stats.shape_rejected;
      return accepted;
    };
    for (size_t inst = 0; inst < insts.size(); ++inst) {
      if (stop_->load(std::memory_order_relaxed)) return;
      for (size_t a = 0; a < n; ++a) {
        if (arity_[inst] == 3) {
          ExpandTernary(inst, a, type_ids, by_type);
          continue;
        }
        if (arity_[inst] == 1) {
          if (!ok(inst, a, -1)) continue;
          for (uint8_t t : by_type[a]) {
            if (enlarge_[inst] && !slots_[t].is_input) continue;
            Try(static_cast<uint16_t>(inst), t, kNoTensor, kNoTensor);
          }
          continue;
        }
        for (size_t b = 0; b < n; ++b) {
          if (!ok(inst, a, static_cast<int>(b))) continue;
          for (uint8_t t0 : by_type[a])
            for (uint8_t t1 : by_type[b]) Try(static_cast<uint16_t>(inst), t0, t1, kNoTensor);
        }
      }
    }
  }

  // An operator of three inputs with input 0 of type index a: the loop over (group of input 1,
  // group of input 2, input 0, input 1, input 2), after the binary operators' (group of input 1,
  // input 0, input 1). Shape rules are asked per triple of types (TypeCache caches them).
  void ExpandTernary(size_t inst, size_t a, const std::vector<int>& type_ids,
                     const std::vector<std::vector<uint8_t>>& by_type) {
    const OpInstance& op = s_.config->ops[inst];
    const size_t n = type_ids.size();
    for (size_t b = 0; b < n; ++b)
      for (size_t c = 0; c < n; ++c) {
        if (!types_
                 .Infer(op, static_cast<int>(inst), type_ids[a], type_ids[b], &stats.shape_rejected,
                        type_ids[c])
                 .ok)
          continue;
        for (uint8_t t0 : by_type[a])
          for (uint8_t t1 : by_type[b])
            for (uint8_t t2 : by_type[c]) Try(static_cast<uint16_t>(inst), t0, t1, t2);
      }
  }

  void Try(uint16_t inst, uint8_t a, uint8_t b, uint8_t c) {
    const bool binary = b != kNoTensor, ternary = c != kNoTensor;
    if ((a < num_initial_ && !(s_.initial[a].allowed_args[inst] & 1)) ||
        (binary && b < num_initial_ && !(s_.initial[b].allowed_args[inst] & 2)) ||
        (ternary && c < num_initial_ && !(s_.initial[c].allowed_args[inst] & 4))) {
      ++stats.consumer_rejected;
      return;
    }
    uint64_t ka = slots_[a].key, kb = binary ? slots_[b].key : 0;
    if (binary && commutative_[inst] && ka > kb) {
      ++stats.symmetry_rejected;
      return;
    }
    if (binary && idempotent_[inst] && a == b) {  // op(x, x) is x
      ++stats.duplicate_rejected;
      return;
    }
    for (const OpRec& r : ops_) {
      if (r.op.inst != inst || r.op.in[2] != c) continue;
      if ((r.op.in[0] == a && r.op.in[1] == b) ||
          (swappable_[inst] && r.op.in[0] == b && r.op.in[1] == a)) {
        ++stats.duplicate_rejected;
        return;
      }
    }
    if (binary && swappable_[inst] && ka > kb) std::swap(ka, kb);
    uint64_t key = HashCombine(HashCombine(s_.op_keys[inst], ka), kb);
    if (ternary) key = HashCombine(key, slots_[c].key);  // as OpTermKeys (graph_terms.cc)
    // Canonical order: every operator after this one's last dependency must sort before it.
    int last_dep = std::max(
        {slots_[a].producer, binary ? slots_[b].producer : -1, ternary ? slots_[c].producer : -1});
    for (size_t j = last_dep + 1; j < ops_.size(); ++j)
      if (ops_[j].key > key) {
        ++stats.order_rejected;
        return;
      }
    // Interchangeable inputs: a graph is kept only if the members of each group it uses are the
    // group's first ones, in any order (Record); one that lacks more members than its remaining
    // operators could bring is not extended.
    uint8_t used[kMaxGraphOpInputs] = {};
    int num_used = 0;
    for (uint8_t t : {a, b, c})
      if (t != kNoTensor && t < num_initial_ && member_uses_[slots_[t].group].size() > 1) {
        UseMember(t, 1);
        used[num_used++] = t;
      }
    const int remaining = s_.config->max_ops - static_cast<int>(ops_.size()) - 1;
    if (missing_members_ > 2 * remaining) {
      ++stats.symmetry_rejected;
    } else if (roots_) {
      roots_->push_back(GraphOp{inst, {a, b, c}});
    } else {
      Apply(inst, a, b, c, key);
    }
    for (int u = num_used - 1; u >= 0; --u) UseMember(used[u], -1);
  }

  // Counts one more (delta 1) or one fewer (-1) use of an interchangeable input's member.
  void UseMember(uint8_t t, int delta) {
    const int g = slots_[t].group, m = slots_[t].member;
    int& uses = member_uses_[g][m];
    uses += delta;
    if (uses != (delta > 0 ? 1 : 0)) return;
    auto missing = [](uint64_t mask) {
      return mask ? 64 - __builtin_clzll(mask) - __builtin_popcountll(mask) : 0;
    };
    missing_members_ -= missing(members_used_[g]);
    members_used_[g] ^= uint64_t{1} << m;
    missing_members_ += missing(members_used_[g]);
  }

  void Apply(uint16_t inst_id, uint8_t a, uint8_t b, uint8_t c, uint64_t key) {
    const OpInstance& inst = s_.config->ops[inst_id];
    const bool binary = b != kNoTensor, ternary = c != kNoTensor;
    const int k = static_cast<int>(ops_.size());
    const int num_out = outputs_[inst_id];
    const bool leaf = k + 1 == s_.config->max_ops;
    auto& outs = out_[k];
    uint64_t hashes[specs::kMaxOpOutputs] = {0, 0};
    int types[specs::kMaxOpOutputs] = {-1, -1};
    // A graph at full size has no children: only its output hashes matter, and the same
    // operator on the same values recurs under many prefixes, so they are memoized.
    MemoEntry* memo = nullptr;
    uint64_t mkey = 0;
    bool hit = false;
    if (leaf) {
      mkey = HashCombine(HashCombine(inst_id + 1ull, slots_[a].hash), binary ? slots_[b].hash : 0);
      if (ternary) mkey = HashCombine(mkey, slots_[c].hash);
      memo = &memo_[mkey & (memo_.size() - 1)];
      hit = memo->key == mkey;
    }
    if (hit) {
      ++stats.memo_hits;
      hashes[0] = memo->hash[0];
      hashes[1] = memo->hash[1];
    } else {
      const auto& r = types_.Infer(inst, inst_id, slots_[a].type, binary ? slots_[b].type : -1,
                                   &stats.shape_rejected, ternary ? slots_[c].type : -1);
      const specs::Tensor<uint32_t>* in[kMaxGraphOpInputs] = {
          slots_[a].value, binary ? slots_[b].value : nullptr, ternary ? slots_[c].value : nullptr};
      for (int j = 0; j < num_out; ++j) outs[j].type = types_.type(r.out[j]);
      specs::RunKernel(mi_, inst.kind, inst.params, in, outs.data());
      for (int j = 0; j < num_out; ++j) {
        types[j] = r.out[j];
        hashes[j] = HashTensor(outs[j], types_.hash(r.out[j]));
      }
      if (memo) *memo = {mkey, {hashes[0], hashes[1]}};
    }

    // Consumed op outputs leave the output set; new outputs join it.
    uint64_t saved_sum = out_sum_;
    int saved_count = out_count_;
    for (uint8_t t : {a, b, c}) {
      if (t == kNoTensor) continue;
      if (slots_[t].producer >= 0 && slots_[t].consumers == 0) {
        out_sum_ -= Mix64(slots_[t].hash);
        --out_count_;
      }
      ++slots_[t].consumers;
    }
    for (int j = 0; j < num_out; ++j) {
      Slot& sl = slots_[num_initial_ + 2 * k + j];
      sl.type = types[j];
      sl.key = HashCombine(key, static_cast<uint64_t>(j));
      sl.hash = hashes[j];
      sl.value = &outs[j];
      sl.producer = k;
      sl.consumers = 0;
      out_sum_ += Mix64(sl.hash);
      ++out_count_;
    }
    ops_.push_back({GraphOp{inst_id, {a, b, c}}, key});
    if (codec_.packed()) codes_[k + 1] = codes_[k] | codec_.Field(k, ops_.back().op);
    if (missing_members_ == 0) {
      Record();
    } else {
      ++stats.interchangeable_skipped;
    }
    if (static_cast<int>(ops_.size()) < s_.config->max_ops &&
        !stop_->load(std::memory_order_relaxed))
      Expand();
    ops_.pop_back();
    for (uint8_t t : {a, b, c})
      if (t != kNoTensor) --slots_[t].consumers;
    out_sum_ = saved_sum;
    out_count_ = saved_count;
  }

  void Record() {
    GraphEntry e;
    e.fingerprint = FinishFingerprint(out_sum_, static_cast<uint64_t>(out_count_));
    if (codec_.packed()) {
      e.code = codes_[ops_.size()];
    } else {
      auto& arena = out_task_->arena;
      e.code = (uint64_t{task_} << 32) | arena.size();
      arena.push_back(static_cast<uint8_t>(ops_.size()));
      for (const OpRec& r : ops_) AppendOp(r.op, &arena);
    }
    out_task_->graphs.push_back(e);
    ++stats.graphs;
    if (++unreported_ == kReportBatch) Flush();
  }

  void Flush() {
    if (progress_) progress_->graphs.fetch_add(unreported_, std::memory_order_relaxed);
    uint64_t total = total_->fetch_add(unreported_, std::memory_order_relaxed) + unreported_;
    unreported_ = 0;
    uint64_t limit = s_.config->max_graphs;
    if (limit && total >= limit) stop_->store(true, std::memory_order_relaxed);
  }

  const SearchSpace& s_;
  const GraphCodec& codec_;
  ProgressCounters* progress_;
  std::atomic<bool>* stop_;
  std::atomic<uint64_t>* total_;
  specs::ModIntSemantics mi_;
  TypeCache types_;
  int num_initial_ = 0;
  std::vector<Slot> slots_;
  std::vector<std::array<specs::Tensor<uint32_t>, specs::kMaxOpOutputs>> out_;
  // Interchangeable inputs: per group, the operators using each member, and the members used.
  std::vector<std::vector<int>> member_uses_;
  std::vector<uint64_t> members_used_;
  int missing_members_ = 0;  // over all groups: unused members below a used one
  std::vector<int> arity_, outputs_;
  std::vector<bool> commutative_, swappable_, idempotent_, enlarge_;
  std::vector<OpRec> ops_;
  std::vector<uint64_t> codes_;  // packed code of the first k operators
  std::vector<MemoEntry> memo_;  // direct-mapped: a clash overwrites
  uint64_t out_sum_ = 0;
  int out_count_ = 0;
  uint64_t unreported_ = 0;
  uint32_t task_ = 0;
  TaskOutput* out_task_ = nullptr;
  std::vector<GraphOp>* roots_ = nullptr;
  std::vector<GraphOp> root_list_;
};

void AddStats(const EnumerationStats& from, EnumerationStats* to) {
  to->graphs += from.graphs;
  to->shape_rejected += from.shape_rejected;
  to->duplicate_rejected += from.duplicate_rejected;
  to->order_rejected += from.order_rejected;
  to->symmetry_rejected += from.symmetry_rejected;
  to->memo_hits += from.memo_hits;
  to->consumer_rejected += from.consumer_rejected;
  to->interchangeable_skipped += from.interchangeable_skipped;
}

}  // namespace

uint64_t HashTensor(const specs::Tensor<uint32_t>& t, uint64_t type_hash) {
  return XXH3_64bits_withSeed(t.data.data(), t.data.size() * sizeof(uint32_t), type_hash);
}

Enumeration Enumerate(const SearchSpace& s, int threads, ProgressCounters* progress,
                      bool pack_codes) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> total{0};
  Enumeration result;
  const GenConfig& c = *s.config;
  int max_inputs = 1;
  for (const OpInstance& inst : c.ops)
    max_inputs = std::max(max_inputs, specs::GetOp(inst.kind).num_inputs);
  result.codec = GraphCodec(static_cast<int>(c.ops.size()),
                            static_cast<int>(s.initial.size()) + c.max_ops * specs::kMaxOpOutputs,
                            c.max_ops, pack_codes, max_inputs);
  const GraphCodec& codec = result.codec;

  // Task 0 holds the identity graphs (one per group: the first member stands for the others).
  std::vector<TaskOutput> tasks(1);
  if (c.identity_graphs) {
    for (size_t i = 0; i < s.initial.size(); ++i) {
      const InitialTensor& t = s.initial[i];
      if (!t.is_input || t.member != 0) continue;
      uint64_t h = HashTensor(s.modint[i], HashType(t.type));
      GraphEntry e{FinishFingerprint(Mix64(h), 1), codec.IdentityCode(static_cast<int>(i))};
      if (!codec.packed()) {
        e.code = tasks[0].arena.size();
        Graph g;
        g.identity_of = static_cast<int>(i);
        AppendGraph(g, &tasks[0].arena);
      }
      tasks[0].graphs.push_back(e);
      ++result.stats.identity_graphs;
    }
    result.stats.graphs += result.stats.identity_graphs;
  }

  Worker root(s, codec, progress, &stop, &total);
  std::vector<GraphOp> roots = root.RootChoices();
  AddStats(root.stats, &result.stats);
  tasks.resize(1 + roots.size());
  result.stats.tasks = roots.size();

  tbb::enumerable_thread_specific<Worker> workers(
      [&] { return Worker(s, codec, progress, &stop, &total); });
  tbb::parallel_for(tbb::blocked_range<size_t>(0, roots.size(), 1),
                    [&](const tbb::blocked_range<size_t>& range) {
                      Worker& w = workers.local();
                      for (size_t i = range.begin(); i != range.end(); ++i)
                        w.RunTask(roots[i], static_cast<uint32_t>(i + 1), &tasks[i + 1]);
                    });
  for (const Worker& w : workers) AddStats(w.stats, &result.stats);
  workers.clear();
  result.stats.stopped_early = stop.load();

  // Counting sort on the partition, each task's entries freed as soon as they are placed, then
  // each partition sorted on its own. (fingerprint, code) is unique, so the order is too.
  const size_t num_partitions = size_t{1} << kPartitionBits;
  std::vector<size_t> next(num_partitions + 1, 0);
  for (const TaskOutput& t : tasks)
    for (const GraphEntry& e : t.graphs) ++next[PartitionOf(e.fingerprint) + 1];
  for (size_t p = 0; p < num_partitions; ++p) next[p + 1] += next[p];
  result.partitions = next;
  result.graphs = GraphEntries(next.back());
  for (TaskOutput& t : tasks) {
    for (const GraphEntry& e : t.graphs) result.graphs[next[PartitionOf(e.fingerprint)]++] = e;
    std::vector<GraphEntry>().swap(t.graphs);
    t.arena.shrink_to_fit();
    result.arenas.push_back(std::move(t.arena));
  }
  tbb::parallel_for(size_t{0}, num_partitions, [&](size_t p) {
    std::sort(result.graphs.begin() + result.partitions[p],
              result.graphs.begin() + result.partitions[p + 1]);
  });
  return result;
}

}  // namespace verisub::gen
