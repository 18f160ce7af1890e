// Dimension names and their classes, shared by the index-level normal forms (index_level.cc)
// and their symbolic split trees (split_trees.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "ruledb/pattern.h"

namespace verisub::verify {

// Equal dimensions: a union-find over dimension names, `0in<i>.<d>` for axis d of input i and
// `1<side><node>.<output>.<d>` for an operator's output. The representative of a class is its
// least name, an input's where it has one, so both sides name equal dimensions alike.
class Dims {
 public:
  std::string Find(const std::string& x) {
    auto it = parent_.find(x);
    if (it == parent_.end() || it->second == x) return x;
    std::string root = Find(it->second);
    parent_[x] = root;
    return root;
  }
  // Returns whether the classes were apart.
  bool Union(const std::string& a, const std::string& b) {
    std::string x = Find(a), y = Find(b);
    if (x == y) return false;
    if (y < x) std::swap(x, y);
    parent_[y] = x;
    parent_.emplace(x, x);
    return true;
  }

 private:
  std::map<std::string, std::string> parent_;
};

// The name of axis `d` of value `v` on side `side` ('s' source, 'd' target).
inline std::string DimName(ruledb::ValueRef v, int d, char side) {
  return v.is_input() ? "0in" + std::to_string(v.index) + "." + std::to_string(d)
                      : std::string("1") + side + std::to_string(v.node) + "." +
                            std::to_string(v.index) + "." + std::to_string(d);
}

// A known dimension (a constant kernel's window, an axis of 1), as a dimension name; also the
// coordinate k.
inline std::string LiteralDim(int64_t k) { return "#K" + std::to_string(k); }

}  // namespace verisub::verify
