// The deadline thread: sleeps until the earliest armed deadline, interrupts overrunning checks.
#include "verify/watchdog.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace verisub::verify {
namespace {

using Clock = std::chrono::steady_clock;

class Watchdog {
 public:
  static Watchdog& Get() {
    static Watchdog watchdog;  // joined at exit
    return watchdog;
  }

  long Arm(Z3_context ctx, Clock::time_point deadline) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
    long id = next_id_++;
    armed_.emplace(id, Entry{ctx, deadline});
    // Deadlines are nearly always later than the one the thread sleeps until: waking it for
    // each check would cost a context switch per check.
    if (deadline < sleeping_until_) cv_.notify_one();
    return id;
  }

  // Under the lock, so that no interrupt reaches a context after its check has disarmed.
  void Disarm(long id) {
    std::lock_guard<std::mutex> lock(mu_);
    armed_.erase(id);
  }

  bool Fired(long id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = armed_.find(id);
    return it != armed_.end() && it->second.fired;
  }

  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct Entry {
    Z3_context ctx;
    Clock::time_point deadline;
    bool fired = false;  // interrupted; stays armed until its check disarms it
  };

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      Clock::time_point earliest = Clock::time_point::max();
      for (const auto& [id, e] : armed_)
        if (!e.fired && e.deadline < earliest) earliest = e.deadline;
      sleeping_until_ = earliest;
      if (earliest == Clock::time_point::max()) {
        cv_.wait(lock);
        continue;
      }
      if (Clock::now() < earliest) {
        cv_.wait_until(lock, earliest);
        continue;
      }
      sleeping_until_ = Clock::time_point::min();  // awake
      for (auto& [id, e] : armed_)
        if (!e.fired && e.deadline <= Clock::now()) {
          Z3_interrupt(e.ctx);
          e.fired = true;
        }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<long, Entry> armed_;
  long next_id_ = 0;
  Clock::time_point sleeping_until_ = Clock::time_point::max();  // min while awake
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

ScopedDeadline::ScopedDeadline(z3::context& ctx, std::chrono::milliseconds timeout)
    : id_(Watchdog::Get().Arm(ctx, Clock::now() + timeout)) {}

ScopedDeadline::~ScopedDeadline() { Watchdog::Get().Disarm(id_); }

bool ScopedDeadline::fired() const { return Watchdog::Get().Fired(id_); }

}  // namespace verisub::verify
