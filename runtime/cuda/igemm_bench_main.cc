// verisub-igemm-bench: our implicit-GEMM Tensor-Core convolution (implicit_gemm.h) against
// cuDNN's fastest algorithm on every distinct convolution of the given models (group 1, channels
// and filters multiples of 8; NHWC, float16 or bfloat16, float32 accumulation), at each batch size:
// the tile search's best tile and time, cuDNN's, TFLOP/s of both, and the largest difference of
// the outputs relative to cuDNN's largest magnitude. Both timed the same way
// (cuda_util::MedianLaunchSeconds). `make gpu-check` runs it on the development models.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "base/flags.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_cost.h"
#include "runtime/cuda/cuda_util.h"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/implicit_gemm_search.h"
#include "runtime/onnx_import.h"
#include "specs/ops/conv2d.h"

namespace verisub::runtime::cuda_backend {
namespace {

using cuda_util::Check;

// The group-1 spec convolutions of `g` at batch 1 (onnx:Conv nodes, which keep their own
// padding attributes, are counted and left out).
std::vector<ConvGeometry> ConvolutionsOf(const Graph& g, int* skipped) {
  std::vector<ConvGeometry> out;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (!n.op || (*n.op != specs::OpKind::kConv2d && *n.op != specs::OpKind::kConv2dBias)) {
      if (n.KindName() == "onnx:Conv") ++*skipped;
      continue;
    }
    const auto& xd = g.value(n.inputs[0]).dims;
    const auto& wd = g.value(n.inputs[1]).dims;
    const auto& yd = g.value(n.outputs[0]).dims;
    if (xd.size() != 4 || wd.size() != 4 || yd.size() != 4) continue;
    auto xs = specs::Shape::FromVector(xd);
    if (!xs.ok() || specs::ops::ConvGroups(n.params, *xs) != 1) {
      ++*skipped;
      continue;
    }
    const bool same =
        n.params[specs::ops::kConvPadding] == static_cast<int64_t>(specs::Padding::kSame);
    ConvGeometry c;
    c.n = 1;
    c.c = static_cast<int>(xd[1]), c.h = static_cast<int>(xd[2]), c.w = static_cast<int>(xd[3]);
    c.k = static_cast<int>(wd[0]), c.r = static_cast<int>(wd[2]), c.s = static_cast<int>(wd[3]);
    c.p = static_cast<int>(yd[2]), c.q = static_cast<int>(yd[3]);
    c.stride_h = static_cast<int>(n.params[specs::ops::kConvStrideH]);
    c.stride_w = static_cast<int>(n.params[specs::ops::kConvStrideW]);
    c.pad_h = same ? (c.r - 1) / 2 : 0;
    c.pad_w = same ? (c.s - 1) / 2 : 0;
    if (!ImplicitGemmUnsupported(c).empty()) {
      ++*skipped;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string Describe(const ConvGeometry& g) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "n%d %dx%dx%d -> %d, %dx%d/%d", g.n, g.h, g.w, g.c, g.k, g.r, g.s,
                g.stride_h);
  return buf;
}

// cuDNN's fastest algorithm on `g` (NHWC, type t, Tensor Core math), timed as ours is; its output
// left in y.
StatusOr<double> CudnnSeconds(cudnnHandle_t dnn, cudaStream_t stream, DType t,
                              const ConvGeometry& g, const void* x, const void* w, void* y) {
  const cudnnDataType_t ct = t == DType::kF16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
  cuda_util::FilterDesc wd;
  cuda_util::ConvDesc cd;
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
  VERISUB_RETURN_IF_ERROR(Check(cudnnCreateTensorDescriptor(&xd), "tensor descriptor"));
  VERISUB_RETURN_IF_ERROR(Check(cudnnCreateTensorDescriptor(&yd), "tensor descriptor"));
  struct Free {
    cudnnTensorDescriptor_t a, b;
    ~Free() {
      cudnnDestroyTensorDescriptor(a);
      cudnnDestroyTensorDescriptor(b);
    }
  } free_descs{xd, yd};
  VERISUB_RETURN_IF_ERROR(
      Check(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NHWC, ct, g.n, g.c, g.h, g.w), "x"));
  VERISUB_RETURN_IF_ERROR(
      Check(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, ct, g.n, g.k, g.p, g.q), "y"));
  VERISUB_RETURN_IF_ERROR(
      Check(cudnnSetFilter4dDescriptor(wd.d, ct, CUDNN_TENSOR_NHWC, g.k, g.c, g.r, g.s), "w"));
  VERISUB_RETURN_IF_ERROR(Check(
      cudnnSetConvolution2dDescriptor(cd.d, g.pad_h, g.pad_w, g.stride_h, g.stride_w, g.dilation_h,
                                      g.dilation_w, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "convolution"));
  VERISUB_RETURN_IF_ERROR(Check(cudnnSetConvolutionMathType(cd.d, CUDNN_TENSOR_OP_MATH), "math"));
  constexpr size_t kWorkspace = size_t{256} << 20;
  cuda_util::DeviceBuffer ws;
  VERISUB_RETURN_IF_ERROR(ws.Allocate(kWorkspace, false));
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  VERISUB_RETURN_IF_ERROR(
      Check(cudnnFindConvolutionForwardAlgorithmEx(dnn, xd, x, wd.d, w, cd.d, yd, y,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned,
                                                   perf, ws.get(), kWorkspace),
            "cudnnFindConvolutionForwardAlgorithmEx"));
  int best = -1;
  for (int k = 0; k < returned && best < 0; ++k)
    if (perf[k].status == CUDNN_STATUS_SUCCESS && perf[k].memory <= kWorkspace) best = k;
  if (best < 0) return Unimplemented("cuDNN found no algorithm for " + Describe(g));
  const float one = 1.f, zero = 0.f;
  return cuda_util::MedianLaunchSeconds(
      stream,
      [&]() -> Status {
        return Check(cudnnConvolutionForward(dnn, &one, xd, x, wd.d, w, cd.d, perf[best].algo,
                                             ws.get(), perf[best].memory, &zero, yd, y),
                     "cudnnConvolutionForward");
      },
      cuda_util::TimingOptions());
}

struct Row {
  ConvGeometry g;
  std::string model;
  std::vector<TileTiming> tiles;
  double cudnn_s = 0;
  double max_rel = 0;
};

template <class T>
Status Measure(cudnnHandle_t dnn, cudaStream_t stream, DType t, Row* row, CostTable* table) {
  const ConvGeometry& g = row->g;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](size_t n) {
    std::vector<T> v(n);
    for (T& e : v) e = FloatToStored<T>(u(rng));
    return v;
  };
  const std::vector<T> xh = random(static_cast<size_t>(g.n) * g.h * g.w * g.c);
  const std::vector<T> wh = random(static_cast<size_t>(g.k) * g.GemmK());
  const size_t ny = static_cast<size_t>(g.GemmM()) * g.k;
  cuda_util::DeviceBuffer x, w, ours, theirs;
  VERISUB_RETURN_IF_ERROR(x.Allocate(xh.size() * sizeof(T)));
  VERISUB_RETURN_IF_ERROR(w.Allocate(wh.size() * sizeof(T)));
  VERISUB_RETURN_IF_ERROR(ours.Allocate(ny * sizeof(T)));
  VERISUB_RETURN_IF_ERROR(theirs.Allocate(ny * sizeof(T)));
  VERISUB_RETURN_IF_ERROR(
      Check(cudaMemcpy(x.get(), xh.data(), xh.size() * sizeof(T), cudaMemcpyHostToDevice), "copy"));
  VERISUB_RETURN_IF_ERROR(
      Check(cudaMemcpy(w.get(), wh.data(), wh.size() * sizeof(T), cudaMemcpyHostToDevice), "copy"));
  VERISUB_ASSIGN_OR_RETURN(row->tiles,
                           SearchTiles(stream, t, g, x.get(), w.get(), ours.get(), table));
  VERISUB_ASSIGN_OR_RETURN(row->cudnn_s,
                           CudnnSeconds(dnn, stream, t, g, x.get(), w.get(), theirs.get()));
  // The best tile's output against cuDNN's.
  VERISUB_RETURN_IF_ERROR(Check(LaunchImplicitGemmConv(stream, t, row->tiles[0].tile, g, x.get(),
                                                       w.get(), nullptr, nullptr, 0, ours.get()),
                                "implicit GEMM convolution"));
  VERISUB_RETURN_IF_ERROR(Check(cudaStreamSynchronize(stream), "synchronize"));
  std::vector<T> a(ny), b(ny);
  VERISUB_RETURN_IF_ERROR(
      Check(cudaMemcpy(a.data(), ours.get(), ny * sizeof(T), cudaMemcpyDeviceToHost), "copy"));
  VERISUB_RETURN_IF_ERROR(
      Check(cudaMemcpy(b.data(), theirs.get(), ny * sizeof(T), cudaMemcpyDeviceToHost), "copy"));
  double diff = 0, scale = 1;
  for (size_t i = 0; i < ny; ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(StoredToFloat(a[i]) - StoredToFloat(b[i]))));
    scale = std::max(scale, static_cast<double>(std::abs(StoredToFloat(b[i]))));
  }
  row->max_rel = diff / scale;
  return Status::Ok();
}

