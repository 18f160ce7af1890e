// Symbolic split trees (see split_trees.h).
#include "verify/split_trees.h"

#include <algorithm>

#include "specs/ops/concat.h"
#include "specs/ops/elementwise.h"
#include "specs/ops/reduce_mean.h"
#include "specs/ops/transpose.h"
#include "specs/registry.h"

namespace verisub::verify {
namespace {

using specs::OpKind;

std::string TreeKey(ruledb::ValueRef v, char side) {
  return v.is_input()
             ? "in" + std::to_string(v.index)
             : std::string(1, side) + std::to_string(v.node) + "." + std::to_string(v.index);
}

}  // namespace

void SplitTrees::StartRound() {
  trees_.clear();
  changed_ = false;
}

bool SplitTrees::Build(const ruledb::PatternGraph& g, const ruledb::PatternRanks& ranks, char side,
                       std::string* error) {
  unresolved_ = false;
  error_.clear();
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (int o = 0; o < specs::GetOp(g.nodes[k].op).num_outputs; ++o)
      if (!TreesOf(g, ranks, side, {static_cast<int>(k), o})) {
        *error = error_;
        return false;
      }
  if (unresolved_ && !changed_) {
    *error = "a split of no known concat";
    return false;
  }
  return true;
}

bool SplitTrees::SameEverywhere(ruledb::ValueRef s, ruledb::ValueRef d, std::string* error) {
  const std::vector<TreeRef>&ts = trees_.at(TreeKey(s, 's')), &td = trees_.at(TreeKey(d, 'd'));
  for (size_t a = 0; a < ts.size() && a < td.size(); ++a)
    if (TreesSame(ts[a], td[a]) != Same::kYes) {
      *error = "output split trees differ along axis " + std::to_string(a);
      return false;
    }
  return true;
}

SplitTrees::Same SplitTrees::TreesSame(const TreeRef& a, const TreeRef& b) {
  if (!a && !b) return Same::kYes;
  if (!a || !b) {
    const Tree::Kind k = (a ? a : b)->kind;
    return k == Tree::kNode || k == Tree::kConflict ? Same::kNo : Same::kMaybe;
  }
  if (a->kind == Tree::kConflict && b->kind == Tree::kConflict) return Same::kYes;
  if (a->kind == Tree::kUnknown || b->kind == Tree::kUnknown || a->kind == Tree::kMerge ||
      b->kind == Tree::kMerge)
    return Same::kMaybe;
  if (a->kind != b->kind) return Same::kNo;
  const Same l = TreesSame(a->left, b->left), r = TreesSame(a->right, b->right);
  if (l == Same::kNo || r == Same::kNo) return Same::kNo;
  if (dims_->Find(a->size) == dims_->Find(b->size) && l == Same::kYes && r == Same::kYes)
    return Same::kYes;
  return Same::kMaybe;
}

TreeRef SplitTrees::Merge(const TreeRef& a, const TreeRef& b) {
  if (!a) return b;
  if (!b) return a;
  for (const TreeRef& t : {a, b})
    if (t->kind == Tree::kConflict || t->kind == Tree::kUnknown) return t;
  switch (TreesSame(a, b)) {
    case Same::kYes:
      return a;
    case Same::kNo:
      return MakeTree(Tree::kConflict);
    case Same::kMaybe:
      break;
  }
  return MakeTree(Tree::kMerge, "", a, b);
}

bool SplitTrees::Unify(const TreeRef& a, const TreeRef& b) {
  if (a && a->kind == Tree::kMerge) return Unify(a->left, a->right) && Unify(a->left, b);
  if (b && b->kind == Tree::kMerge) return Unify(b, a);
  if (!a && !b) return true;
  if (!a || !b || a->kind != Tree::kNode || b->kind != Tree::kNode) return false;
  changed_ |= dims_->Union(a->size, b->size);
  return Unify(a->left, b->left) && Unify(a->right, b->right);
}

// As the shape rules build them (specs/ops/); kUnknown for operators not modelled.
const std::vector<TreeRef>* SplitTrees::TreesOf(const ruledb::PatternGraph& g,
                                                const ruledb::PatternRanks& ranks, char side,
                                                ruledb::ValueRef v) {
  const std::string key = TreeKey(v, side);
  if (auto it = trees_.find(key); it != trees_.end()) return &it->second;
  const int r = std::max(ranks.Rank(v), 0);
  std::vector<TreeRef> t(r, nullptr);
  if (v.is_input()) return &trees_.emplace(key, std::move(t)).first->second;
  const ruledb::PatternNode& n = g.nodes[v.node];
  std::vector<std::vector<TreeRef>> in;
  for (const ruledb::ValueRef& x : n.inputs) {
    const std::vector<TreeRef>* tx = TreesOf(g, ranks, side, x);
    if (!tx) return nullptr;
    in.push_back(*tx);
  }
  auto at = [&](int input, int d) -> TreeRef {
    return d >= 0 && d < static_cast<int>(in[input].size()) ? in[input][d]
                                                            : MakeTree(Tree::kUnknown);
  };
  const TreeRef unknown = MakeTree(Tree::kUnknown);
  const int64_t p0 = n.params[0];
  switch (n.op) {
    case OpKind::kEwAdd:
    case OpKind::kEwSub:
    case OpKind::kEwMul:
      for (int d = 0; d < r; ++d) t[d] = Merge(at(0, d), at(1, d));
      break;
    case OpKind::kSmul:
      for (int d = 0; d < r; ++d) t[d] = at(0, d);
      break;
    case OpKind::kBiasAdd:
    case OpKind::kChannelScale:
      for (int d = 0; d < r; ++d) t[d] = d == p0 ? Merge(at(0, d), at(1, 0)) : at(0, d);
      break;
    case OpKind::kTranspose: {
      std::vector<int> perm = specs::DecodePerm(n.params[specs::ops::kTransposePerm]);
      for (int d = 0; d < r; ++d)
        t[d] = d < static_cast<int>(perm.size()) ? at(0, perm[d]) : unknown;
      break;
    }
    case OpKind::kMatmul: {
      const int ra = ranks.Rank(n.inputs[0]), rb = ranks.Rank(n.inputs[1]);
      if (r < 2) break;
      t[r - 2] = at(0, ra - 2);
      t[r - 1] = at(1, rb - 1);
      // Batch axes (specs::ops::BroadcastTypes): an operand's tree where its dimension is the
      // output's; one of 1 has none.
      for (int j = 0; j < r - 2; ++j) {
        TreeRef merged;
        for (int which = 0; which < 2; ++which) {
          const int rank = which == 0 ? ra : rb, d = j - (r - rank);
          if (d < 0) continue;
          const std::string dim = dims_->Find(DimName(n.inputs[which], d, side));
          if (dim == dims_->Find(DimName(v, j, side)))
            merged = Merge(merged, at(which, d));
          else if (dim != LiteralDim(1))
            merged = unknown;
        }
        t[j] = merged;
      }
      break;
    }
    case OpKind::kConv2d:
    case OpKind::kConv2dBias:
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax:
    case OpKind::kEnlarge: {
      if (r != 4) break;
      const bool conv = n.op == OpKind::kConv2d || n.op == OpKind::kConv2dBias;
      t[0] = at(0, 0);
      t[1] = conv ? at(1, 0) : at(0, 1);
      if (n.op == OpKind::kConv2dBias) t[1] = Merge(t[1], at(2, 0));
      break;
    }
    case OpKind::kReduceMean: {
      const bool keep = n.params[specs::ops::kReduceMeanKeepdims] != 0;
      for (int d = 0, o = 0; d < static_cast<int>(in[0].size()) && o < r; ++d) {
        const bool reduced = specs::ops::ReducesAxis(n.params, d);
        if (!reduced) t[o] = at(0, d);
        o += !reduced || keep;
      }
      break;
    }
    case OpKind::kConstOnes:
    case OpKind::kConstIMatmul:
    case OpKind::kConstIConv:
    case OpKind::kConstPool:
      break;
    case OpKind::kSoftmax:
    case OpKind::kSlice:
      for (int d = 0; d < r; ++d) t[d] = d == p0 ? nullptr : at(0, d);
      break;
    case OpKind::kConcat:
      for (int d = 0; d < r; ++d)
        t[d] = d == p0 ? MakeTree(Tree::kNode, DimName(n.inputs[0], d, side), at(0, d), at(1, d))
                       : Merge(at(0, d), at(1, d));
      break;
    case OpKind::kSplit: {
      // Where it type-checks, the input's tree along the axis is one concat's: trees that met
      // there agree (their sizes are equal dimensions), and the left part is that concat's.
      for (int d = 0; d < r; ++d) t[d] = at(0, d);
      const TreeRef& x = t[p0];
      if (x && x->kind == Tree::kNode) {
        changed_ |= dims_->Union(DimName({v.node, 0}, p0, side), x->size);
        t[p0] = v.index == 0 ? x->left : x->right;
      } else if (x && x->kind == Tree::kMerge) {
        // Settled in the next round, with the sizes tied (here, or by the split's other output
        // this round: a round that ties nothing with a split undecided fails).
        if (!Unify(x->left, x->right)) {
          Fail("a split of trees that cannot agree");
          return nullptr;
        }
        t[p0] = unknown;
        unresolved_ = true;
      } else if (x && x->kind == Tree::kUnknown) {
        unresolved_ = true;
      } else {
        Fail("a split of no concat");
        return nullptr;
      }
      break;
    }
    default:
      if (specs::GetOp(n.op).shape_rule == specs::ops::UnaryShape) {
        for (int d = 0; d < r; ++d) t[d] = at(0, d);
      } else {
        for (int d = 0; d < r; ++d) t[d] = unknown;
      }
      break;
  }
  return &trees_.emplace(key, std::move(t)).first->second;
}

}  // namespace verisub::verify
