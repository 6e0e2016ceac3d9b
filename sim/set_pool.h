// Sets of small values, each distinct content stored once and known by an id. A training step
// repeats the same few sets over layers, micro-batches and replicas (a 64-rank MoE dispatch's
// 64 x 63 transfers, a put's images), so collectives hold an id, not a copy per collective or op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "sim/word_hash.h"

namespace cs::sim {

template <typename T>
class SetPool {
  // Hashed and compared as their bytes: T has no padding, and equal sets are equal bit for bit.
  static_assert(std::is_trivially_copyable_v<T>, "sets are hashed and compared as their bytes");

 public:
  // Stores a set (or finds one stored before with the same bytes) and returns its id.
  uint32_t add(std::span<const T> set) {
    const uint64_t h = hash_bytes(std::as_bytes(set));
    const auto [lo, hi] = by_hash_.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      const auto stored = get(it->second);
      if (stored.size() == set.size() && (set.empty() || std::memcmp(stored.data(), set.data(), set.size_bytes()) == 0))
        return it->second;
    }
    const auto id = static_cast<uint32_t>(sets());
    pool_.insert(pool_.end(), set.begin(), set.end());
    begin_.push_back(pool_.size());
    by_hash_.emplace(h, id);
    return id;
  }
  std::span<const T> get(uint32_t id) const { return {pool_.data() + begin_[id], pool_.data() + begin_[id + 1]}; }
  size_t sets() const { return begin_.size() - 1; }
  size_t stored() const { return pool_.size(); }

 private:
  std::vector<T> pool_;
  std::vector<size_t> begin_{0};                         // set i is pool_[begin_[i], begin_[i + 1])
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;  // content hash -> set ids
};

}  // namespace cs::sim
