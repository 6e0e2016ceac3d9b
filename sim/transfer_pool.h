// Point-to-point transfers of uneven collectives (all_to_all_v), stored once per distinct set.
// A 64-rank MoE dispatch lists up to 64 x 63 transfers, and a training step repeats the same
// matrix over layers, micro-batches and replicas; so sets live in one pool, deduplicated by
// content, and a collective holds only a set id (no copy per collective or per op).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace cs::sim {

struct Transfer {
  uint32_t src = 0;  // rank index in the collective
  uint32_t dst = 0;
  double bytes = 0;
  bool operator==(const Transfer&) const = default;
};

// Checks and canonicalises transfers over `ranks` ranks: zero-byte transfers are dropped, a pair
// listed more than once becomes one transfer of the summed bytes (one flow per pair, so fair
// sharing does not favour a pair for being listed twice), and the order is by source, then
// destinations rotated from src + 1 (the order plan_collective gives all_to_all), so a uniform
// matrix runs exactly like all_to_all whatever order the caller listed it in.
// Throws std::invalid_argument for a rank >= ranks or bytes negative or not finite. src == dst is
// a local copy.
std::vector<Transfer> normalize_transfers(uint32_t ranks, std::vector<Transfer> transfers);

class TransferPool {
 public:
  // Stores a set (or finds an equal one stored before) and returns its id.
  uint32_t add(const std::vector<Transfer>& set);
  std::span<const Transfer> get(uint32_t id) const {
    return {pool_.data() + begin_[id], pool_.data() + begin_[id + 1]};
  }
  size_t sets() const { return begin_.size() - 1; }
  size_t stored_transfers() const { return pool_.size(); }

 private:
  std::vector<Transfer> pool_;
  std::vector<size_t> begin_{0};                    // set i is pool_[begin_[i], begin_[i + 1])
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;  // content hash -> set ids
};

}  // namespace cs::sim
