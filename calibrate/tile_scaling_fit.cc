#include "calibrate/tile_scaling_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "calibrate/fit_stats.h"
#include "hw/user_error.h"

namespace cs::calibrate {

namespace {
double model_ratio(const hw::GemmModel& fp8, sim::GemmShape g, int sms, double slowdown) {
  g.scaling = sim::Fp8Scaling::kWeightBlocks;
  const double blocks = hw::gemm_model_us(fp8, g, sms);
  return hw::gemm_model_us(fp8, g, sms, 1.0 / slowdown) / blocks;
}
}  // namespace

double pair_tile_slowdown(const hw::GemmModel& fp8, const sim::GemmShape& g, int sms, double ratio) {
  if (!(ratio >= 1) || model_ratio(fp8, g, sms, kMaxTileSlowdown) < ratio) return std::numeric_limits<double>::quiet_NaN();
  double lo = 1, hi = kMaxTileSlowdown;  // the model's ratio rises with s
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (model_ratio(fp8, g, sms, mid) < ratio ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

TileScalingFit fit_tile_scaling(const std::vector<GemmCase>& cases, const hw::GemmModel& fp8) {
  using Key = std::tuple<std::string, int64_t, int64_t, int64_t, int, int>;
  std::map<Key, const GemmCase*> blocks, tiles;
  for (const GemmCase& c : cases) {
    const Key key{c.name, c.shape.m, c.shape.n, c.shape.k, c.shape.groups, c.sms};
    if (!(c.shape.scaling == sim::Fp8Scaling::kTiles ? tiles : blocks).emplace(key, &c).second)
      throw hw::UserError("calibrate fit", 0, 0,
                          "FP8 GEMM " + c.key() + " on " + std::to_string(c.sms) + " SMs measured twice: one case per scaling, shape and SM count");
  }
  struct Pair {
    const GemmCase* tiles;
    double ratio, slowdown;
  };
  std::vector<Pair> used;
  TileScalingFit f;
  for (const auto& [key, t] : tiles) {
    const auto b = blocks.find(key);
    if (b == blocks.end()) {
      ++f.unpaired;
      continue;
    }
    const double ratio = t->time_us / b->second->time_us;
    const double s = pair_tile_slowdown(fp8, t->shape, t->sms, ratio);
    if (std::isnan(s)) {
      ++(ratio < 1 ? f.tiles_faster : f.beyond_max);
      continue;
    }
    used.push_back({t, ratio, s});
  }
  for (const auto& [key, b] : blocks) f.unpaired += !tiles.count(key);
  if (used.empty())
    throw hw::UserError("calibrate fit", 0, 0,
                        "no FP8 GEMM measured under both scalings with the 1x128 x 1x128 one slower "
                        "(kernels/torch/fp8_tile_scaling.py's JSON)");
  std::vector<double> s;
  for (const Pair& p : used) s.push_back(p.slowdown);
  f.mma_slowdown = median(s);
  f.pairs = static_cast<int>(used.size());
  std::vector<double> err;
  for (const Pair& p : used) err.push_back(std::abs(model_ratio(fp8, p.tiles->shape, p.tiles->sms, f.mma_slowdown) / p.ratio - 1));
  f.median_error = median(err);
  f.worst_error = *std::max_element(err.begin(), err.end());
  return f;
}

}  // namespace cs::calibrate
