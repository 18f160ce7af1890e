// A wall-clock deadline for Z3 checks, kept by one thread for the whole process.
//
// Z3's own `timeout` parameter starts a timer per check and, when the check ends early (nearly
// always: the resource limit decides first), spins until the timer's worker thread has noticed;
// on a machine whose cores are all proving, that costs ~10% of the verifier's time. Here a single
// thread sleeps until the earliest deadline and interrupts (Z3_interrupt) the context whose
// check has overrun it; a check that ends first simply disarms its deadline.
#ifndef VERISUB_VERIFY_WATCHDOG_H_
#define VERISUB_VERIFY_WATCHDOG_H_

#include <z3++.h>

#include <chrono>

namespace verisub::verify {

// Arms a deadline for checks in `ctx` for the lifetime of the object (one per running check).
class ScopedDeadline {
 public:
  ScopedDeadline(z3::context& ctx, std::chrono::milliseconds timeout);
  ~ScopedDeadline();
  ScopedDeadline(const ScopedDeadline&) = delete;
  ScopedDeadline& operator=(const ScopedDeadline&) = delete;

  // Whether the deadline passed and the context was interrupted. Z3 may keep an interrupted
  // context cancelled, so its owner should not use it for another query.
  bool fired() const;

 private:
  long id_;
};

}  // namespace verisub::verify

#endif  // VERISUB_VERIFY_WATCHDOG_H_