int Main(int argc, char** argv) {
  std::vector<std::string> models;
  std::string batches = "1,8", type = "f16", table_path;
  base::Flags flags("verisub-igemm-bench", "MODEL.onnx... [flags]",
                    "Prints one row per distinct convolution and model; a tile search's times "
                    "are kept in --table (a GPU cost table) when given.");
  flags.Positionals("MODEL.onnx", &models, "models whose convolutions are measured");
  flags.String("--batches", &batches, "N,N", "batch sizes (default 1,8)");
  flags.Enum("--type", &type, {"f16", "bf16"}, "storage type of activations and weights");
  flags.Path("--table", &table_path, "a cost table file keeping the tile search's times");
  if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
  std::vector<int> batch_sizes;
  for (size_t at = 0; at < batches.size();) {
    const size_t comma = std::min(batches.find(',', at), batches.size());
    const int b = std::atoi(batches.substr(at, comma - at).c_str());
    if (b < 1 || b > 1024) return flags.UsageError("--batches: sizes 1 to 1024, comma-separated");
    batch_sizes.push_back(b);
    at = comma + 1;
  }
  if (Status st = CudaDeviceStatus(); !st.ok()) {
    std::fprintf(stderr, "verisub-igemm-bench: no GPU: %s\n", st.message().c_str());
    return 1;
  }
  const DType t = type == "f16" ? DType::kF16 : DType::kBF16;
  CostTable table;
  if (!table_path.empty()) {
    auto header = ThisGpu(0);
    if (!header.ok()) return std::fprintf(stderr, "%s\n", header.status().message().c_str()), 1;
    table = CostTable(*header);
    if (auto loaded = CostTable::Load(table_path); loaded.ok()) table.MergeMissing(*loaded);
  }
  cudnnHandle_t dnn = nullptr;
  cudaStream_t stream = nullptr;
  if (!Check(cudnnCreate(&dnn), "cudnnCreate").ok() ||
      !Check(cudaStreamCreate(&stream), "cudaStreamCreate").ok() ||
      !Check(cudnnSetStream(dnn, stream), "cudnnSetStream").ok()) {
    std::fprintf(stderr, "verisub-igemm-bench: cuDNN or the stream could not be made\n");
    return 1;
  }
  std::vector<Row> rows;
  for (const std::string& path : models) {
    auto g = ImportOnnxFile(path);
    if (!g.ok()) {
      std::fprintf(stderr, "verisub-igemm-bench: %s\n", g.status().message().c_str());
      return 1;
    }
    int skipped = 0;
    std::vector<ConvGeometry> convs = ConvolutionsOf(*g, &skipped);
    std::map<std::string, ConvGeometry> distinct;
    for (const ConvGeometry& c : convs) distinct.emplace(TileKey(t, c, TileConfig()), c);
    std::fprintf(stderr,
                 "%s: %zu convolutions, %zu distinct, %d left out (grouped, ONNX form, "
                 "channels not a multiple of 8)\n",
                 path.c_str(), convs.size(), distinct.size(), skipped);
    for (int b : batch_sizes)
      for (const auto& [key, c] : distinct) {
        Row row;
        row.g = c;
        row.g.n = b;
        row.model = path.substr(path.find_last_of('/') + 1);
        Status st = t == DType::kF16 ? Measure<__half>(dnn, stream, t, &row, &table)
                                     : Measure<__nv_bfloat16>(dnn, stream, t, &row, &table);
        if (!st.ok()) {
          std::fprintf(stderr, "verisub-igemm-bench: %s %s: %s\n", row.model.c_str(),
                       Describe(row.g).c_str(), st.message().c_str());
          return 1;
        }
        rows.push_back(std::move(row));
        std::fprintf(stderr, "\r  %zu measured", rows.size());
      }
    std::fprintf(stderr, "\n");
  }
  std::printf(
      "| model | convolution | GEMM M x N x K | best tile | ours us | ours TFLOP/s | cuDNN us "
      "| cuDNN TFLOP/s | ours vs cuDNN | max diff |\n|---|---|---|---|---:|---:|---:|---:|"
      "---:|---:|\n");
  double log_sum = 0;
  for (const Row& r : rows) {
    const double ours = r.tiles[0].seconds;
    log_sum += std::log(r.cudnn_s / ours);
    std::printf(
        "| %s | %s | %lld x %lld x %lld | %s | %.1f | %.1f | %.1f | %.1f | %.2fx | %.1e |\n",
        r.model.c_str(), Describe(r.g).c_str(), static_cast<long long>(r.g.GemmM()),
        static_cast<long long>(r.g.GemmN()), static_cast<long long>(r.g.GemmK()),
        r.tiles[0].tile.Name().c_str(), ours * 1e6, r.g.Flops() / ours * 1e-12, r.cudnn_s * 1e6,
        r.g.Flops() / r.cudnn_s * 1e-12, r.cudnn_s / ours, r.max_rel);
  }
  if (!rows.empty())
    std::printf("\n%zu convolutions, %s, geometric mean ours vs cuDNN %.2fx\n", rows.size(),
                type.c_str(), std::exp(log_sum / rows.size()));
  if (!table_path.empty()) {
    if (Status st = table.Save(table_path); !st.ok()) {
      std::fprintf(stderr, "verisub-igemm-bench: %s\n", st.message().c_str());
      return 1;
    }
  }
  cudnnDestroy(dnn);
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace
}  // namespace verisub::runtime::cuda_backend

int main(int argc, char** argv) { return verisub::runtime::cuda_backend::Main(argc, argv); }
