// A hash of 64-bit words: FNV-style over whole words, then a final avalanche. A few instructions a
// word; callers that look values up confirm a hit by comparing them, so a weak hash can cost a
// comparison but never a wrong answer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace cs::sim {

namespace word_hash_detail {
constexpr uint64_t kBasis = 0xcbf29ce484222325ull, kPrime = 0x100000001b3ull;
inline uint64_t finish(uint64_t h) {
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}
}  // namespace word_hash_detail

inline uint64_t hash_words(std::span<const uint64_t> words) {
  uint64_t h = word_hash_detail::kBasis;
  for (uint64_t w : words) h = (h ^ w) * word_hash_detail::kPrime;
  return word_hash_detail::finish(h);
}

// The same over bytes read as words, the last one zero-padded, and their count.
inline uint64_t hash_bytes(std::span<const std::byte> bytes) {
  uint64_t h = word_hash_detail::kBasis;
  for (size_t at = 0; at < bytes.size(); at += 8) {
    uint64_t w = 0;
    std::memcpy(&w, bytes.data() + at, std::min<size_t>(8, bytes.size() - at));
    h = (h ^ w) * word_hash_detail::kPrime;
  }
  return word_hash_detail::finish((h ^ bytes.size()) * word_hash_detail::kPrime);
}

}  // namespace cs::sim
