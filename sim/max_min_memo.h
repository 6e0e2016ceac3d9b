// Remembered max-min answers. A pipeline's steady state poses the same sharing problem again and
// again (DeepSeek-V3's run: 4.8 M solves, 44 K distinct problems of 7 flows on average).
// The solver is a deterministic function of its problem, so a problem equal bit for bit to one
// solved before gets the stored rates, which are the rates a new solve would compute.
// A problem is looked up as one flat key (its four arrays' bits, one after another) in an
// open-addressed table: one probe and one comparison of contiguous words, where a node-based
// multimap and four separately allocated arrays per entry cost a cache miss each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/max_min_fair.h"

namespace cs::sim {

class MaxMinMemo {
 public:
  static constexpr size_t kDefaultMaxStoredBytes = size_t{64} << 20;
  // Past about `max_stored_bytes` of keys, rates and table (counted by sizes, not capacities)
  // everything is forgotten and storing starts over.
  explicit MaxMinMemo(size_t max_stored_bytes = kDefaultMaxStoredBytes) : max_stored_bytes_(max_stored_bytes) {}
  // The rates of `p`, as MaxMinSolver::solve gives them; valid until the next call.
  const std::vector<double>& solve(const MaxMinProblem& p);
  // Problems remembered now.
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t hash;
    size_t key_begin;  // in keys_
    size_t key_words;
    std::vector<double> rates;
  };
  void forget();
  void grow();

  MaxMinSolver solver_;
  std::vector<uint64_t> key_;        // the problem being looked up
  std::vector<uint64_t> keys_;       // every stored key, one after another
  std::vector<Entry> entries_;
  std::vector<uint32_t> table_;      // entries_ index + 1 per slot, 0 empty; a power of two long
  size_t max_stored_bytes_;
  size_t stored_bytes_ = 0;
};

}  // namespace cs::sim
