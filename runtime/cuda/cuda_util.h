// What the measured GPU cost model and the CUDA backend share: status checks of CUDA, cuDNN and
// cuBLAS calls, owning wrappers of device memory and cuDNN descriptors, and the one way both
// time a kernel (CUDA events around batches of launches, the median batch).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace verisub::runtime::cuda_util {

Status Check(cudaError_t e, const char* what);
Status Check(cudnnStatus_t e, const char* what);
Status Check(cublasStatus_t e, const char* what);

// cuBLAS and cuBLASLt are opened on first use (dlopen), not linked: their libraries' static
// initializers take about 0.4 s of every process start, CPU-only runs included (measured on the
// 2-core machine: an empty program linked with them starts in 415 ms, with cuDNN and the CUDA
// runtime alone in 10 ms). The functions the backend and the cost model call, by the names the
// libraries export (cublas_v2.h maps cublasCreate to cublasCreate_v2 and so on).
#define VERISUB_CUBLAS_FUNCTIONS(X)       \
  X(cublasCreate_v2)                      \
  X(cublasDestroy_v2)                     \
  X(cublasSetStream_v2)                   \
  X(cublasSgemmStridedBatched)            \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtMatmul)                       \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)

struct CublasApi {
#define VERISUB_CUBLAS_MEMBER(f) decltype(&::f) f = nullptr;
  VERISUB_CUBLAS_FUNCTIONS(VERISUB_CUBLAS_MEMBER)
#undef VERISUB_CUBLAS_MEMBER
};

// The functions, loaded once per process; an error naming the library or the symbol missing.
// Needs no GPU (tests check the loading on any machine).
StatusOr<const CublasApi*> Cublas();
// The loaded functions, for code that runs only after Cublas() succeeded (destructors of what
// was created with them).
const CublasApi& LoadedCublas();

// Device memory freed with the object.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();
  // `zero`: cleared after allocation.
  Status Allocate(size_t bytes, bool zero = true);
  float* f() const { return static_cast<float*>(p_); }
  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// cuDNN descriptors, destroyed with the object.
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { cudnnCreateTensorDescriptor(&d); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  // Dimensions (padded with trailing 1s to rank 4) with the given strides, or packed ones.
  Status Set(std::vector<int64_t> dims, std::vector<int64_t> strides = {},
             cudnnDataType_t type = CUDNN_DATA_FLOAT);
};
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc() { cudnnCreateFilterDescriptor(&d); }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc() { cudnnCreateConvolutionDescriptor(&d); }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};
struct ActDesc {
  cudnnActivationDescriptor_t d = nullptr;
  ActDesc() { cudnnCreateActivationDescriptor(&d); }
  ~ActDesc() { cudnnDestroyActivationDescriptor(d); }
  ActDesc(const ActDesc&) = delete;
  ActDesc& operator=(const ActDesc&) = delete;
};
struct PoolDesc {
  cudnnPoolingDescriptor_t d = nullptr;
  PoolDesc() { cudnnCreatePoolingDescriptor(&d); }
  ~PoolDesc() { cudnnDestroyPoolingDescriptor(d); }
  PoolDesc(const PoolDesc&) = delete;
  PoolDesc& operator=(const PoolDesc&) = delete;
};
struct OpDesc {
  cudnnOpTensorDescriptor_t d = nullptr;
  OpDesc() { cudnnCreateOpTensorDescriptor(&d); }
  ~OpDesc() { cudnnDestroyOpTensorDescriptor(d); }
  OpDesc(const OpDesc&) = delete;
  OpDesc& operator=(const OpDesc&) = delete;
};

// Times `launch` (which enqueues work on `stream`): `warmup` launches, then one launch to size
// the batches (as many launches as fill `batch_seconds`, 1 to 10000), then `batches` batches
// timed with CUDA events; the median seconds per launch. `launches` (optional) receives the
// number of timed launches.
struct TimingOptions {
  int warmup = 3;
  int batches = 5;
  double batch_seconds = 0.002;
};
StatusOr<double> MedianLaunchSeconds(cudaStream_t stream, const std::function<Status()>& launch,
                                     const TimingOptions& options, int* launches = nullptr);

}  // namespace verisub::runtime::cuda_util
