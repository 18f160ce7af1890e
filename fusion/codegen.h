// The Halide code generator behind a plugin boundary: libverisub_codegen.so (halide_codegen.cc)
// links Halide, and through it LLVM (and LLVM's Z3); the runtime half never does. KernelCache
// opens the plugin only to compile a kernel its cache does not hold, so a model whose kernels are
// cached loads neither Halide nor LLVM, and a program that never asks for generated kernels
// carries none of them.
#pragma once

#include <string>

#include "base/status.h"
#include "fusion/subop.h"

namespace verisub::fusion {

class Codegen {
 public:
  virtual ~Codegen() = default;
  // The host's Halide target ("x86-64-linux-avx-avx2-avx512-..."), what kernels compile for.
  virtual std::string HostTarget() = 0;
  // Compiles `g` for `target` (plus no_runtime, no_asserts, no_bounds_query) into the object file
  // `object`, its entry point `name` (and `name`_argv, taking an array of halide_buffer_t*:
  // inputs in order, then the output).
  virtual Status CompileKernel(const SubGraph& g, const std::string& name,
                               const std::string& object, const std::string& target) = 0;
  // Halide's runtime for `target` into the object file `object`.
  virtual Status CompileRuntime(const std::string& object, const std::string& target) = 0;
  // The lowered statement of `g`'s pipeline with its schedule (dumps, tests).
  virtual StatusOr<std::string> Statement(const SubGraph& g, const std::string& target) = 0;
  // `g`'s PTX for an NVIDIA GPU (no GPU needed): see KernelCache::CudaPtx.
  virtual StatusOr<std::string> CudaPtx(const SubGraph& g, const std::string& cuda_target) = 0;
};

// The plugin's one exported symbol: `extern "C" Codegen* verisub_make_codegen()`.
inline constexpr const char* kMakeCodegenSymbol = "verisub_make_codegen";
using MakeCodegenFn = Codegen* (*)();

}  // namespace verisub::fusion
