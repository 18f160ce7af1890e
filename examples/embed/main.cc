// Loads a model and the rules installed with verisub at start-up, optimizes and prepares it once,
// then runs it: what a product does with verisub. Inputs are filled with a fixed pattern.
//   embed MODEL.onnx [--no-optimize] [--runs N]
#include <verisub/verisub.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: embed MODEL.onnx [--no-optimize] [--runs N]\n");
    return 2;
  }
  verisub::SessionConfig config;
  int runs = 10;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-optimize") == 0) {
      config.optimize = false;
    } else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "embed: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  std::string error;
  auto session = verisub::InferenceSession::Create(argv[1], config, &error);
  if (!session) {
    std::fprintf(stderr, "embed: %s\n", error.c_str());
    return 1;
  }
  std::vector<verisub::Tensor> inputs;
  for (const verisub::TensorInfo& info : session->inputs()) {
    verisub::Tensor t;
    t.name = info.name;
    t.type = info.type;
    int64_t n = 1;
    for (int64_t d : info.dims) {
      t.dims.push_back(d < 0 ? 1 : d);
      n *= d < 0 ? 1 : d;
    }
    if (t.type == verisub::ElementType::kFloat) {
      for (int64_t i = 0; i < n; ++i) t.floats.push_back(static_cast<float>(i % 7) / 7.f - 0.5f);
    } else if (t.type == verisub::ElementType::kDouble) {
      t.doubles.assign(n, 0.25);
    } else {
      t.ints.assign(n, 1);
    }
    inputs.push_back(std::move(t));
  }
  std::vector<verisub::Tensor> outputs;
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < runs; ++r)
    if (!session->Run(inputs, &outputs, &error)) {
      std::fprintf(stderr, "embed: %s\n", error.c_str());
      return 1;
    }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("verisub %s: %s\n", verisub::Version().c_str(), session->Summary().c_str());
  for (const verisub::Tensor& t : outputs) {
    std::printf("output %s [", t.name.c_str());
    for (size_t d = 0; d < t.dims.size(); ++d)
      std::printf("%s%lld", d ? "," : "", (long long)t.dims[d]);
    double sum = 0;
    for (float v : t.floats) sum += v;
    std::printf("] sum %.6g\n", sum);
  }
  std::printf("embed: %.3f ms per run over %d runs\n", runs > 0 ? ms / runs : 0.0, runs);
  return 0;
}
