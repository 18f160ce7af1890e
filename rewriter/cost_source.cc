// CostSource: the analytic model, or the measured CPU model with its tables.
#include "rewriter/cost_source.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>

#include "base/file_io.h"
#include "rewriter/rule_source.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/cost/measured_table.h"
#ifdef VERISUB_HAVE_DNNL
#include "runtime/dnnl/measured_cost.h"
#endif
#ifdef VERISUB_HAVE_CUDA_COSTS
#include "runtime/cuda/cuda_cost.h"
#endif

namespace verisub::rewriter {
namespace {

class AnalyticSource : public CostSource {
 public:
  explicit AnalyticSource(runtime::DeviceDescription d) : model_(std::move(d)) {}
  const runtime::CostModel& model() const override { return model_; }
  std::string Summary() const override { return model_.Name(); }
  Status Save() override { return Status::Ok(); }

 private:
  runtime::AnalyticCostModel model_;
};

#if defined(VERISUB_HAVE_DNNL) || defined(VERISUB_HAVE_CUDA_COSTS)

// A measured model (oneDNN's on this CPU, cuDNN's on a GPU) with its tables; `here` is the
// machine's table header, `make` builds the model over the table.
template <class Model>
class MeasuredSource : public CostSource {
 public:
  using MakeModel = std::function<StatusOr<std::unique_ptr<Model>>(runtime::CostTable table)>;

  static StatusOr<std::unique_ptr<CostSource>> Create(const CostOptions& o,
                                                      const runtime::CostTableHeader& here,
                                                      const MakeModel& make) {
    auto src = std::unique_ptr<MeasuredSource>(new MeasuredSource());
    runtime::CostTable table(here);
    std::error_code ec;
    const std::string dir = o.cache_dir.empty() ? base::UserCacheDir() : o.cache_dir;
    const bool cached = dir != "none" && !dir.empty();
    // Parsed copies of the text tables (CostTable::Load) live in the cache too.
    const std::string parsed = cached ? (std::filesystem::path(dir) / "parsed").string() : "";
    if (!o.table_path.empty()) {
      src->save_path_ = o.table_path;
      if (std::filesystem::exists(o.table_path, ec)) {
        auto t = runtime::CostTable::Load(o.table_path, parsed);
        if (!t.ok()) return t.status();
        if (!t->header().SameMachine(here))
          src->notes_ += "; note: the table was measured on " + t->header().Describe() +
                         ", not on this machine (" + here.Describe() + ")";
        table = std::move(t).value();
        src->loaded_ = table.size();
        src->from_ = o.table_path;
      }
    } else {
      std::string shipped =
          o.use_shipped_tables ? FindShippedPath("data/costs/" + here.FileName()) : "";
      std::optional<runtime::CostTable> shipped_table;
      if (!shipped.empty()) {
        auto t = runtime::CostTable::Load(shipped, parsed);
        if (!t.ok()) return t.status();
        if (t->header().SameMachine(here)) {
          shipped_table = std::move(t).value();
          src->from_ = shipped;
        }
      }
      // The per-user cache is taken whole and the shipped table's entries it lacks are added: the
      // cache is the larger (every save writes the shipped entries it began from, and all this
      // user's measurements), so nothing is copied entry by entry but what is new. Where both
      // time the same kernel, this machine's own figure wins.
      if (cached) {
        src->save_path_ = (std::filesystem::path(dir) / here.FileName()).string();
        src->make_dir_ = dir;
        const bool same_as_shipped =
            !shipped.empty() && std::filesystem::equivalent(shipped, src->save_path_, ec);
        if (!same_as_shipped && std::filesystem::is_regular_file(src->save_path_, ec)) {
          auto t = runtime::CostTable::Load(src->save_path_, parsed);
          // A damaged cache is only a cache: it is measured again and replaced.
          if (t.ok() && t->header().SameMachine(here)) {
            table = std::move(t).value();
            src->from_ += (src->from_.empty() ? "" : " + ") + src->save_path_;
          } else if (!t.ok()) {
            src->notes_ += "; note: ignored the cost cache: " + t.status().message();
          }
        }
      }
      if (shipped_table) {
        if (table.size() == 0)
          table = std::move(*shipped_table);
        else
          table.MergeMissing(*shipped_table);
      }
      src->loaded_ = table.size();
    }
    src->initial_size_ = table.size();
    auto model = make(std::move(table));
    if (!model.ok()) return model.status();
    src->model_ = std::move(model).value();
    // The table is saved as it grows (at most every few seconds), so that a run cut short keeps
    // what it measured; Save() at the end writes the rest.
    MeasuredSource* s = src.get();
    src->model_->SetOnMeasured([s] { s->SaveEvery(kSaveEverySeconds); });
    return std::unique_ptr<CostSource>(std::move(src));
  }

  const runtime::CostModel& model() const override { return *model_; }

  std::string Summary() const override {
    auto st = model_->stats();
    std::ostringstream out;
    out << model_->Name() << " (table: " << (from_.empty() ? "new" : from_) << ", " << loaded_
        << " entries; " << st.hits << " answered from it, " << st.measured << " measured in ";
    out.precision(3);
    out << st.measure_seconds << " s, " << st.estimated << " estimated";
    if (st.scaled > 0) out << ", " << st.scaled << " of them scaled from other shapes";
    out << ")" << notes_ << save_note_;
    return out.str();
  }

