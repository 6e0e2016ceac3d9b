#include "sim/transfer_pool.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace cs::sim {

std::vector<Transfer> normalize_transfers(uint32_t ranks, std::vector<Transfer> transfers) {
  for (const Transfer& t : transfers) {
    if (t.src >= ranks || t.dst >= ranks)
      throw std::invalid_argument("all_to_all_v: transfer " + std::to_string(t.src) + " -> " +
                                  std::to_string(t.dst) + " names a rank outside 0.." +
                                  std::to_string(ranks) + "-1");
    if (!std::isfinite(t.bytes) || t.bytes < 0)
      throw std::invalid_argument("all_to_all_v: transfer " + std::to_string(t.src) + " -> " +
                                  std::to_string(t.dst) + " has bytes that are negative or not finite");
  }
  std::erase_if(transfers, [](const Transfer& t) { return t.bytes == 0; });
  const auto key = [ranks](const Transfer& t) {
    return std::pair{t.src, (uint64_t{t.dst} + ranks - t.src) % ranks};
  };
  // Stable, so duplicates are summed in the caller's order and the result is deterministic.
  std::stable_sort(transfers.begin(), transfers.end(),
                   [&](const Transfer& a, const Transfer& b) { return key(a) < key(b); });
  size_t out = 0;
  for (size_t i = 0; i < transfers.size(); ++i) {
    if (out > 0 && transfers[out - 1].src == transfers[i].src && transfers[out - 1].dst == transfers[i].dst)
      transfers[out - 1].bytes += transfers[i].bytes;
    else
      transfers[out++] = transfers[i];
  }
  transfers.resize(out);
  return transfers;
}

}  // namespace cs::sim
