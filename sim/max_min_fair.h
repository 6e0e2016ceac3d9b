// Max-min fair rate allocation by progressive filling (water-filling).
// All unfrozen flows rise together; a flow freezes when it reaches its own cap or when a link on
// its path saturates. The result is the unique max-min fair allocation with per-flow caps.
#pragma once

#include <cstdint>
#include <vector>

namespace cs::sim {

struct MaxMinProblem {
  std::vector<double> link_capacity;           // bytes/s, >= 0, one per local link
  std::vector<std::vector<uint32_t>> paths;    // per flow: local link indices (may be empty)
  std::vector<double> flow_cap;                // bytes/s per flow, > 0 or +inf; +inf needs a path
};

// Returns one rate (bytes/s) per flow. Deterministic: ties break by link index, then flow index.
// Scratch buffers live in the solver object so repeated solves do not reallocate.
class MaxMinSolver {
 public:
  const std::vector<double>& solve(const MaxMinProblem& p);

 private:
  std::vector<double> rate_, remaining_;
  std::vector<uint32_t> unfrozen_count_, version_;
  std::vector<std::vector<uint32_t>> link_flows_;
  std::vector<uint32_t> by_cap_;
  std::vector<char> frozen_;
};

}  // namespace cs::sim
