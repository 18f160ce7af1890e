// verisub-run: the command-line face of a Session. Loads an ONNX model, optionally optimizes
// it, prepares it (oneDNN on the CPU), runs it --warmup + --runs times and prints the stage
// times and the median and minimum latency; --check compares the outputs with the reference
// backend. The last stdout line is `verisub-run: median_ms=<f> min_ms=<f> runs=<n>`.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/process_stats.h"
#include "onnx/onnx_pb.h"
#include "rewriter/session.h"
#include "runtime/tensor_proto.h"

namespace {

using verisub::Status;
using verisub::runtime::HostTensor;

constexpr const char* kUsage =
    "usage: verisub-run MODEL.onnx [--optimize] [--rules R] [--allow-unproved] [--threads N]\n"
    "                   [--runs N] [--warmup N] [--input-shape NAME=d0,d1,..] [--input FILE.pb]\n"
    "                   [--backend onednn|reference] [--layout backend|dp|plain] [--check]\n";

struct RunFlags {
  std::string model;
  verisub::SessionOptions session;
  int runs = 20, warmup = 3;
  std::vector<std::string> input_files;
  bool check = false;
};

bool ParseCount(const char* s, int lo, int* out) {
  if (!s) return false;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < lo || v > 1000000) return false;
  *out = static_cast<int>(v);
  return true;
}

// Parses argv; returns an error message (empty on success). Kept in one function so that the
// shared flags parser can replace it.
std::string ParseFlags(int argc, char** argv, RunFlags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--optimize") {
      f->session.optimize = true;
    } else if (a == "--allow-unproved") {
      f->session.allow_unproved_rules = true;
    } else if (a == "--check") {
      f->check = true;
    } else if (a == "--rules" || a == "--input" || a == "--backend" || a == "--layout") {
      const char* v = next();
      if (!v) return a + " needs a value";
      if (a == "--layout") {
        f->session.layout = v;
        if (f->session.layout != "backend" && f->session.layout != "dp" &&
            f->session.layout != "plain")
          return "--layout takes backend, dp or plain";
      }
      if (a == "--rules") f->session.rules_path = v;
      if (a == "--input") f->input_files.push_back(v);
      if (a == "--backend") f->session.backend = v;
    } else if (a == "--threads") {
      if (!ParseCount(next(), 0, &f->session.num_threads)) return "--threads needs a count >= 0";
      // Checked against the machine, as every program's --threads is (base/flags.h).
      if (Status st = verisub::base::CheckThreadCount(f->session.num_threads, "--threads");
          !st.ok())
        return st.message();
    } else if (a == "--runs") {
      if (!ParseCount(next(), 1, &f->runs)) return "--runs needs a count >= 1";
    } else if (a == "--warmup") {
      if (!ParseCount(next(), 0, &f->warmup)) return "--warmup needs a count >= 0";
    } else if (a == "--input-shape") {
      const char* v = next();
      std::string s = v ? v : "";
      size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0) return "--input-shape needs NAME=d0,d1,..";
      std::vector<int64_t> dims;
      std::stringstream ds(s.substr(eq + 1));
      std::string tok;
      while (std::getline(ds, tok, ',')) {
        int d = 0;
        if (!ParseCount(tok.c_str(), 1, &d)) return "--input-shape: bad dimension '" + tok + "'";
        dims.push_back(d);
      }
      f->session.input_shapes[s.substr(0, eq)] = dims;
    } else if (f->model.empty() && !a.empty() && a[0] != '-') {
      f->model = a;
    } else {
      return "unknown argument '" + a + "'";
    }
  }
  if (f->model.empty()) return "no model given";
  return "";
}

verisub::StatusOr<HostTensor> ReadTensor(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return verisub::NotFound(path + ": cannot open");
  std::stringstream buf;
  buf << in.rdbuf();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(buf.str())) return verisub::DataLoss(path + ": not a TensorProto");
  auto t = verisub::runtime::FromTensorProto(proto);
  if (!t.ok()) return t.status().WithContext(path);
  return t;
}

// Deterministic inputs: floats uniform in [-1, 1), integers 0 and 1 (valid token ids).
HostTensor SyntheticInput(const verisub::runtime::Value& v, uint64_t seed) {
  int64_t n = verisub::runtime::CountElements(v.dims);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  if (verisub::runtime::IsFloatType(v.elem_type)) {
    std::vector<double> x(n);
    for (auto& e : x) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      e = static_cast<double>(s >> 11) / 9007199254740992.0 * 2 - 1;
    }
    return HostTensor::FromDoubles(v.elem_type, v.dims, x);
  }
  std::vector<int64_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = i % 2;
  return HostTensor::FromInts(v.elem_type, v.dims, x);
}

