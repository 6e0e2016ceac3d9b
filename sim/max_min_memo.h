// Remembered max-min answers. A pipeline's steady state poses the same sharing problem again and
// again (DeepSeek-V3's 120-micro-batch DualPipe step: 410K reallocations, 1.3K distinct problems).
// The solver is a deterministic function of its problem, so a problem equal bit for bit to one
// solved before gets the stored rates, which are the rates a new solve would compute.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/max_min_fair.h"

namespace cs::sim {

class MaxMinMemo {
 public:
  // The rates of `p`, as MaxMinSolver::solve gives them; valid until the next call.
  const std::vector<double>& solve(const MaxMinProblem& p);

 private:
  struct Entry {
    MaxMinProblem problem;
    std::vector<double> rates;
  };
  static constexpr size_t kMaxStoredBytes = size_t{64} << 20;  // then forget all and start over

  MaxMinSolver solver_;
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;  // problem hash -> entries_ index
  std::vector<Entry> entries_;
  size_t stored_bytes_ = 0;
};

}  // namespace cs::sim
