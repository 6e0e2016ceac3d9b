#include "sim/max_min_memo.h"

#include <cstring>

#include "sim/word_hash.h"

namespace cs::sim {

namespace {

// Appends the bits of `v` as whole 64-bit words (the last one zero-padded).
template <typename T>
void append_words(std::vector<uint64_t>& key, const std::vector<T>& v) {
  const size_t bytes = v.size() * sizeof(T);
  const size_t at = key.size();
  key.resize(at + (bytes + 7) / 8, 0);
  if (bytes > 0) std::memcpy(key.data() + at, v.data(), bytes);
}

// The key: the four sizes, then the arrays' bits (0.0 and -0.0 are different problems here).
void make_key(const MaxMinProblem& p, std::vector<uint64_t>& key) {
  key.clear();
  key.push_back(p.link_capacity.size() | uint64_t{p.flow_cap.size()} << 32);
  key.push_back(p.path_begin.size() | uint64_t{p.path_link.size()} << 32);
  append_words(key, p.link_capacity);
  append_words(key, p.flow_cap);
  append_words(key, p.path_begin);
  append_words(key, p.path_link);
}

}  // namespace

void MaxMinMemo::forget() {
  keys_.clear();
  entries_.clear();
  table_.assign(table_.size(), 0);
  stored_bytes_ = 0;
}

void MaxMinMemo::grow() {
  table_.assign(table_.empty() ? 1024 : table_.size() * 2, 0);
  const size_t mask = table_.size() - 1;
  for (size_t e = 0; e < entries_.size(); ++e) {
    size_t i = entries_[e].hash & mask;
    while (table_[i] != 0) i = (i + 1) & mask;
    table_[i] = static_cast<uint32_t>(e + 1);
  }
}

const std::vector<double>& MaxMinMemo::solve(const MaxMinProblem& p) {
  make_key(p, key_);
  const uint64_t h = hash_words(key_);  // runs at every reallocation
  if (table_.empty()) grow();
  size_t mask = table_.size() - 1;
  size_t i = h & mask;
  for (; table_[i] != 0; i = (i + 1) & mask) {
    const Entry& e = entries_[table_[i] - 1];
    if (e.hash == h && e.key_words == key_.size() &&
        std::memcmp(keys_.data() + e.key_begin, key_.data(), key_.size() * sizeof(uint64_t)) == 0)
      return e.rates;
  }

  const std::vector<double>& rates = solver_.solve(p);
  const size_t bytes = (key_.size() + rates.size()) * sizeof(uint64_t) + sizeof(Entry) + 2 * sizeof(uint32_t);
  if (stored_bytes_ + bytes > max_stored_bytes_) {
    // Memory stays bounded when problems never repeat; forgetting changes no result.
    forget();
    i = h & mask;
  }
  if (2 * (entries_.size() + 1) > table_.size()) {  // at most half full: probes stay short
    grow();
    mask = table_.size() - 1;
    i = h & mask;
    while (table_[i] != 0) i = (i + 1) & mask;
  }
  stored_bytes_ += bytes;
  entries_.push_back(Entry{h, keys_.size(), key_.size(), rates});
  keys_.insert(keys_.end(), key_.begin(), key_.end());
  table_[i] = static_cast<uint32_t>(entries_.size());
  return entries_.back().rates;
}

}  // namespace cs::sim
