// Fuzzes the ONNX importer (and, for small results, export and the executor) with random byte
// flips, truncations and splices of real models, and the structure-aware mutations of
// tests/fuzz/onnx_mutator.h; the same entry point libFuzzer runs in `make fuzz`. Built with
// AddressSanitizer and UBSan: any memory error, undefined behaviour or crash fails the test; import
// errors are expected.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/flags.h"
#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "tests/fuzz/onnx_mutator.h"
#include "tests/runtime/test_models.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using namespace verisub::runtime;  // NOLINT

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds = {testing::SmallCnnBytes(), testing::SmallTransformerBytes()};
  for (const char* t :
       {"test_basic_conv_with_padding", "test_gemm_default_vector_bias", "test_averagepool_2d_pads",
        "test_reshape_reordered_all_dims", "test_slice", "test_layer_normalization_4d_axis1",
        "test_concat_2d_axis_0", "test_gather_0", "test_split_equal_parts_1d"}) {
    std::ifstream in(std::string("/usr/share/libonnx-testdata/data/node/") + t + "/model.onnx",
                     std::ios::binary);
    if (!in) continue;
    std::stringstream buf;
    buf << in.rdbuf();
    seeds.push_back(buf.str());
  }
  // The committed corpus's seeds too (newer opsets, local functions, ONNX Runtime's forms...),
  // in name order so that a run is the same everywhere.
  std::vector<std::filesystem::path> corpus;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(VERISUB_FUZZ_CORPUS, ec))
    if (e.path().filename().string().rfind("seed_", 0) == 0) corpus.push_back(e.path());
  std::sort(corpus.begin(), corpus.end());
  for (const auto& path : corpus) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    seeds.push_back(buf.str());
  }
  return seeds;
}

std::string Mutate(const std::string& seed, const std::vector<std::string>& all,
                   std::mt19937_64& rng) {
  std::string s = seed;
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  switch (rng() % 5) {
    case 0:  // truncate
      s.resize(pick(s.size() + 1));
      break;
    case 1: {  // flip a few bytes
      int flips = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < flips && !s.empty(); ++i)
        s[pick(s.size())] ^= static_cast<char>(1 + rng() % 255);
      break;
    }
    case 2: {  // overwrite a byte with a boundary value
      static const unsigned char kValues[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x10};
      if (!s.empty()) s[pick(s.size())] = static_cast<char>(kValues[rng() % sizeof kValues]);
      break;
    }
    case 3: {  // splice with another seed
      const std::string& o = all[pick(all.size())];
      size_t a = pick(s.size() + 1), b = pick(o.size() + 1);
      s = s.substr(0, a) + o.substr(b);
      break;
    }
    default: {  // duplicate or delete a range
      size_t a = pick(s.size() + 1), len = pick(64);
      if (rng() % 2) {
        s.insert(a, s.substr(a, len));
      } else {
        s.erase(a, len);
      }
      break;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 1500;
  uint64_t seed = 7;
  std::string dump_path;
  verisub::base::Flags flags("runtime_fuzz_asan", "[flags]",
                             "Mutates small ONNX models and imports (and runs) each one.");
  flags.Int("--iterations", &iterations, 0, 100000000, "mutated models to import")
      .Uint64("--seed", &seed, "random seed")
      .Path("--dump", &dump_path, "write every input here before importing it (to replay a crash)");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  const char* dump = dump_path.empty() ? nullptr : dump_path.c_str();
  std::vector<std::string> seeds = Seeds();
  std::mt19937_64 rng(seed);
  for (int it = 0; it < iterations; ++it) {
    const std::string& base = seeds[it % seeds.size()];
    std::string bytes = Mutate(base, seeds, rng);
    if (rng() % 4 == 0) bytes = Mutate(bytes, seeds, rng);
    // Half the time a structure-aware mutation (dims, attributes, initializers, wiring).
    if (rng() % 2) {
      std::string structured = verisub::fuzz::MutateOnnxModel(base, rng());
      if (!structured.empty()) bytes = structured;
    }
    if (dump) std::ofstream(dump, std::ios::binary | std::ios::trunc) << bytes;
    // The libFuzzer target's entry point (tests/fuzz/onnx_import_fuzz.cc): import two ways,
    // export, run small graphs; it aborts on a crash or an error that does not name the file.
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("fuzz: %d iterations, no crash\n", iterations);
  return 0;
}
