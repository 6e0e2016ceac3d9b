// The FP8 GEMMs' slowdown under 1x128 scales on both operands (hw::GemmFp8TilesModel), from
// kernels/torch/fp8_tile_scaling.py: each shape on each SM count under both of DeepSeek's
// scalings, back to back at one clock, so that their ratio carries neither the clock nor the
// profile's own error on the shape.
#pragma once

#include <vector>

#include "calibrate/measurements.h"
#include "hw/gemm_model.h"

namespace cs::calibrate {

struct TileScalingFit {
  double mma_slowdown = 0;  // the median of the pairs' own
  int pairs = 0;            // pairs it is the median of
  int tiles_faster = 0;     // pairs left out: the tiles ran faster than the blocks
  int beyond_max = 0;       // pairs left out: slower than kMaxTileSlowdown explains
  int unpaired = 0;         // cases with no case of the other scaling at their shape and SMs
  // Each pair's time ratio (tiles over blocks), predicted at the median against measured.
  double median_error = 0, worst_error = 0;
};

// The MMA slowdown s at which the model's time of `g` under 1x128 x 1x128 scaling over its time
// under 1x128 x 128x128 equals `ratio` on `sms` SMs: bisection over [1, kMaxSlowdown]. NaN when no
// s there gives it (a ratio under 1, or one above what s = kMaxSlowdown gives).
inline constexpr double kMaxTileSlowdown = 4.0;
double pair_tile_slowdown(const hw::GemmModel& fp8, const sim::GemmShape& g, int sms, double ratio);

// Pairs the cases by name, shape and SMs and takes the median of their slowdowns. Pairs whose
// tiles ran faster than their blocks are cuBLASLt picking a slow kernel for the blocks (k = 512 on
// few SMs, n = 640), not the scaling's cost, and are left out, as are pairs beyond kMaxTileSlowdown.
// UserError when no pair is left, or when a shape, SM count and scaling comes twice.
TileScalingFit fit_tile_scaling(const std::vector<GemmCase>& cases, const hw::GemmModel& fp8);

}  // namespace cs::calibrate
