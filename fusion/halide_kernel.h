// Kernels generated with Halide (Debian's libhalide14): a sub-operator graph becomes a Halide
// pipeline specialised to its shapes, with a schedule of our rules (reductions computed per
// row of the outer axes they leave, the inner axes fused and vectorized, the outer ones fused and
// run in parallel on Halide's thread pool, sized to the caller's OpenMP thread count). A kernel is
// compiled once to an object file, linked into a shared object with the system's C compiler and
// cached on disk under a hash of its text form, the target and the generator's revision; a later
// load of the same kernel only opens the file. The Halide runtime is one shared object per target
// in the same folder, loaded once. Compiling goes through the code generator plugin (codegen.h),
// opened on the first kernel the cache lacks: loading cached kernels needs neither Halide nor LLVM.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "fusion/subop.h"
#include "runtime/kernel_generator.h"

namespace verisub::fusion {

// Bumped when the code generated for one text form changes (schedules, expressions): cached
// kernels of an older revision are not reused.
inline constexpr int kCodegenRevision = 11;

struct KernelCacheOptions {
  // Where kernels are kept ("$XDG_CACHE_HOME/verisub/kernels" or "~/.cache/verisub/kernels" by
  // default, see DefaultKernelDir); created when missing.
  std::string dir;
  // Halide's target string; empty: the host ("x86-64-linux-avx2-avx512-..."), detected by Halide.
  std::string target;
  // The C compiler that links objects into shared objects.
  std::string compiler = "cc";
  // The code generator plugin (libverisub_codegen.so); empty: the installed one, else the one in
  // this build tree.
  std::string codegen;
};

std::string DefaultKernelDir();

class Codegen;  // codegen.h

class KernelCache {
 public:
  explicit KernelCache(KernelCacheOptions options);
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The kernel computing `g` (loaded from the folder, or generated, compiled and stored first).
  // `label` names it in profiles ("gen:ewmul+transpose+ewadd").
  StatusOr<std::shared_ptr<const runtime::GeneratedKernel>> Get(const SubGraph& g,
                                                                const std::string& label);
  int compiled() const { return compiled_; }
  int hits() const { return hits_; }
  // The Halide source of the pipeline `g` would be compiled from, for dumps
  // (`verisub-opt --dump-after fuse`) and tests: the lowered statement with its schedule.
  StatusOr<std::string> Statement(const SubGraph& g);
  // The PTX of `g` generated for an NVIDIA GPU (no GPU needed): every loop of the output and of
  // each reduction mapped to blocks of 256 threads; for the CUDA backend (DESIGN.md §7), which
  // will load it with the driver. `cuda_target` is a Halide target with the cuda feature.
  StatusOr<std::string> CudaPtx(
      const SubGraph& g, const std::string& cuda_target = "x86-64-linux-cuda-cuda_capability_80");

 private:
  Status LoadRuntime();
  Status LoadCodegen();
  // The Halide target to compile for: the option's, else the host's (from the plugin).
  std::string Target();

  KernelCacheOptions options_;
  std::string machine_;  // the CPU's code-relevant features, part of every cache key
  std::unique_ptr<Codegen> codegen_;
  void* runtime_ = nullptr;
  std::map<std::string, std::weak_ptr<const runtime::GeneratedKernel>> loaded_;
  std::mutex mu_;
  int compiled_ = 0, hits_ = 0;
};

}  // namespace verisub::fusion
