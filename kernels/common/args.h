// Command-line helpers shared by the kernels' programs.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

namespace cs::kernels {

// A whole decimal integer in [lo, hi]; false (out untouched) otherwise.
template <typename Int>
bool parse_int(const std::string& s, long lo, long hi, Int& out) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < lo || v > hi) return false;
  out = static_cast<Int>(v);
  return true;
}

// "a,b,,c" -> {"a", "b", "", "c"}.
inline std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t c = s.find(',', start);
    out.push_back(s.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) return out;
    start = c + 1;
  }
}

}  // namespace cs::kernels
