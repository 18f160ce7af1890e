// Shared CUDA helpers (see cuda_util.h).
#include "runtime/cuda/cuda_util.h"

#include <dlfcn.h>

#include <algorithm>

namespace verisub::runtime::cuda_util {

Status Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::Ok();
  return FailedPrecondition(std::string(what) + ": " + cudaGetErrorString(e));
}
Status Check(cudnnStatus_t e, const char* what) {
  if (e == CUDNN_STATUS_SUCCESS) return Status::Ok();
  return FailedPrecondition(std::string(what) + ": " + cudnnGetErrorString(e));
}
Status Check(cublasStatus_t e, const char* what) {
  if (e == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return FailedPrecondition(std::string(what) + ": cuBLAS status " + std::to_string(e));
}

namespace {

// Opens `soname` by the loader's search path (the RUNPATH of this object), else in the toolkit's
// library folder this build found.
void* OpenLibrary(const std::string& soname, std::string* error) {
  if (void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  *error = dlerror();
  const std::string path = std::string(VERISUB_CUDA_LIBRARY_DIR) + "/" + soname;
  if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  *error += "; " + std::string(dlerror());
  return nullptr;
}

StatusOr<const CublasApi*> LoadCublas() {
  static CublasApi api;
  const std::string major = std::to_string(CUBLAS_VER_MAJOR);
  std::vector<void*> libs;
  for (const std::string& soname : {"libcublasLt.so." + major, "libcublas.so." + major}) {
    std::string error;
    void* h = OpenLibrary(soname, &error);
    if (!h) return FailedPrecondition("cannot open " + soname + " (cuBLAS): " + error);
    libs.push_back(h);  // kept open for the process
  }
  auto find = [&](const char* name) -> void* {
    for (void* h : libs)
      if (void* f = dlsym(h, name)) return f;
    return nullptr;
  };
#define VERISUB_CUBLAS_LOAD(f)                        \
  api.f = reinterpret_cast<decltype(&::f)>(find(#f)); \
  if (!api.f) return FailedPrecondition("cuBLAS library lacks " #f);
  VERISUB_CUBLAS_FUNCTIONS(VERISUB_CUBLAS_LOAD)
#undef VERISUB_CUBLAS_LOAD
  return &api;
}

const StatusOr<const CublasApi*>& CublasOnce() {
  static const StatusOr<const CublasApi*> loaded = LoadCublas();
  return loaded;
}

}  // namespace

StatusOr<const CublasApi*> Cublas() { return CublasOnce(); }

const CublasApi& LoadedCublas() { return **CublasOnce(); }

DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = o.p_;
    bytes_ = o.bytes_;
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

Status DeviceBuffer::Allocate(size_t bytes, bool zero) {
  if (p_) cudaFree(p_);
  p_ = nullptr;
  bytes_ = std::max<size_t>(bytes, 4);
  VERISUB_RETURN_IF_ERROR(Check(cudaMalloc(&p_, bytes_), "cudaMalloc"));
  if (zero) return Check(cudaMemset(p_, 0, bytes_), "cudaMemset");
  return Status::Ok();
}

Status TensorDesc::Set(std::vector<int64_t> dims, std::vector<int64_t> strides,
                       cudnnDataType_t type) {
  if (dims.size() > 8) return Unimplemented("rank above 8");
  while (dims.size() < 4) dims.push_back(1);
  if (strides.empty()) {
    strides.assign(dims.size(), 1);
    for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * dims[i + 1];
  }
  while (strides.size() < dims.size()) strides.push_back(1);
  std::vector<int> di(dims.begin(), dims.end()), st(strides.begin(), strides.end());
  return Check(
      cudnnSetTensorNdDescriptor(d, type, static_cast<int>(di.size()), di.data(), st.data()),
      "cudnnSetTensorNdDescriptor");
}

StatusOr<double> MedianLaunchSeconds(cudaStream_t stream, const std::function<Status()>& launch,
                                     const TimingOptions& options, int* launches) {
  cudaEvent_t start = nullptr, stop = nullptr;
  VERISUB_RETURN_IF_ERROR(Check(cudaEventCreate(&start), "cudaEventCreate"));
  Status st = Check(cudaEventCreate(&stop), "cudaEventCreate");
  auto batch = [&](int k) -> StatusOr<double> {  // seconds per launch over k launches
    VERISUB_RETURN_IF_ERROR(Check(cudaEventRecord(start, stream), "cudaEventRecord"));
    for (int i = 0; i < k; ++i) VERISUB_RETURN_IF_ERROR(launch());
    VERISUB_RETURN_IF_ERROR(Check(cudaEventRecord(stop, stream), "cudaEventRecord"));
    VERISUB_RETURN_IF_ERROR(Check(cudaEventSynchronize(stop), "cudaEventSynchronize"));
    float ms = 0;
    VERISUB_RETURN_IF_ERROR(Check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"));
    return ms * 1e-3 / k;
  };
  auto run = [&]() -> StatusOr<double> {
    for (int i = 0; i < options.warmup; ++i) VERISUB_RETURN_IF_ERROR(launch());
    VERISUB_RETURN_IF_ERROR(Check(cudaStreamSynchronize(stream), "warm-up"));
    auto first = batch(1);
    if (!first.ok()) return first.status();
    const int k =
        static_cast<int>(std::clamp(options.batch_seconds / std::max(*first, 1e-7), 1.0, 10000.0));
    std::vector<double> times;
    for (int b = 0; b < std::max(options.batches, 1); ++b) {
      auto t = batch(k);
      if (!t.ok()) return t.status();
      times.push_back(*t);
    }
    std::sort(times.begin(), times.end());
    if (launches) *launches = k * std::max(options.batches, 1);
    return times[times.size() / 2];
  };
  StatusOr<double> result = st.ok() ? run() : StatusOr<double>(st);
  cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  return result;
}

}  // namespace verisub::runtime::cuda_util
