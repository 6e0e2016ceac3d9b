#include "sim/max_min_memo.h"

#include <bit>
#include <cstring>

namespace cs::sim {

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

// Over bit patterns, like the comparison below: 0.0 and -0.0 are different problems here.
uint64_t hash_of(const MaxMinProblem& p) {
  uint64_t h = mix(p.link_capacity.size(), p.flows());
  for (double c : p.link_capacity) h = mix(h, std::bit_cast<uint64_t>(c));
  for (double c : p.flow_cap) h = mix(h, std::bit_cast<uint64_t>(c));
  for (uint32_t b : p.path_begin) h = mix(h, b);
  for (uint32_t l : p.path_link) h = mix(h, l);
  return h;
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
