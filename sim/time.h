// Simulated time: an integer count of picoseconds in a strong type.
// Invariant: arithmetic stays in int64 picoseconds (about 106 days of range); doubles appear only
// at the edges (to_seconds, from rates), never inside the event queue.
#pragma once

#include <algorithm>
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace cs::sim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(int64_t v) { return Time(v); }
  static constexpr Time ns(int64_t v) { return Time(v * 1'000); }
  static constexpr Time us(int64_t v) { return Time(v * 1'000'000); }
  static constexpr Time ms(int64_t v) { return Time(v * 1'000'000'000); }
  static constexpr Time s(int64_t v) { return Time(v * 1'000'000'000'000); }
  // Rounds up so that an event never fires early, except that a value within floating-point
  // noise of a whole picosecond (a few ulps, e.g. 1e10 + 2e-6) is that picosecond: the noise of
  // rate x time products must not add 1 ps to closed-form answers.
  // Throws std::overflow_error beyond 2^62 ps (about 53 days, or NaN): such a duration means input
  // far outside what a training step can take (a bandwidth of almost nothing), not a real answer.
  static Time from_seconds_ceil(double seconds) {
    const double v = seconds * 1e12;
    if (!(v >= 0 && v < 4.6e18)) throw std::overflow_error("a duration outside the simulator's range (0 to 53 days)");
    const double nearest = std::nearbyint(v);
    const double noise = std::max(1e-6, 64 * std::numeric_limits<double>::epsilon() * std::fabs(v));
    if (std::fabs(v - nearest) <= noise) return Time(static_cast<int64_t>(nearest));
    return Time(static_cast<int64_t>(std::ceil(v)));
  }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps_count() const { return ps_; }
  constexpr double to_seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double to_us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double to_ms() const { return static_cast<double>(ps_) * 1e-9; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) { ps_ += o.ps_; return *this; }
  constexpr Time& operator-=(Time o) { ps_ -= o.ps_; return *this; }
  constexpr Time operator*(int64_t k) const { return Time(ps_ * k); }

 private:
  constexpr explicit Time(int64_t v) : ps_(v) {}
  int64_t ps_ = 0;
};

// A data rate in bytes per second. Constructed from named units only.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_s(double v) { return Bandwidth(v); }
  static constexpr Bandwidth gbytes_per_s(double v) { return Bandwidth(v * 1e9); }
  constexpr double bytes_per_s() const { return bps_; }
  constexpr double gbytes_per_s() const { return bps_ * 1e-9; }
  constexpr auto operator<=>(const Bandwidth&) const = default;

 private:
  constexpr explicit Bandwidth(double v) : bps_(v) {}
  double bps_ = 0;
};

// Time to move `bytes` at `bw`, rounded up to a whole picosecond.
inline Time transfer_time(double bytes, Bandwidth bw) {
  return Time::from_seconds_ceil(bytes / bw.bytes_per_s());
}

}  // namespace cs::sim
