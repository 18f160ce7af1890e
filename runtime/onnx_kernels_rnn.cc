// Recurrent layers: RNN, GRU and LSTM (opsets 7 and 14): forward, reverse and bidirectional,
// sequence lengths per batch entry, initial states, LSTM peepholes and input_forget, GRU's
// linear_before_reset, clipping, both layouts, and the activation functions the spec lists.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

using Activation = std::function<double(double)>;

// The spec's activation functions by name; alpha and beta are taken from the attribute lists in
// order by the functions that use them.
StatusOr<Activation> MakeActivation(const std::string& op, const std::string& name,
                                    const std::vector<float>& alphas,
                                    const std::vector<float>& betas, size_t* a, size_t* b) {
  auto alpha = [&](double dflt) { return *a < alphas.size() ? alphas[(*a)++] : dflt; };
  auto beta = [&](double dflt) { return *b < betas.size() ? betas[(*b)++] : dflt; };
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "sigmoid") return Activation([](double x) { return 1 / (1 + std::exp(-x)); });
  if (n == "tanh") return Activation([](double x) { return std::tanh(x); });
  if (n == "relu") return Activation([](double x) { return std::max(x, 0.0); });
  if (n == "softsign") return Activation([](double x) { return x / (1 + std::abs(x)); });
  if (n == "softplus") return Activation([](double x) { return std::log1p(std::exp(x)); });
  if (n == "affine") {
    const double al = alpha(1.0), be = beta(0.0);
    return Activation([al, be](double x) { return al * x + be; });
  }
  if (n == "leakyrelu") {
    const double al = alpha(0.01);
    return Activation([al](double x) { return x >= 0 ? x : al * x; });
  }
  if (n == "thresholdedrelu") {
    const double al = alpha(1.0);
    return Activation([al](double x) { return x > al ? x : 0.0; });
  }
  if (n == "scaledtanh") {
    const double al = alpha(1.0), be = beta(1.0);
    return Activation([al, be](double x) { return al * std::tanh(be * x); });
  }
  if (n == "hardsigmoid") {
    const double al = alpha(0.2), be = beta(0.5);
    return Activation([al, be](double x) { return std::clamp(al * x + be, 0.0, 1.0); });
  }
  if (n == "elu") {
    const double al = alpha(1.0);
    return Activation([al](double x) { return x >= 0 ? x : al * (std::exp(x) - 1); });
  }
  return InvalidArgument(op + ": activation '" + name + "'");
}

enum class Cell { kRnn, kGru, kLstm };

