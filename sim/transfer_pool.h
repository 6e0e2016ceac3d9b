// Point-to-point transfers of uneven collectives (all_to_all_v), each distinct set stored once
// (sim/set_pool.h).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/set_pool.h"

namespace cs::sim {

struct Transfer {
  uint32_t src = 0;  // rank index in the collective
  uint32_t dst = 0;
  double bytes = 0;
  bool operator==(const Transfer&) const = default;
};

// A transfer's source and destination GPUs.
struct GpuPair {
  int src = 0;
  int dst = 0;
  auto operator<=>(const GpuPair&) const = default;
};

// Checks and canonicalises transfers over `ranks` ranks: zero-byte transfers are dropped, a pair
// listed more than once becomes one transfer of the summed bytes (one flow per pair, so fair
// sharing does not favour a pair for being listed twice), and the order is by source, then
// destinations rotated from src + 1 (the order plan_collective gives all_to_all), so a uniform
// matrix runs exactly like all_to_all whatever order the caller listed it in.
// Throws std::invalid_argument for a rank >= ranks or bytes negative or not finite. src == dst is
// a local copy.
std::vector<Transfer> normalize_transfers(uint32_t ranks, std::vector<Transfer> transfers);

using TransferPool = SetPool<Transfer>;

}  // namespace cs::sim
