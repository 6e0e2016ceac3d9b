// Reading one overlap window's time stamps: per-operation durations, and which operations ran
// entirely while the other stream was busy too. Host-only, no CUDA.
#pragma once

#include <algorithm>
#include <vector>

namespace cs::kernels::overlap {

// Stamps of one stream in one window: s[0] when the gate opened on it, s[i + 1] after operation i
// (nanoseconds of that GPU's %globaltimer). Empty when the stream had nothing to do.
using Stamps = std::vector<unsigned long long>;

// Durations (us) of the operations of `s`; with `inside` non-empty, only the operations that began
// and ended within [inside.front(), inside.back()] of that other stream (both streams busy).
inline std::vector<double> op_us(const Stamps& s, const Stamps& other = {}) {
  std::vector<double> out;
  const unsigned long long lo = other.empty() ? 0 : std::max(s.front(), other.front());
  const unsigned long long hi = other.empty() ? ~0ull : std::min(s.back(), other.back());
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (s[i - 1] >= lo && s[i] <= hi) out.push_back(static_cast<double>(s[i] - s[i - 1]) * 1e-3);
  }
  return out;
}

// Span (us) from the first stream's start to the last one's end.
inline double makespan_us(const Stamps& a, const Stamps& b) {
  const unsigned long long lo = std::min(a.front(), b.front()), hi = std::max(a.back(), b.back());
  return static_cast<double>(hi - lo) * 1e-3;
}

inline double span_us(const Stamps& s) { return static_cast<double>(s.back() - s.front()) * 1e-3; }

}  // namespace cs::kernels::overlap
