// Where a job's wall time went: named phases in the order they ran (verisub-opt's and Session's
// load reports). A phase run twice adds up under its name.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace verisub::base {

class PhaseTimes {
 public:
  PhaseTimes() : last_(std::chrono::steady_clock::now()) {}
  // Restarts the clock: the next Mark's phase begins now.
  void Start() { last_ = std::chrono::steady_clock::now(); }
  // Ends the phase that began at the previous Mark (or Start, or construction) and names it.
  void Mark(const std::string& name);
  // Adds `seconds` under `name` (phases timed elsewhere); the Mark clock is not touched.
  void Add(const std::string& name, double seconds);
  // A phase that ran on another thread beside the marked ones: listed, not part of Total().
  void AddBeside(const std::string& name, double seconds);
  // Every phase of `other`, each name prefixed.
  void AddAll(const PhaseTimes& other, const std::string& prefix = "");
  const std::vector<std::pair<std::string, double>>& phases() const { return phases_; }
  double Seconds(const std::string& name) const;  // 0 when never marked
  double Total() const;                           // wall time: the phases beside others left out
  // "import 0.412 s, search 0.281 s, ..., beside: rules 0.5 s" (phases under 0.5 ms left out).
  std::string ToString() const;

 private:
  void AddPhase(const std::string& name, double seconds, bool beside);
  std::chrono::steady_clock::time_point last_;
  std::vector<std::pair<std::string, double>> phases_;
  std::vector<char> beside_;  // per phase
};

}  // namespace verisub::base
