// Shapes and split trees.
#include "specs/tensor.h"

#include <xxhash.h>

namespace verisub::specs {

Shape::Shape(std::initializer_list<int64_t> d) {
  VERISUB_CHECK(d.size() <= kMaxRank);
  for (int64_t v : d) dims[rank++] = v;
}

StatusOr<Shape> Shape::FromVector(const std::vector<int64_t>& d) {
  if (d.size() > static_cast<size_t>(kMaxRank)) {
    return InvalidArgument("rank " + std::to_string(d.size()) + " exceeds the maximum of " +
                           std::to_string(kMaxRank));
  }
  Shape s;
  for (int64_t v : d) {
    if (v < 0) return InvalidArgument("negative dimension " + std::to_string(v));
    s.dims[s.rank++] = v;
  }
  return s;
}

int64_t Shape::NumElements() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

std::string Shape::ToString() const {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

bool Shape::operator==(const Shape& o) const {
  if (rank != o.rank) return false;
  for (int i = 0; i < rank; ++i)
    if (dims[i] != o.dims[i]) return false;
  return true;
}

SplitTree ConcatTrees(int64_t left_size, SplitTree left, SplitTree right) {
  auto n = std::make_shared<SplitNode>();
  n->left_size = left_size;
  n->left = std::move(left);
  n->right = std::move(right);
  return n;
}

SplitTree ConflictTree() {
  auto n = std::make_shared<SplitNode>();
  n->conflict = true;
  return n;
}

bool TreesEqual(const SplitTree& a, const SplitTree& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->conflict || b->conflict) return a->conflict == b->conflict;
  return a->left_size == b->left_size && TreesEqual(a->left, b->left) &&
         TreesEqual(a->right, b->right);
}

SplitTree MergeTrees(const SplitTree& a, const SplitTree& b) {
  if (!a) return b;
  if (!b) return a;
  if (a->conflict) return a;
  if (b->conflict) return b;
  if (TreesEqual(a, b)) return a;
  return ConflictTree();
}

uint64_t HashTree(const SplitTree& t) {
  if (!t) return 0x9e3779b97f4a7c15ull;
  if (t->conflict) return 0xc2b2ae3d27d4eb4full;
  uint64_t parts[3] = {static_cast<uint64_t>(t->left_size), HashTree(t->left), HashTree(t->right)};
  return XXH3_64bits(parts, sizeof(parts));
}

std::string TreeToString(const SplitTree& t) {
  if (!t) return ".";
  if (t->conflict) return "!";
  return "(" + TreeToString(t->left) + " " + std::to_string(t->left_size) + " " +
         TreeToString(t->right) + ")";
}

bool TensorType::operator==(const TensorType& o) const {
  if (shape != o.shape) return false;
  for (int i = 0; i < shape.rank; ++i)
    if (!TreesEqual(trees[i], o.trees[i])) return false;
  return true;
}

std::string TensorType::ToString() const {
  std::string s = shape.ToString();
  bool any = false;
  for (int i = 0; i < shape.rank; ++i) any = any || trees[i];
  if (!any) return s;
  s += "{";
  for (int i = 0; i < shape.rank; ++i) s += (i ? " " : "") + TreeToString(trees[i]);
  return s + "}";
}

}  // namespace verisub::specs
