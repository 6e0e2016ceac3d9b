#include "hw/gemm_traffic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hw/gemm_model.h"

namespace cs::hw {

namespace {

// Past a million tiles per group (a 128K x 128K output) the walk is not run: compulsory bytes.
constexpr int64_t kMaxTiles = int64_t{1} << 20;

// An LRU cache of whole items by bytes; access() says whether the item was cached.
class LruBytes {
 public:
  explicit LruBytes(double capacity) : capacity_(capacity) {}
  bool access(uint64_t key, double bytes) {
    const auto it = where_.find(key);
    if (it != where_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return true;
    }
    order_.emplace_front(key, bytes);
    where_[key] = order_.begin();
    used_ += bytes;
    return false;
  }
  void evict_to_capacity() {
    while (used_ > capacity_ && !order_.empty()) {
      used_ -= order_.back().second;
      where_.erase(order_.back().first);
      order_.pop_back();
    }
  }

 private:
  double capacity_, used_ = 0;
  std::list<std::pair<uint64_t, double>> order_;  // most recent first
  std::unordered_map<uint64_t, std::list<std::pair<uint64_t, double>>::iterator> where_;
};

}  // namespace

double gemm_dram_bytes(const sim::GemmShape& g, int sms, const GemmTrafficParams& p, GemmTile tile) {
  const double compulsory = gemm_compulsory_bytes(g);
  if (!p.present() || g.m <= 0 || g.n <= 0 || g.k <= 0 || g.groups <= 0) return compulsory;
  const int64_t tile_m = tile.m, tile_n = tile.n;
  const int64_t tm = (g.m + tile_m - 1) / tile_m, tn = (g.n + tile_n - 1) / tile_n;
  const double in = sim::dtype_bytes(g.dtype), out = g.dtype == sim::DType::kFp32 ? 4.0 : 2.0;
  // A panel of the last row or column of tiles holds only what is left of m or n.
  const auto a_panel = [&](int64_t i) { return static_cast<double>(std::min(tile_m, g.m - i * tile_m)) * g.k * in; };
  const auto b_panel = [&](int64_t j) { return static_cast<double>(std::min(tile_n, g.n - j * tile_n)) * g.k * in; };
  const double c_tile = static_cast<double>(tile_m) * static_cast<double>(tile_n) * out;
  const int64_t wave = std::max(1, sms);
  // One group: the groups run one after another and share no panel, so each reads what the
  // first does (the waves that straddle two groups are counted as two).
  const int64_t tiles = tm * tn, band_tiles = tm * p.swizzle_n_blocks;
  if (tiles > kMaxTiles) return compulsory;
  LruBytes l2(p.l2_bytes);
  // Keys: kind in the top 2 bits, then the panel's or output tile's index.
  const auto key = [](uint64_t kind, uint64_t index) { return kind << 62 | index; };
  uint64_t next_c = 0;
  double read = 0;
  // The share of a wave's later reads of a panel that miss (1 - T/S), and the wave's panel keys.
  const double lost = std::isfinite(p.residency_over_skew) ? std::clamp(1 - p.residency_over_skew, 0.0, 1.0) : 0.0;
  std::vector<uint64_t> wave_panels;
  // Expected fetches of the wave's shared panels beyond their first read (see the header).
  const auto refetched = [&] {
    std::sort(wave_panels.begin(), wave_panels.end());
    double bytes = 0;
    for (size_t a = 0; a < wave_panels.size();) {
      size_t b = a;
      while (b < wave_panels.size() && wave_panels[b] == wave_panels[a]) ++b;
      if (const size_t n = b - a; n > 1) {
        const uint64_t index = wave_panels[a] & ((uint64_t{1} << 62) - 1);
        const double panel = (wave_panels[a] >> 62) == 1 ? a_panel(static_cast<int64_t>(index)) : b_panel(static_cast<int64_t>(index));
        bytes += panel * static_cast<double>(n - 1) * std::pow(lost, static_cast<double>(n));
      }
      a = b;
    }
    return bytes;
  };
  for (int64_t first = 0; first < tiles; first += wave) {
    const int64_t last = std::min(tiles, first + wave);
    wave_panels.clear();
    for (int64_t t = first; t < last; ++t) {
      // Raster position t -> (m-tile i, n-tile j); every band but the last is full.
      const int64_t band = t / band_tiles, band_start = band * p.swizzle_n_blocks;
      const int64_t width = std::min<int64_t>(p.swizzle_n_blocks, tn - band_start);
      const int64_t in_band = t - band * band_tiles;
      const int64_t i = in_band / width, j = band_start + in_band % width;
      if (const double b = a_panel(i); !l2.access(key(1, i), b)) read += b;
      if (const double b = b_panel(j); !l2.access(key(2, j), b)) read += b;
      if (lost > 0) {
        wave_panels.push_back(key(1, i));
        wave_panels.push_back(key(2, j));
      }
    }
    if (lost > 0) read += refetched();
    for (int64_t t = first; t < last; ++t) l2.access(key(3, next_c++), c_tile);
    l2.evict_to_capacity();
  }
  read *= g.groups;
  const double written = g.groups * static_cast<double>(g.m) * g.n * out;
  return std::max(compulsory, read + written);
}

}  // namespace cs::hw