int Fail(const Status& st) {
  std::fprintf(stderr, "error: %s\n", st.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace verisub;  // NOLINT
  RunFlags flags;
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h"))
    return std::printf("%s", kUsage), 0;
  std::string err = ParseFlags(argc, argv, &flags);
  if (!err.empty()) return std::fprintf(stderr, "%s\n%s", err.c_str(), kUsage), 2;

  auto session = Session::Create(flags.model, flags.session);
  if (!session.ok()) return Fail(session.status());
  Session& s = **session;
  const runtime::Graph& g = s.graph();
  std::printf("load:     %.1f ms\n", s.times().load_s * 1e3);
  if (s.optimize_report())
    std::printf("optimize: %.1f ms (%d -> %d nodes)\n", s.times().optimize_s * 1e3,
                s.optimize_report()->nodes_before, s.optimize_report()->nodes_after);
  runtime::PrepareStats st = s.stats();
  std::printf(
      "prepare:  %.1f ms (backend %s, threads %d: %d steps, %d nodes fused, %d on reference "
      "kernels, %d reorders, %.1f MB activations, %.1f MB weights)\n",
      s.times().prepare_s * 1e3, s.backend_name().c_str(), flags.session.num_threads, st.steps,
      st.fused_nodes, st.fallback_nodes, st.reorders, st.activation_bytes / 1048576.0,
      st.weight_bytes / 1048576.0);

  if (!st.fallback_kinds.empty()) {
    std::printf("reference kernels:");
    for (const auto& [kind, count] : st.fallback_kinds) std::printf(" %s x%d", kind.c_str(), count);
    std::printf("\n");
  }

  std::vector<HostTensor> inputs;
  if (!flags.input_files.empty()) {
    if (flags.input_files.size() != g.inputs().size())
      return Fail(InvalidArgument("the model has " + std::to_string(g.inputs().size()) +
                                  " inputs, got " + std::to_string(flags.input_files.size()) +
                                  " --input files"));
    for (const std::string& f : flags.input_files) {
      auto t = ReadTensor(f);
      if (!t.ok()) return Fail(t.status());
      inputs.push_back(std::move(t).value());
    }
  } else {
    for (size_t k = 0; k < g.inputs().size(); ++k)
      inputs.push_back(SyntheticInput(g.value(g.inputs()[k]), k + 1));
  }

  StatusOr<std::vector<HostTensor>> out = std::vector<HostTensor>();
  for (int i = 0; i < flags.warmup; ++i) {
    out = s.Run(inputs);
    if (!out.ok()) return Fail(out.status());
  }
  std::vector<double> ms;
  for (int i = 0; i < flags.runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    out = s.Run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
    if (!out.ok()) return Fail(out.status());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted.size() % 2
                      ? sorted[sorted.size() / 2]
                      : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  std::printf("run:      median %.3f ms, min %.3f ms, max %.3f ms over %d runs (%d warm-up)\n",
              median, sorted.front(), sorted.back(), flags.runs, flags.warmup);

  int rc = 0;
  if (flags.check) {
    auto ref = MakeBackend("reference")->Prepare(g, {});
    if (!ref.ok()) return Fail(ref.status());
    auto expected = (*ref)->Run(inputs);
    if (!expected.ok()) return Fail(expected.status());
    double max_abs = 0, max_rel = 0;
    constexpr double kRel = 1e-4;  // of max(|reference|, 1): an absolute 1e-4 below magnitude 1
    bool shapes = out->size() == expected->size();
    for (size_t k = 0; shapes && k < out->size(); ++k) {
      shapes = (*out)[k].dims == (*expected)[k].dims;
      if (!shapes) break;
      std::vector<double> a = (*out)[k].ToDoubles(), b = (*expected)[k].ToDoubles();
      for (size_t i = 0; i < a.size(); ++i) {
        double d = std::abs(a[i] - b[i]);
        if (std::isnan(a[i]) != std::isnan(b[i])) d = INFINITY;
        max_abs = std::max(max_abs, d);
        max_rel = std::max(max_rel, d / std::max(std::abs(b[i]), 1.0));
      }
    }
    bool ok = shapes && max_rel <= kRel;
    std::printf(
        "check:    %s against the reference backend: max abs %.3g, max rel %.3g "
        "(tolerance %.0e of max(|ref|,1))\n",
        ok ? "ok" : "FAILED", max_abs, max_rel, kRel);
    if (!shapes) std::printf("check:    output shapes differ\n");
    if (!ok) rc = 3;
  }
  std::printf("verisub-run: median_ms=%.3f min_ms=%.3f runs=%d\n", median, sorted.front(),
              flags.runs);
  return rc;
}
