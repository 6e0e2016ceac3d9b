// Integer division rounding up, for counting tiles, waves and switches.
#pragma once

#include <cstdint>

namespace cs::hw {

// ceil(a / b) for a >= 0 and b > 0.
constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace cs::hw
