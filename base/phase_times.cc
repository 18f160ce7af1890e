// PhaseTimes (see phase_times.h).
#include "base/phase_times.h"

#include "base/string_printf.h"

namespace verisub::base {

void PhaseTimes::Mark(const std::string& name) {
  const auto now = std::chrono::steady_clock::now();
  Add(name, std::chrono::duration<double>(now - last_).count());
  last_ = now;
}

void PhaseTimes::Add(const std::string& name, double seconds) { AddPhase(name, seconds, false); }

void PhaseTimes::AddBeside(const std::string& name, double seconds) {
  AddPhase(name, seconds, true);
}

void PhaseTimes::AddPhase(const std::string& name, double seconds, bool beside) {
  for (size_t i = 0; i < phases_.size(); ++i)
    if (phases_[i].first == name) {
      phases_[i].second += seconds;
      return;
    }
  phases_.emplace_back(name, seconds);
  beside_.push_back(beside);
}

void PhaseTimes::AddAll(const PhaseTimes& other, const std::string& prefix) {
  for (size_t i = 0; i < other.phases_.size(); ++i)
    AddPhase(prefix + other.phases_[i].first, other.phases_[i].second, other.beside_[i]);
}

double PhaseTimes::Seconds(const std::string& name) const {
  for (const auto& [n, s] : phases_)
    if (n == name) return s;
  return 0;
}

double PhaseTimes::Total() const {
  double t = 0;
  for (size_t i = 0; i < phases_.size(); ++i)
    if (!beside_[i]) t += phases_[i].second;
  return t;
}

std::string PhaseTimes::ToString() const {
  std::string out, beside;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const auto& [n, s] = phases_[i];
    if (s < 5e-4) continue;
    std::string& to = beside_[i] ? beside : out;
    StringAppendF(&to, "%s%s %.3f s", to.empty() ? "" : ", ", n.c_str(), s);
  }
  if (!beside.empty()) out += (out.empty() ? "beside: " : "; beside: ") + beside;
  return out;
}

}  // namespace verisub::base
