#include "fusion/halide_kernel.h"

#include <HalideRuntime.h>
#include <dlfcn.h>
#include <omp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/file_io.h"
#include "base/string_printf.h"
#include "fusion/codegen.h"

extern char** environ;

namespace verisub::fusion {

namespace fs = std::filesystem;

std::string DefaultKernelDir() {
  const std::string cache = base::UserCacheDir();
  return cache.empty() ? "" : (fs::path(cache) / "kernels").string();
}

namespace {

// Runs `argv` with posix_spawnp, its output left to ours; the exit status, or an error.
Status Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  if (int e = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ); e != 0)
    return FailedPrecondition("generated kernels: cannot run '" + argv[0] +
                              "' to link them: " + std::strerror(e));
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return FailedPrecondition("generated kernels: '" + argv[0] + " " + argv[1] + " ...' failed");
  return Status::Ok();
}

std::string TempName(const std::string& final_path) {
  static std::atomic<int> counter{0};
  return final_path + ".tmp" + std::to_string(getpid()) + "." + std::to_string(counter++);
}

// Halide's halide_do_par_for on OpenMP: tasks [min, min + size) over the caller's threads (as
// many as ThreadScope set), the first error returned.
int OpenMpParFor(void* user_context, int (*task)(void*, int, uint8_t*), int min, int size,
                 uint8_t* closure) {
  int result = 0;
  if (size == 1) return task(user_context, min, closure);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < size; ++i) {
    const int rc = task(user_context, min + i, closure);
    if (rc != 0) {
#pragma omp critical(verisub_halide_par_for)
      if (result == 0) result = rc;
    }
  }
  return result;
}

// Links `object` into the shared object `so` (written under a temporary name, then renamed).
Status LinkShared(const std::string& compiler, const std::string& object, const std::string& so) {
  const std::string tmp = TempName(so);
  Status st = Spawn({compiler, "-shared", "-o", tmp, object});
  if (st.ok() && std::rename(tmp.c_str(), so.c_str()) != 0)
    st = FailedPrecondition("generated kernels: cannot rename into " + so);
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::remove(object, ec);
  return st;
}

class HalideKernel : public runtime::GeneratedKernel {
 public:
  HalideKernel(void* handle, int (*fn)(void**), SubGraph g, std::string name)
      : handle_(handle), fn_(fn), name_(std::move(name)) {
    for (const std::vector<int64_t>& d : g.input_dims) shapes_.push_back(Shape(d));
    shapes_.push_back(Shape(g.dims(g.output)));
  }
  ~HalideKernel() override { dlclose(handle_); }

  Status Run(const std::vector<const float*>& inputs, float* output) const override {
    if (inputs.size() + 1 != shapes_.size())
      return InternalError(name_ + ": " + std::to_string(inputs.size()) + " inputs given");
    std::vector<halide_buffer_t> bufs(shapes_.size());
    std::vector<void*> args(shapes_.size());
    for (size_t k = 0; k < shapes_.size(); ++k) {
      halide_buffer_t& b = bufs[k];
      b = halide_buffer_t{};
      b.host =
          reinterpret_cast<uint8_t*>(const_cast<float*>(k < inputs.size() ? inputs[k] : output));
      b.type = halide_type_t(halide_type_float, 32);
      b.dimensions = static_cast<int32_t>(shapes_[k].size());
      b.dim = const_cast<halide_dimension_t*>(shapes_[k].data());
      args[k] = &b;
    }
    if (int rc = fn_(args.data()); rc != 0)
      return InternalError(name_ + ": the generated kernel failed (Halide error " +
                           std::to_string(rc) + ")");
    return Status::Ok();
  }
  const std::string& name() const override { return name_; }

 private:
  static std::vector<halide_dimension_t> Shape(const std::vector<int64_t>& dims) {
    std::vector<halide_dimension_t> s;
    int64_t stride = 1;
    for (size_t k = dims.size(); k-- > 0;) {
      s.push_back(
          halide_dimension_t(0, static_cast<int32_t>(dims[k]), static_cast<int32_t>(stride)));
      stride *= dims[k];
    }
    return s;
  }

  void* handle_;
  int (*fn_)(void**);
  std::string name_;
  std::vector<std::vector<halide_dimension_t>> shapes_;
};

}  // namespace

// The CPU's features that decide what code Halide generates for the host: the cache key's
// machine part, known without loading the code generator.
std::string MachineSignature() {
  std::string s = "x86-64";
  __builtin_cpu_init();
#define VERISUB_FEATURE(f) \
  if (__builtin_cpu_supports(f)) s += std::string("-") + f;
  VERISUB_FEATURE("sse4.1")
  VERISUB_FEATURE("avx")
  VERISUB_FEATURE("avx2")
  VERISUB_FEATURE("fma")
  VERISUB_FEATURE("f16c")
  VERISUB_FEATURE("avx512f")
  VERISUB_FEATURE("avx512bw")
  VERISUB_FEATURE("avx512dq")
  VERISUB_FEATURE("avx512vl")
  VERISUB_FEATURE("avx512cd")
  VERISUB_FEATURE("avx512vnni")
  VERISUB_FEATURE("avx512bf16")
#undef VERISUB_FEATURE
  return s;
}

KernelCache::KernelCache(KernelCacheOptions options) : options_(std::move(options)) {
  if (options_.dir.empty()) options_.dir = DefaultKernelDir();
  machine_ = MachineSignature() + (options_.target.empty() ? "" : " target " + options_.target);
}

KernelCache::~KernelCache() = default;  // the runtime stays loaded: kernels may outlive us

