// Process statistics, read without changing any process state: peak memory, CPU time, and the
// machine's thread budget.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace verisub::base {

// The process's resident-set high-water mark since it started, in bytes (getrusage's
// ru_maxrss; 0 where unavailable). It is never reset: resetting it (/proc/self/clear_refs)
// would change the state of whatever process embeds our libraries. To measure one phase
// alone, run it in a process of its own.
int64_t PeakRssBytes();

// The process's resident set now, in bytes (/proc/self/statm; 0 where unavailable).
int64_t CurrentRssBytes();

// User + system CPU time of the whole process (every thread), in seconds.
double ProcessCpuSeconds();

// The most threads a run may ask for: 4 x the hardware threads (at least 4). More only slows a
// run down, and a count in the thousands exhausts the thread library (issue 17: 100,000 threads
// crashed in TBB's teardown).
int MaxThreads();

// `threads`, or one per hardware thread where it is 0 (at least 1).
int ThreadsOrOnePerCore(int threads);

// InvalidArgument naming `what` unless 0 <= threads <= MaxThreads() (0: one per core).
Status CheckThreadCount(int threads, const std::string& what);

}  // namespace verisub::base
