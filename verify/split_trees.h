// Split trees with dimension names for sizes, for the index-level normal forms' concat and split
// (docs/verifier.md, "Pieces"): which concat a split along an axis undoes, built value by value
// as the shape rules build specs::SplitTree.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ruledb/pattern.h"
#include "ruledb/pattern_ranks.h"
#include "verify/index_dims.h"

namespace verisub::verify {

// A split tree (specs::SplitTree) with dimension names for sizes: which concat a split along an
// axis undoes. Null is a leaf. kMerge: two trees an elementwise operator met whose equality the
// dimensions known equal leave open (equal trees where their sizes agree, else a conflict).
struct Tree;
using TreeRef = std::shared_ptr<const Tree>;
struct Tree {
  enum Kind { kNode, kConflict, kUnknown, kMerge } kind = kNode;
  std::string size;     // kNode: the left part's dimension name
  TreeRef left, right;  // kNode: the parts' trees; kMerge: the two trees met
};

inline TreeRef MakeTree(Tree::Kind kind, std::string size = "", TreeRef left = nullptr,
                        TreeRef right = nullptr) {
  return std::make_shared<const Tree>(
      Tree{kind, std::move(size), std::move(left), std::move(right)});
}

// The trees of both sides of a rule, one round at a time: a round may tie dimensions (a split's
// left part to its input's tree, trees met in an elementwise operator unified where a split
// needs them equal), after which the caller starts another, until one changes nothing.
class SplitTrees {
 public:
  explicit SplitTrees(Dims* dims) : dims_(dims) {}

  // Forgets the trees and whether the round changed anything.
  void StartRound();
  // The trees of every value of `g` (side `side`); false, with `error`, where a split undoes no
  // concat (or none this procedure knows).
  bool Build(const ruledb::PatternGraph& g, const ruledb::PatternRanks& ranks, char side,
             std::string* error);
  // Whether the round tied dimensions, so another is needed.
  bool changed() const { return changed_; }
  // Whether source value `s` and target value `d` have equal trees at every shape, axis by axis.
  bool SameEverywhere(ruledb::ValueRef s, ruledb::ValueRef d, std::string* error);

 private:
  enum class Same { kYes, kNo, kMaybe };

  // Whether two trees are equal: at every shape (kYes), at none (kNo), or at some (kMaybe).
  Same TreesSame(const TreeRef& a, const TreeRef& b);
  // specs::MergeTrees: a leaf is the identity, a conflict absorbs, equal trees are kept.
  TreeRef Merge(const TreeRef& a, const TreeRef& b);
  // Makes `a` and `b` equal trees (their sizes equal dimensions); false where they cannot be.
  bool Unify(const TreeRef& a, const TreeRef& b);
  // The trees of value `v`, one per axis; null with error_ set.
  const std::vector<TreeRef>* TreesOf(const ruledb::PatternGraph& g,
                                      const ruledb::PatternRanks& ranks, char side,
                                      ruledb::ValueRef v);
  bool Fail(const std::string& why) {
    if (error_.empty()) error_ = why;
    return false;
  }

  Dims* dims_;
  std::map<std::string, std::vector<TreeRef>> trees_;  // side, node and output -> per axis
  bool changed_ = false, unresolved_ = false;
  std::string error_;
};

}  // namespace verisub::verify
