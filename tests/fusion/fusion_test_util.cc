#include "tests/fusion/fusion_test_util.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace verisub::fusion::testing {

std::vector<std::vector<double>> ClusterInputs(const runtime::Graph& g, const LoweredCluster& c,
                                               const std::vector<runtime::HostTensor>& inputs) {
  std::vector<std::vector<double>> out;
  for (int v : c.inputs) {
    const auto it = std::find(g.inputs().begin(), g.inputs().end(), v);
    if (it != g.inputs().end()) {
      out.push_back(inputs[it - g.inputs().begin()].ToDoubles());
    } else {
      out.push_back(g.value(v).constant ? g.value(v).constant->ToDoubles() : std::vector<double>());
    }
  }
  return out;
}

StatusOr<LoweredCluster> LowerWhole(const runtime::Graph& g) {
  std::vector<int> nodes(g.num_nodes());
  std::iota(nodes.begin(), nodes.end(), 0);
  return LowerCluster(g, nodes, g.outputs()[0]);
}

namespace {

std::string Dims(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

std::vector<int64_t> RandomDims(std::mt19937_64& rng, int min_rank, int max_dim) {
  std::vector<int64_t> d(std::uniform_int_distribution<int>(min_rank, 4)(rng));
  for (int64_t& x : d) x = std::uniform_int_distribution<int>(1, max_dim)(rng);
  return d;
}

}  // namespace

std::vector<std::string> SpecOperatorCases(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> c;
  // Larger extents every other seed: vector loops with tails in the generated kernels.
  const int max_dim = seed % 2 ? 4 : 19;
  {
    const std::string x = "input x " + Dims(RandomDims(rng, 1, max_dim)) + "\n";
    for (std::string op : {"relu", "sigmoid", "tanh", "relu6", "hard_sigmoid", "hard_swish", "silu",
                           "gelu", "gelu_tanh", "exp", "erf"})
      c.push_back(x + "output (" + op + " x)\n");
    c.push_back(x + "output (silu (hard_swish (tanh x)))\n");
  }
  {
    const std::vector<int64_t> d = RandomDims(rng, 1, max_dim);
    const std::string xy = "input x " + Dims(d) + "\ninput y " + Dims(d) + "\n";
    for (std::string op : {"ewadd", "ewsub", "ewmul"})
      c.push_back(xy + "output (" + op + " x y)\n");
    c.push_back("input x " + Dims(d) + "\ninput s []\noutput (smul x s)\n");
    c.push_back(xy + "output (ewmul (sigmoid x) (ewadd x y))\n");
  }
  const std::vector<int64_t> d = RandomDims(rng, 2, max_dim);
  const int rank = static_cast<int>(d.size());
  const int axis = std::uniform_int_distribution<int>(0, rank - 1)(rng);
  const std::string x = "input x " + Dims(d) + "\n";
  const std::string a = std::to_string(axis);
  const std::string vec = "[" + std::to_string(d[axis]) + "]";
  c.push_back(x + "weight s " + vec + "\nweight b " + vec + "\noutput (relu (bias_add[axis=" + a +
              "] (channel_scale[axis=" + a + "] x s) b))\n");
  c.push_back(x + "output (softmax[axis=" + a + "] x)\n");
  const std::vector<int64_t> tail(d.begin() + axis, d.end());
  c.push_back(x + "weight s " + Dims(tail) + "\nweight b " + Dims(tail) +
              "\noutput (layer_norm[axis=" + a + ",epsilon=1e-5] x s b)\n");
  for (int keep : {0, 1})
    c.push_back(x + "output (reduce_mean[axes=" + std::to_string(1 << axis) +
                ",keepdims=" + std::to_string(keep) + "] x)\n");
  std::vector<int> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::string p = "[";
  for (int k = 0; k < rank; ++k) p += (k ? "," : "") + std::to_string(perm[k]);
  p += "]";
  c.push_back(x + "output (transpose[perm=" + p + "] x)\n");
  const int64_t start = std::uniform_int_distribution<int64_t>(0, d[axis] - 1)(rng);
  c.push_back(x + "output (slice[axis=" + a + ",start=" + std::to_string(start) +
              ",end=" + std::to_string(d[axis]) + "] x)\n");
  c.push_back(x + "output (reshape[shape=[-1]] (transpose[perm=" + p + "] (relu x)))\n");
  {
    // Axes merged and an extent of 1 inserted, then split back differently: groups of axes.
    std::string merged = "[" + std::to_string(d[0] * d[1]) + ",1";
    for (int k = 2; k < rank; ++k) merged += "," + std::to_string(d[k]);
    int64_t rest = 1;
    for (int k = 1; k < rank; ++k) rest *= d[k];
    c.push_back(x + "output (reshape[shape=" + Dims({d[0], rest}) +
                "] (relu (reshape[shape=" + merged + "]] x)))\n");
    // A concatenation along the axis with an operand of another extent there.
    std::vector<int64_t> e = d;
    e[axis] = std::uniform_int_distribution<int64_t>(1, max_dim)(rng);
    c.push_back(x + "input y " + Dims(e) + "\noutput (concat[axis=" + a + "] x (relu y))\n");
    // ShuffleNet's channel shuffle of two concatenated halves.
    const std::string half = Dims({1, d[1], d[0], d[rank - 1]});
    const std::string two = Dims({1, 2, d[1], d[0], d[rank - 1]});
    c.push_back("input x " + half + "\ninput y " + half +
                "\noutput (reshape[shape=" + Dims({1, 2 * d[1], d[0], d[rank - 1]}) +
                "] (transpose[perm=[0,2,1,3,4]] (reshape[shape=" + two +
                "] (concat[axis=1] x y))))\n");
  }
  const std::string ch = "[" + std::to_string(d[1]) + "]";
  c.push_back(x + "weight s " + ch + "\nweight b " + ch + "\nweight m " + ch + "\nweight v " + ch +
              "\noutput (batchnorm[epsilon=1e-3] x s b m (exp v))\n");
  return c;
}

double MaxRelDiff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;  // one side only: never equal
    if (std::isinf(a[i]) && a[i] == b[i]) continue;
    m = std::max(m, std::fabs(a[i] - b[i]) / std::max(std::fabs(b[i]), 1.0));
  }
  return m;
}

}  // namespace verisub::fusion::testing