template <Cell kCell>
Status Recurrent(const KernelContext& ctx, std::vector<HostTensor>* out) {
  const std::string op = ctx.op_type();
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
  const int gates = kCell == Cell::kLstm ? 4 : kCell == Cell::kGru ? 3 : 1;
  const HostTensor &wt = *ctx.input(1), &rt = *ctx.input(2);
  // Layout 1 (opset 14) puts the batch first in X, Y and the states: computed in layout 0, with
  // the axes swapped on the way in and out.
  const bool batch_first = ctx.opset() >= 14 && ctx.AttrInt("layout", 0) != 0;
  if (ctx.input(0)->dims.size() != 3 || wt.dims.size() != 3 || rt.dims.size() != 3)
    return InvalidArgument(op + ": X, W and R must have rank 3");
  const HostTensor xt = batch_first ? TransposeTensor(*ctx.input(0), {1, 0, 2}) : *ctx.input(0);
  const int64_t seq = xt.dims[0], batch = xt.dims[1], in = xt.dims[2];
  const std::string direction = ctx.AttrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return InvalidArgument(op + ": direction '" + direction + "'");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t h = ctx.AttrInt("hidden_size", wt.dims[1] / gates);
  if (h < 1 || wt.dims[0] != dirs || wt.dims[1] != gates * h || wt.dims[2] != in ||
      rt.dims[0] != dirs || rt.dims[1] != gates * h || rt.dims[2] != h)
    return InvalidArgument(op + ": W " + DimsToString(wt.dims) + " or R " + DimsToString(rt.dims) +
                           " do not fit X " + DimsToString(xt.dims) + ", hidden_size " +
                           std::to_string(h) + " and " + std::to_string(dirs) + " direction(s)");
  VERISUB_RETURN_IF_ERROR(CheckSize({seq, dirs, batch, h}, op));
  const std::vector<double> x = xt.ToDoubles(), w = wt.ToDoubles(), r = rt.ToDoubles();
  std::vector<double> bias(static_cast<size_t>(dirs * 2 * gates * h), 0.0);
  if (const HostTensor* b = ctx.input(3)) {
    if (b->NumElements() != static_cast<int64_t>(bias.size()))
      return InvalidArgument(op + ": B must hold " + std::to_string(bias.size()) + " values");
    bias = b->ToDoubles();
  }
  std::vector<int64_t> lens(batch, seq);
  if (const HostTensor* l = ctx.input(4)) {
    if (l->NumElements() != batch) return InvalidArgument(op + ": sequence_lens must hold batch");
    lens = l->ToInts();
    for (int64_t v : lens)
      if (v < 0 || v > seq) return InvalidArgument(op + ": a sequence length out of range");
  }
  // An initial state, [dirs, batch, h]; zeros when not given.
  auto state = [&](int k) -> StatusOr<std::vector<double>> {
    const HostTensor* t = ctx.input(k);
    if (!t) return std::vector<double>(static_cast<size_t>(dirs * batch * h), 0.0);
    if (t->NumElements() != dirs * batch * h)
      return InvalidArgument(op + ": an initial state of the wrong size");
    return (batch_first ? TransposeTensor(*t, {1, 0, 2}) : *t).ToDoubles();
  };
  VERISUB_ASSIGN_OR_RETURN(std::vector<double> hs, state(5));
  std::vector<double> cs(hs.size(), 0.0), peep(static_cast<size_t>(dirs * 3 * h), 0.0);
  if constexpr (kCell == Cell::kLstm) {
    VERISUB_ASSIGN_OR_RETURN(cs, state(6));
    if (const HostTensor* p = ctx.input(7)) {
      if (p->NumElements() != static_cast<int64_t>(peep.size()))
        return InvalidArgument(op + ": P must hold " + std::to_string(peep.size()) + " values");
      peep = p->ToDoubles();
    }
  }
  // Activations: f (and g, h) per direction.
  const int per_dir = kCell == Cell::kLstm ? 3 : kCell == Cell::kGru ? 2 : 1;
  std::vector<std::string> names;
  if (const onnx::AttributeProto* a = ctx.FindAttr("activations"))
    for (const std::string& n : a->strings()) names.push_back(n);
  if (names.empty()) {
    const std::vector<std::string> dflt = kCell == Cell::kRnn ? std::vector<std::string>{"Tanh"}
                                          : kCell == Cell::kGru
                                              ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                              : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), dflt.begin(), dflt.end());
  }
  if (static_cast<int64_t>(names.size()) != per_dir * dirs)
    return InvalidArgument(op + ": " + std::to_string(names.size()) + " activations for " +
                           std::to_string(per_dir * dirs));
  const std::vector<float> alphas = ctx.AttrFloats("activation_alpha"),
                           betas = ctx.AttrFloats("activation_beta");
  std::vector<Activation> act;
  size_t ai = 0, bi = 0;
  for (const std::string& n : names) {
    VERISUB_ASSIGN_OR_RETURN(Activation f, MakeActivation(op, n, alphas, betas, &ai, &bi));
    act.push_back(std::move(f));
  }
  const double clip = ctx.FindAttr("clip") ? ctx.AttrFloat("clip", 0) : -1;
  const bool input_forget = kCell == Cell::kLstm && ctx.AttrInt("input_forget", 0) != 0;
  const bool linear_before_reset = kCell == Cell::kGru && ctx.AttrInt("linear_before_reset", 0);
  auto clipped = [clip](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };

  std::vector<double> y(static_cast<size_t>(seq * dirs * batch * h), 0.0);
  std::vector<double> xw(gates * h), hr(gates * h);
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const double* W = w.data() + d * gates * h * in;
    const double* R = r.data() + d * gates * h * h;
    const double* Wb = bias.data() + d * 2 * gates * h;
    const double* Rb = Wb + gates * h;
    const Activation &f = act[d * per_dir], &g = act[d * per_dir + (per_dir > 1 ? 1 : 0)],
                     &hh = act[d * per_dir + per_dir - 1];
    for (int64_t b = 0; b < batch; ++b) {
      double* H = hs.data() + (d * batch + b) * h;
      double* C = cs.data() + (d * batch + b) * h;
      for (int64_t step = 0; step < lens[b]; ++step) {
        const int64_t t = reverse ? lens[b] - 1 - step : step;
        const double* X = x.data() + (t * batch + b) * in;
        for (int64_t k = 0; k < gates * h; ++k) {
          double sx = Wb[k], sh = Rb[k];
          for (int64_t i = 0; i < in; ++i) sx += X[i] * W[k * in + i];
          for (int64_t i = 0; i < h; ++i) sh += H[i] * R[k * h + i];
          xw[k] = sx;
          hr[k] = sh;
        }
        std::vector<double> next(h), reset(h);
        if constexpr (kCell == Cell::kGru)
          for (int64_t j = 0; j < h; ++j) reset[j] = f(clipped(xw[h + j] + hr[h + j]));
        for (int64_t j = 0; j < h; ++j) {
          if constexpr (kCell == Cell::kRnn) {
            next[j] = f(clipped(xw[j] + hr[j]));
          } else if constexpr (kCell == Cell::kGru) {
            const double z = f(clipped(xw[j] + hr[j]));
            double cand;
            if (linear_before_reset) {
              cand = xw[2 * h + j] + reset[j] * hr[2 * h + j];
            } else {  // (r . H) R_h + R_bh
              double s = Rb[2 * h + j];
              for (int64_t i = 0; i < h; ++i) s += reset[i] * H[i] * R[(2 * h + j) * h + i];
              cand = xw[2 * h + j] + s;
            }
            next[j] = (1 - z) * g(clipped(cand)) + z * H[j];
          } else {
            const double* P = peep.data() + d * 3 * h;
            const double i_gate = f(clipped(xw[j] + hr[j] + P[j] * C[j]));
            const double f_gate =
                input_forget ? 1 - i_gate
                             : f(clipped(xw[2 * h + j] + hr[2 * h + j] + P[2 * h + j] * C[j]));
            const double c_in = g(clipped(xw[3 * h + j] + hr[3 * h + j]));
            const double c_new = f_gate * C[j] + i_gate * c_in;
            const double o_gate = f(clipped(xw[h + j] + hr[h + j] + P[h + j] * c_new));
            next[j] = o_gate * hh(c_new);
            C[j] = c_new;
          }
        }
        std::copy(next.begin(), next.end(), H);
        std::copy(H, H + h, y.begin() + ((t * dirs + d) * batch + b) * h);
      }
    }
  }
  const int32_t type = xt.elem_type;
  auto as_state = [&](const std::vector<double>& s) {
    HostTensor t = HostTensor::FromDoubles(type, {dirs, batch, h}, s);
    return batch_first ? TransposeTensor(t, {1, 0, 2}) : t;
  };
  if (out->size() > 0) {
    HostTensor t = HostTensor::FromDoubles(type, {seq, dirs, batch, h}, y);
    (*out)[0] = batch_first ? TransposeTensor(t, {2, 0, 1, 3}) : t;
  }
  if (out->size() > 1) (*out)[1] = as_state(hs);
  if (kCell == Cell::kLstm && out->size() > 2) (*out)[2] = as_state(cs);
  return Status::Ok();
}

}  // namespace

void AddRecurrentKernels(KernelTable* t) {
  auto& k = *t;
  k["RNN"] = Recurrent<Cell::kRnn>;
  k["GRU"] = Recurrent<Cell::kGru>;
  k["LSTM"] = Recurrent<Cell::kLstm>;
}

}  // namespace verisub::runtime