  // Save() when the last save is `seconds` old; a failure is noted for Summary(), not fatal.
  void SaveEvery(double seconds) {
    std::lock_guard<std::mutex> lock(save_mu_);
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_save_).count() < seconds) return;
    last_save_ = now;
    if (Status st = SaveLocked(); !st.ok() && save_note_.empty())
      save_note_ = "; note: saving while measuring failed: " + st.message();
  }

  Status Save() override {
    std::lock_guard<std::mutex> lock(save_mu_);
    return SaveLocked();
  }

 private:
  Status SaveLocked() {
    runtime::CostTable table = model_->table();
    if (table.size() == initial_size_ || save_path_.empty()) return Status::Ok();
    if (!make_dir_.empty()) {
      // The per-user cache folder is ours to create (never a folder the user named).
      std::error_code ec;
      std::filesystem::create_directories(make_dir_, ec);
      if (ec)
        return FailedPrecondition("cost cache: cannot create '" + make_dir_ + "': " + ec.message());
    }
    return table.Save(save_path_);
  }

  MeasuredSource() = default;
  static constexpr double kSaveEverySeconds = 2.0;
  std::mutex save_mu_;
  std::chrono::steady_clock::time_point last_save_ = std::chrono::steady_clock::now();
  std::string save_note_;
  std::unique_ptr<Model> model_;
  std::string save_path_, make_dir_, from_, notes_;
  int64_t loaded_ = 0, initial_size_ = 0;
};

#endif  // VERISUB_HAVE_DNNL || VERISUB_HAVE_CUDA_COSTS

}  // namespace

StatusOr<std::unique_ptr<CostSource>> CostSource::Create(const CostOptions& options) {
  std::string cost = options.cost;
  if (cost == "auto") {
#ifdef VERISUB_HAVE_DNNL
    cost = "cpu-measured";
#else
    cost = "analytic";
#endif
  }
  if (cost == "analytic") {
    auto d = runtime::DevicePreset(options.device);
    if (!d.ok()) return d.status();
    return std::unique_ptr<CostSource>(new AnalyticSource(*d));
  }
  if (cost == "cpu-measured") {
    if (options.threads < 1)
      return InvalidArgument("cost threads must be at least 1 (got " +
                             std::to_string(options.threads) + ")");
#ifdef VERISUB_HAVE_DNNL
    auto missing = runtime::ParseMissingCost(options.missing);
    if (!missing.ok()) return missing.status();
    runtime::MeasureOptions mo;
    mo.threads = options.threads;
    mo.missing = *missing;
    return MeasuredSource<runtime::MeasuredCpuCostModel>::Create(
        options, runtime::ThisMachine(options.threads), [&](runtime::CostTable table) {
          return StatusOr<std::unique_ptr<runtime::MeasuredCpuCostModel>>(
              std::make_unique<runtime::MeasuredCpuCostModel>(mo, std::move(table)));
        });
#else
    return FailedPrecondition(
        "cost model cpu-measured needs the oneDNN backend, which this build lacks "
        "(install libdnnl-dev and rebuild, or use --cost analytic)");
#endif
  }
  if (cost == "gpu-measured") {
#ifdef VERISUB_HAVE_CUDA_COSTS
    auto missing = runtime::ParseMissingCost(options.missing);
    if (!missing.ok()) return missing.status();
    runtime::CudaCostOptions co;
    co.missing = *missing;
    auto here = runtime::ThisGpu(0);
    if (here.ok())
      return MeasuredSource<runtime::CudaCostModel>::Create(
          options, *here, [&](runtime::CostTable table) {
            return runtime::CudaCostModel::Create(co, std::move(table));
          });
    // No GPU here: a table measured on one answers, when the user names it and does not ask
    // for measurements.
    std::error_code ec;
    if (options.table_path.empty() || *missing == runtime::MissingCost::kMeasure ||
        !std::filesystem::exists(options.table_path, ec))
      return here.status().WithContext(
          "cost model gpu-measured (without a GPU, give a table measured on one: --cost-table "
          "FILE --cost-missing analytic|error)");
    auto table = runtime::CostTable::Load(options.table_path);
    if (!table.ok()) return table.status();
    return MeasuredSource<runtime::CudaCostModel>::Create(
        options, table->header(), [&](runtime::CostTable t) {
          return StatusOr<std::unique_ptr<runtime::CudaCostModel>>(
              runtime::CudaCostModel::FromTable(co, std::move(t)));
        });
#else
    return FailedPrecondition(
        "cost model gpu-measured needs CUDA with cuDNN and cuBLAS, which this build lacks "
        "(install them under /usr/local/cuda and rebuild, or use --cost analytic --device h100)");
#endif
  }
  return InvalidArgument("unknown cost model '" + options.cost +
                         "' (known: auto, analytic, cpu-measured, gpu-measured)");
}

}  // namespace verisub::rewriter
