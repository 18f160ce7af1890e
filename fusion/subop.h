// The sub-operator level (DESIGN.md §6): a kernel as a small graph of element-wise unary and
// binary operators, select, reindex (an output index maps to an input index by an affine
// expression with floor division and modulo; reads out of range give a constant) and reduce (sum,
// max over axes). Operators of the graph lower into it (lower.h); a fused cluster of them is one
// SubGraph, generated as one kernel (halide_codegen.h). Shapes are static.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace verisub::fusion {

enum class SubOpKind : uint8_t { kInput, kConst, kUnary, kBinary, kSelect, kReindex, kReduce };
enum class UnaryFn : uint8_t { kNeg, kRecip, kExp, kLog, kSqrt, kErf, kTanh, kAbs };
// kLess gives 1 where a < b, else 0 (a mask for select).
enum class BinaryFn : uint8_t { kAdd, kMul, kMax, kMin, kLess, kPow };
enum class ReduceFn : uint8_t { kSum, kMax };

// Input axis k of a reindex reads index
//   ((sum_j coef[k][j] * out_j + offset[k]) floordiv divisor[k]) mod modulus[k]   (modulus 0: none)
// and the read gives `fill` where any axis's index falls outside the input.
struct AxisMap {
  std::vector<int64_t> coef;  // one per output axis
  int64_t offset = 0;
  int64_t divisor = 1;
  int64_t modulus = 0;
  bool operator==(const AxisMap&) const = default;
};

struct SubNode {
  SubOpKind kind = SubOpKind::kInput;
  std::vector<int64_t> dims;  // the output's dims, row-major
  std::vector<int> args;      // operand nodes (earlier in the graph)
  UnaryFn unary = UnaryFn::kNeg;
  BinaryFn binary = BinaryFn::kAdd;
  ReduceFn reduce = ReduceFn::kSum;
  int input = -1;                // kInput: which kernel input
  double value = 0;              // kConst: the value; kReindex: the fill
  std::vector<AxisMap> map;      // kReindex: one per input axis
  std::vector<int> reduce_axes;  // kReduce: reduced axes (kept with extent 1)
  bool operator==(const SubNode&) const = default;
};

// A kernel: nodes in topological order, inputs by position, one output node. Operands of a binary
// or select have the output's dims (lowering inserts reindexes for broadcasts).
struct SubGraph {
  std::vector<SubNode> nodes;
  std::vector<std::vector<int64_t>> input_dims;
  int output = -1;

  int Input(std::vector<int64_t> dims);  // a new kernel input and its node
  int Const(double v, std::vector<int64_t> dims);
  int Unary(UnaryFn f, int a);
  int Binary(BinaryFn f, int a, int b);
  int Select(int mask, int a, int b);  // mask != 0 ? a : b
  int Reindex(int a, std::vector<int64_t> dims, std::vector<AxisMap> map, double fill = 0);
  int Reduce(ReduceFn f, int a, std::vector<int> axes);
  // `a` (of dims broadcastable to `dims`, numpy rules) read at `dims`: itself when equal.
  int BroadcastTo(int a, const std::vector<int64_t>& dims);
  // `a` with its axes permuted: output axis i is input axis perm[i]. -1 (and no node) when `perm`
  // is no permutation of `a`'s axes.
  int Transpose(int a, const std::vector<int>& perm);
  const std::vector<int64_t>& dims(int n) const { return nodes[n].dims; }
  int num_reductions() const;
};

// Whether reindex node `n` only broadcasts: every input axis reads the output axis of its
// position (the same rank) or, having extent 1, index 0.
bool IsBroadcast(const SubGraph& g, const SubNode& n);

// How many trailing axes of the output every reindex of `g` reads as they are: output axis
// rank-1-i from input axis rank_in-1-i, of the same extent, with no division, modulo, offset or
// other input axis involved (a channel shuffle's reshapes and transpose leave the spatial axes
// so). Fusing those axes keeps every read dense: an input's index is the fused one plus a base.
// 0 where the graph reduces, or where some reindex moves the innermost axis (a transpose that
// makes tokens the innermost axis reads them at a stride: a gather per element).
int DenseTrailingAxes(const SubGraph& g);

// Whether every reduction of `g` runs along the output's own axes, so that a reduction can be
// computed per row of the output: each reduction's operand has the output's dims on every axis
// it keeps, and between a reduction and the output there are only element-wise operators and
// broadcasts. Reindexes before the reductions (a reshape feeding a softmax) do not matter; a
// reshape or transpose after one (a group norm's reshape back) does. True without reductions.
bool ReductionsKeepOutputAxes(const SubGraph& g);

// Checks operand ids, dims and maps; the error names the node.
Status CheckSubGraph(const SubGraph& g);
// A canonical text form, one node per line ("%3 = exp %2 : [1,197,768]"): the kernel cache's key
// and the dumps' format.
std::string SubGraphText(const SubGraph& g);
// Evaluates `g` in double on row-major inputs: the reference the generated kernels are tested
// against.
StatusOr<std::vector<double>> EvaluateSubGraph(const SubGraph& g,
                                               const std::vector<std::vector<double>>& inputs);
const char* UnaryName(UnaryFn f);
const char* BinaryName(BinaryFn f);
int64_t NumElements(const std::vector<int64_t>& dims);
// Floor division (towards minus infinity), as reindexes and Halide divide.
int64_t FloorDiv(int64_t a, int64_t b);

}  // namespace verisub::fusion
