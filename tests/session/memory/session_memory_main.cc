// Issue 15: a prepared session runs many times without memory growth. Prepares a small model on
// the oneDNN backend, runs it --warmup times, then --runs times, and fails (exit 1) when the
// resident set grew by more than --max-growth-kb between the two. Built twice: plainly (the
// growth check) and under AddressSanitizer with the leak checker (every allocation of a run
// freed, oneDNN's included: LeakSanitizer intercepts malloc in every library).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/flags.h"
#include "base/process_stats.h"
#include "session/session.h"

int main(int argc, char** argv) {
  using namespace verisub;  // NOLINT
  std::string model;
  int runs = 1000, warmup = 100;
  int64_t max_growth_kb = 1024;
  base::Flags flags("session_memory", "[MODEL.onnx] [flags]");
  flags.Positional("MODEL.onnx", &model, "the model (the tests use data/models/small_resnet.onnx)")
      .Int("--runs", &runs, 1, 100000000, "runs measured")
      .Int("--warmup", &warmup, 0, 100000000, "runs before the first measurement")
      .Int64("--max-growth-kb", &max_growth_kb, 0, int64_t{1} << 40,
             "resident-set growth allowed over the measured runs (a huge value under ASan, whose "
             "quarantine keeps freed memory)");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  SessionOptions options;
  options.num_threads = 1;
  auto session = Session::Create(model, options);
  if (!session.ok()) {
    std::fprintf(stderr, "error: %s\n", session.status().message().c_str());
    return 1;
  }
  std::vector<runtime::HostTensor> inputs;
  for (int v : (*session)->graph().inputs()) {
    const runtime::Value& val = (*session)->graph().value(v);
    inputs.push_back(runtime::HostTensor::FromDoubles(
        val.elem_type, val.dims, std::vector<double>(runtime::CountElements(val.dims), 0.5)));
  }
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto out = (*session)->Run(inputs);
      if (!out.ok()) {
        std::fprintf(stderr, "error: run %d: %s\n", i, out.status().message().c_str());
        return false;
      }
    }
    return true;
  };
  if (!run(warmup)) return 1;
  const int64_t before = base::CurrentRssBytes();
  if (!run(runs)) return 1;
  const int64_t after = base::CurrentRssBytes();
  const int64_t growth_kb = (after - before) / 1024;
  std::printf("session_memory: %d runs after %d warm-up: resident %lld KB -> %lld KB (%+lld KB)\n",
              runs, warmup, static_cast<long long>(before / 1024),
              static_cast<long long>(after / 1024), static_cast<long long>(growth_kb));
  if (growth_kb > max_growth_kb) {
    std::fprintf(stderr, "session_memory: FAILED: grew by %lld KB, more than %lld KB\n",
                 static_cast<long long>(growth_kb), static_cast<long long>(max_growth_kb));
    return 1;
  }
  return 0;
}
