// Activation memory planning for a prepared model: every buffer is live over a range of steps,
// and buffers whose ranges overlap get disjoint bytes of one arena. No GPU needed: the CUDA
// backend allocates the arena once, and tests check plans on the CPU.
#pragma once

#include <cstdint>
#include <vector>

namespace verisub::runtime::cuda_backend {

struct ArenaBuffer {
  int64_t bytes = 0;
  int first = 0;  // the first step that writes it (or 0 for graph inputs)
  int last = 0;   // the last step that reads it (the step count for graph outputs)
};

struct ArenaPlan {
  std::vector<int64_t> offsets;  // per buffer, a multiple of the alignment
  int64_t bytes = 0;             // the arena's size
};

// Places the largest buffers first, each in the smallest gap (lowest offset on ties) among the
// buffers already placed that are live at the same time. Deterministic: ties go by index.
ArenaPlan PlanArena(const std::vector<ArenaBuffer>& buffers, int64_t alignment = 256);

// True when no two buffers live at the same step share a byte and every buffer fits.
bool PlanIsValid(const std::vector<ArenaBuffer>& buffers, const ArenaPlan& plan);

}  // namespace verisub::runtime::cuda_backend
