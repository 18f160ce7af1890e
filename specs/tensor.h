// Tensor types shared by every semantics: shapes, split trees, and element-generic tensors.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace verisub::specs {

inline constexpr int kMaxRank = 6;

// A shape of rank 0..kMaxRank, stored inline so tensors are cheap to copy.
struct Shape {
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{};

  Shape() = default;
  Shape(std::initializer_list<int64_t> d);
  static StatusOr<Shape> FromVector(const std::vector<int64_t>& d);
  int64_t operator[](int i) const { return dims[i]; }
  int64_t& operator[](int i) { return dims[i]; }
  int64_t NumElements() const;
  std::vector<int64_t> ToVector() const { return {dims.begin(), dims.begin() + rank}; }
  std::string ToString() const;  // "[2,4,5,5]"
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
};

// TASO's split tree: the concat history of one dimension. A split along an axis undoes the most
// recent concat along it, so split points never need to be parameters and rules stay valid for
// any shapes. A null tree is a leaf (no concat history). A conflict node records that two
// different histories met in an elementwise operator; splitting it is an error. Trees are
// immutable and shared.
struct SplitNode;
using SplitTree = std::shared_ptr<const SplitNode>;
struct SplitNode {
  bool conflict = false;
  int64_t left_size = 0;  // size of the left part along the dimension
  SplitTree left, right;
};

SplitTree ConcatTrees(int64_t left_size, SplitTree left, SplitTree right);
SplitTree ConflictTree();
// Merge for elementwise operators: leaf is the identity, conflict absorbs, equal trees are kept,
// different trees give a conflict. Commutative and associative.
SplitTree MergeTrees(const SplitTree& a, const SplitTree& b);
bool TreesEqual(const SplitTree& a, const SplitTree& b);
uint64_t HashTree(const SplitTree& t);
std::string TreeToString(const SplitTree& t);

// Everything a shape rule knows about a tensor: its shape and each dimension's split tree.
struct TensorType {
  Shape shape;
  std::array<SplitTree, kMaxRank> trees{};

  TensorType() = default;
  explicit TensorType(Shape s) : shape(s) {}
  bool operator==(const TensorType& o) const;
  std::string ToString() const;
};

// A dense row-major tensor over an element type chosen by the semantics.
template <typename E>
struct Tensor {
  TensorType type;
  std::vector<E> data;

  const Shape& shape() const { return type.shape; }
};

// Row-major strides of a shape.
inline std::array<int64_t, kMaxRank> Strides(const Shape& s) {
  std::array<int64_t, kMaxRank> st{};
  int64_t acc = 1;
  for (int i = s.rank - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= s.dims[i];
  }
  return st;
}

}  // namespace verisub::specs
