// A hash of 64-bit words: FNV-style over whole words, then a final avalanche. A few instructions a
// word; callers that look values up confirm a hit by comparing them, so a weak hash can cost a
// comparison but never a wrong answer.
#pragma once

#include <cstdint>
#include <span>

namespace cs::sim {

inline uint64_t hash_words(std::span<const uint64_t> words) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t w : words) h = (h ^ w) * 0x100000001b3ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

}  // namespace cs::sim
