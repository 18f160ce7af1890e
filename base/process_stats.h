// Process statistics, read without changing any process state: peak memory and CPU time.
#pragma once

#include <cstdint>

namespace verisub::base {

// The process's resident-set high-water mark since it started, in bytes (getrusage's
// ru_maxrss; 0 where unavailable). It is never reset: resetting it (/proc/self/clear_refs)
// would change the state of whatever process embeds our libraries. To measure one phase
// alone, run it in a process of its own.
int64_t PeakRssBytes();

// User + system CPU time of the whole process (every thread), in seconds.
double ProcessCpuSeconds();

}  // namespace verisub::base
