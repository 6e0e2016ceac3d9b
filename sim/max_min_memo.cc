#include "sim/max_min_memo.h"

#include <cstring>

namespace cs::sim {

namespace {

// FNV-style over whole 64-bit words, then a final avalanche: a few instructions per word, since
// hashing runs at every reallocation. A hit is confirmed by comparing bits, so a weak hash can
// cost a comparison but never a wrong answer.
template <typename T>
uint64_t hash_words(uint64_t h, const std::vector<T>& v) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  const size_t n = v.size() * sizeof(T);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  if (i < n) {
    uint64_t w = 0;
    std::memcpy(&w, bytes + i, n - i);
    h = (h ^ w) * 0x100000001b3ull;
  }
  return (h ^ n) * 0x9e3779b97f4a7c15ull;
}

// Over bit patterns, like the comparison below: 0.0 and -0.0 are different problems here.
uint64_t hash_of(const MaxMinProblem& p) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = hash_words(h, p.link_capacity);
  h = hash_words(h, p.flow_cap);
  h = hash_words(h, p.path_begin);
  h = hash_words(h, p.path_link);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool same(const MaxMinProblem& a, const MaxMinProblem& b) {
  return same_bits(a.link_capacity, b.link_capacity) && same_bits(a.flow_cap, b.flow_cap) &&
         same_bits(a.path_begin, b.path_begin) && same_bits(a.path_link, b.path_link);
}

}  // namespace

const std::vector<double>& MaxMinMemo::solve(const MaxMinProblem& p) {
  const uint64_t h = hash_of(p);
  const auto [lo, hi] = by_hash_.equal_range(h);
  for (auto it = lo; it != hi; ++it)
    if (same(entries_[it->second].problem, p)) return entries_[it->second].rates;

  const std::vector<double>& rates = solver_.solve(p);
  const size_t bytes = (p.link_capacity.size() + p.flow_cap.size() + rates.size()) * sizeof(double) +
                       (p.path_begin.size() + p.path_link.size()) * sizeof(uint32_t) + sizeof(Entry);
  if (stored_bytes_ + bytes > kMaxStoredBytes) {
    // Memory stays bounded when problems never repeat; forgetting changes no result.
    by_hash_.clear();
    entries_.clear();
    stored_bytes_ = 0;
  }
  stored_bytes_ += bytes;
  by_hash_.emplace(h, static_cast<uint32_t>(entries_.size()));
  entries_.push_back(Entry{p, rates});
  return rates;
}

}  // namespace cs::sim
