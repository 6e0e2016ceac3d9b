#include "sim/transfer_pool.h"

#include <algorithm>
#include <bit>
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

namespace {
uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64 finaliser over the running hash: cheap and spreads nearby rank numbers well.
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  return h;
}
}  // namespace

uint32_t TransferPool::add(const std::vector<Transfer>& set) {
  uint64_t h = set.size();
  for (const Transfer& t : set)
    h = mix(mix(h, (static_cast<uint64_t>(t.src) << 32) | t.dst), std::bit_cast<uint64_t>(t.bytes));
  const auto [lo, hi] = by_hash_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    const auto stored = get(it->second);
    if (std::equal(stored.begin(), stored.end(), set.begin(), set.end())) return it->second;
  }
  const auto id = static_cast<uint32_t>(sets());
  pool_.insert(pool_.end(), set.begin(), set.end());
  begin_.push_back(pool_.size());
  by_hash_.emplace(h, id);
  return id;
}

}  // namespace cs::sim
