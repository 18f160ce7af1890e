// PhaseTimes (see phase_times.h).
#include "base/phase_times.h"

#include "base/string_printf.h"

namespace verisub::base {

void PhaseTimes::Mark(const std::string& name) {
  const auto now = std::chrono::steady_clock::now();
  Add(name, std::chrono::duration<double>(now - last_).count());
  last_ = now;
}

void PhaseTimes::Add(const std::string& name, double seconds) {
  for (auto& [n, s] : phases_)
    if (n == name) {
      s += seconds;
      return;
    }
  phases_.emplace_back(name, seconds);
}

void PhaseTimes::AddAll(const PhaseTimes& other, const std::string& prefix) {
  for (const auto& [n, s] : other.phases_) Add(prefix + n, s);
}

double PhaseTimes::Seconds(const std::string& name) const {
  for (const auto& [n, s] : phases_)
    if (n == name) return s;
  return 0;
}

double PhaseTimes::Total() const {
  double t = 0;
  for (const auto& p : phases_) t += p.second;
  return t;
}

std::string PhaseTimes::ToString() const {
  std::string out;
  for (const auto& [n, s] : phases_) {
    if (s < 5e-4) continue;
    StringAppendF(&out, "%s%s %.3f s", out.empty() ? "" : ", ", n.c_str(), s);
  }
  return out;
}

}  // namespace verisub::base
