// Max-min fair rate allocation by progressive filling (water-filling).
// All unfrozen flows rise together; a flow freezes when it reaches its own cap or when a link on
// its path saturates. The result is the unique max-min fair allocation with per-flow caps.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace cs::sim {

// Paths are stored back to back (one allocation however many flows), since the flow network
// rebuilds a problem at every reallocation.
struct MaxMinProblem {
  std::vector<double> link_capacity;   // bytes/s, >= 0, one per local link
  std::vector<uint32_t> path_begin{0};  // flow f crosses path_link[path_begin[f], path_begin[f + 1])
  std::vector<uint32_t> path_link;      // local link indices of every path, flow after flow
  std::vector<double> flow_cap;         // bytes/s per flow, > 0 or +inf; +inf needs a path

  size_t flows() const { return flow_cap.size(); }
  std::span<const uint32_t> path(size_t f) const {
    return {path_link.data() + path_begin[f], path_link.data() + path_begin[f + 1]};
  }
  // Removes every flow and link, keeping the buffers.
  void clear();
  // Appends a flow along `path` (local link indices, possibly empty).
  void add_flow(std::span<const uint32_t> path, double cap);
  // The same problem to the bit: equal sizes and bits of all four arrays, the equality the memo's
  // keys test (0 and -0 differ; a NaN equals its own bits).
  bool same_bits(const MaxMinProblem& other) const;
  void add_flow(std::initializer_list<uint32_t> path, double cap) { add_flow(std::span(path.begin(), path.size()), cap); }
};

// Returns one rate (bytes/s) per flow. Deterministic: ties break by link index, then flow index.
// Scratch buffers live in the solver object so repeated solves do not reallocate.
class MaxMinSolver {
 public:
  const std::vector<double>& solve(const MaxMinProblem& p);

 private:
  struct HeapEntry {
    double share;
    uint32_t link;
    uint32_t version;
  };
  std::vector<double> rate_, remaining_;
  std::vector<uint32_t> unfrozen_count_, version_;
  std::vector<uint32_t> link_begin_, link_flows_;  // flows per link, back to back, in flow order
  std::vector<uint32_t> cursor_;
  std::vector<uint32_t> by_cap_;
  std::vector<uint32_t> touched_;  // links whose share changed since the heap last saw them
  std::vector<char> frozen_, link_touched_;
  std::vector<HeapEntry> heap_;
};

}  // namespace cs::sim