Status KernelCache::LoadRuntime() {
  if (runtime_) return Status::Ok();
  if (options_.dir.empty())
    return FailedPrecondition("generated kernels: no cache folder (HOME is not set)");
  std::error_code ec;
  fs::create_directories(options_.dir, ec);
  if (ec)
    return FailedPrecondition("generated kernels: cannot create " + options_.dir + ": " +
                              ec.message());
  const std::string so =
      (fs::path(options_.dir) /
       ("halide_runtime_" + base::Hex64(XXH3_64bits(machine_.data(), machine_.size())) + ".so"))
          .string();
  if (!fs::exists(so)) {
    VERISUB_RETURN_IF_ERROR(LoadCodegen());
    const std::string obj = TempName(so) + ".o";
    Status st = codegen_->CompileRuntime(obj, Target());
    if (!st.ok()) {
      std::error_code ec;
      fs::remove(obj, ec);  // nothing half-written is left in the cache
      return st.WithContext("generated kernels");
    }
    VERISUB_RETURN_IF_ERROR(LinkShared(options_.compiler, obj, so));
  }
  runtime_ = dlopen(so.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!runtime_) return FailedPrecondition(std::string("generated kernels: ") + dlerror());
  // Parallel loops run on the caller's OpenMP threads, the ones oneDNN's kernels run on: two
  // pools on one machine's cores each spin after their loops while the other works (at two
  // threads, BERT's generated kernels had made the whole model 0.89x the library's).
  using ParFor = int (*)(void*, int (*)(void*, int, uint8_t*), int, int, uint8_t*);
  auto set_par_for =
      reinterpret_cast<ParFor (*)(ParFor)>(dlsym(runtime_, "halide_set_custom_do_par_for"));
  if (!set_par_for)
    return FailedPrecondition("generated kernels: " + so + ": no halide_set_custom_do_par_for");
  set_par_for(&OpenMpParFor);
  return Status::Ok();
}

std::string KernelCache::Target() {
  if (!options_.target.empty()) return options_.target;
  return codegen_ ? codegen_->HostTarget() : "host";
}

Status KernelCache::LoadCodegen() {
  if (codegen_) return Status::Ok();
  std::vector<std::string> paths;
  if (!options_.codegen.empty()) {
    paths.push_back(options_.codegen);
  } else {
    paths = {VERISUB_CODEGEN_INSTALLED, VERISUB_CODEGEN_BUILT};
  }
  std::string tried;
  for (const std::string& path : paths) {
    if (!fs::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path + " (missing)";
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += (tried.empty() ? "" : ", ") + std::string(dlerror());
      continue;
    }
    auto make = reinterpret_cast<MakeCodegenFn>(dlsym(handle, kMakeCodegenSymbol));
    if (!make) {
      tried += (tried.empty() ? "" : ", ") + path + " (no " + kMakeCodegenSymbol + ")";
      dlclose(handle);
      continue;
    }
    codegen_.reset(make());  // the plugin stays loaded: its code runs the object's methods
    return Status::Ok();
  }
  return FailedPrecondition("generated kernels: no code generator plugin (" + tried + ")");
}

StatusOr<std::string> KernelCache::Statement(const SubGraph& g) {
  std::lock_guard<std::mutex> lock(mu_);
  VERISUB_RETURN_IF_ERROR(LoadCodegen());
  return codegen_->Statement(g, options_.target.empty() ? codegen_->HostTarget() : options_.target);
}

StatusOr<std::string> KernelCache::CudaPtx(const SubGraph& g, const std::string& cuda_target) {
  std::lock_guard<std::mutex> lock(mu_);
  VERISUB_RETURN_IF_ERROR(LoadCodegen());
  return codegen_->CudaPtx(g, cuda_target);
}

StatusOr<std::shared_ptr<const runtime::GeneratedKernel>> KernelCache::Get(
    const SubGraph& g, const std::string& label) {
  VERISUB_RETURN_IF_ERROR(CheckSubGraph(g));
  std::lock_guard<std::mutex> lock(mu_);
  VERISUB_RETURN_IF_ERROR(LoadRuntime());
  const std::string key_text = SubGraphText(g) + "machine " + machine_ + "\nrevision " +
                               std::to_string(kCodegenRevision) + "\n";
  const std::string key = base::Hex64(XXH3_64bits(key_text.data(), key_text.size()));
  const std::string name = label + "#" + key.substr(0, 8);
  if (auto it = loaded_.find(key); it != loaded_.end())
    if (auto k = it->second.lock()) {
      ++hits_;
      return k;
    }
  const std::string fn_name = "verisub_k" + key;
  const std::string so = (fs::path(options_.dir) / (fn_name + ".so")).string();
  void* handle = fs::exists(so) ? dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (handle) {
    ++hits_;
  } else {  // not cached, or a file that does not load (cut short): compiled anew
    VERISUB_RETURN_IF_ERROR(LoadCodegen());
    const std::string obj = TempName(so) + ".o";
    Status st = codegen_->CompileKernel(g, fn_name, obj, Target());
    if (!st.ok()) {
      std::error_code ec;
      fs::remove(obj, ec);  // nothing half-written is left in the cache
      return st.WithContext("generated kernel " + name);
    }
    VERISUB_RETURN_IF_ERROR(LinkShared(options_.compiler, obj, so));
    ++compiled_;
    handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return FailedPrecondition(std::string("generated kernels: ") + dlerror());
  }
  auto fn = reinterpret_cast<int (*)(void**)>(dlsym(handle, (fn_name + "_argv").c_str()));
  if (!fn) {
    dlclose(handle);
    return FailedPrecondition("generated kernels: " + so + " has no " + fn_name);
  }
  auto kernel = std::make_shared<HalideKernel>(handle, fn, g, name);
  loaded_[key] = kernel;
  return std::shared_ptr<const runtime::GeneratedKernel>(kernel);
}

}  // namespace verisub::fusion
