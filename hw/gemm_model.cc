#include "hw/gemm_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

#include "hw/ceil_div.h"

namespace cs::hw {

namespace {
constexpr int64_t kTileM = kGemmTileM;
constexpr int64_t kTileN = kGemmTileN;
constexpr int64_t kSplitK = 2;
constexpr int64_t kMinSplitKDepth = 4096;
}  // namespace

const char* GemmModel::param_name(int i) {
  static constexpr const char* kNames[kParams] = {"launch_us",   "tile_us",      "sm_tflops",
                                                  "chip_tflops", "hbm_GBps",    "split_k_us",
                                                  "hbm_overlap_exponent", "split_k_reduce_GBps_per_sm"};
  return kNames[i];
}

int64_t gemm_model_tiles(const sim::GemmShape& g) {
  return g.groups * ceil_div(g.m, kTileM) * ceil_div(g.n, kTileN);
}

namespace {
int64_t split_k(const sim::GemmShape& g, int64_t tiles, int sms) {
  return tiles * kSplitK <= sms && g.k >= kMinSplitKDepth ? kSplitK : 1;
}
}  // namespace

int gemm_model_max_sms(const sim::GemmShape& g, int sms) {
  const int64_t tiles = gemm_model_tiles(g);
  return split_k(g, tiles, sms) > 1 ? sms : static_cast<int>(std::min<int64_t>(tiles, sms));
}

double gemm_model_split_reduce_us(const GemmModel& p, const sim::GemmShape& g, int sms) {
  sms = std::max(1, sms);
  const int64_t split = split_k(g, gemm_model_tiles(g), sms);
  if (split == 1) return 0.0;
  if (!(p.split_k_reduce_GBps_per_sm > 0)) return p.split_k_us;
  // FP32 partial tiles read, one per slice, and the output written (as gemm_compulsory_bytes).
  const double out = g.dtype == sim::DType::kFp32 ? 4.0 : 2.0;
  const double bytes = static_cast<double>(g.groups) * static_cast<double>(g.m) * static_cast<double>(g.n) *
                       (4.0 * static_cast<double>(split) + out);
  return p.split_k_us + bytes / (p.split_k_reduce_GBps_per_sm * 1e3 * sms);
}

double gemm_compulsory_bytes(const sim::GemmShape& g) {
  const double in = sim::dtype_bytes(g.dtype);
  const double out = g.dtype == sim::DType::kFp32 ? 4.0 : 2.0;
  return g.groups * ((static_cast<double>(g.m) * g.k + static_cast<double>(g.k) * g.n) * in +
                     static_cast<double>(g.m) * g.n * out);
}

double gemm_model_tile_us(const GemmModel& p, const sim::GemmShape& g, int sms, double mma_scale, double clock_slowdown) {
  sms = std::max(1, sms);
  const int64_t tiles = gemm_model_tiles(g);
  // Too few tiles for the SMs and a deep k: the library splits k over two SMs per tile, each
  // computing a k/2 slice.
  const int64_t split = split_k(g, tiles, sms);
  const double busy = static_cast<double>(std::min<int64_t>(tiles * split, sms));
  const double rate_tflops = mma_scale * std::min(p.sm_tflops, p.chip_tflops / busy);
  const double k = static_cast<double>(g.k) / static_cast<double>(split);
  const double mma_us = 2.0 * kTileM * kTileN * k / (rate_tflops * 1e6);
  return (p.tile_us + mma_us) * clock_slowdown;
}

double gemm_bound_us(const GemmModel& p, double tiled_us, double hbm_us) {
  assert(!std::isnan(tiled_us) && !std::isnan(hbm_us));
  assert(p.hbm_overlap_exponent == 0 || p.hbm_overlap_exponent >= 1);  // the parser and the fit see to it
  const double hi = std::max(tiled_us, hbm_us), lo = std::min(tiled_us, hbm_us);
  if (p.hbm_overlap_exponent <= 0 || !(hi > 0) || std::isinf(hi)) return hi;
  // hi (1 + (lo / hi)^p)^(1/p): no overflow for large p, and tending to the max as p grows.
  return hi * std::pow(1.0 + std::pow(lo / hi, p.hbm_overlap_exponent), 1.0 / p.hbm_overlap_exponent);
}

double gemm_model_us(const GemmModel& p, const sim::GemmShape& g, int sms, double mma_scale, double clock_slowdown) {
  sms = std::max(1, sms);
  const int64_t tiles = gemm_model_tiles(g);
  const int64_t split = split_k(g, tiles, sms);
  const double waves = static_cast<double>(ceil_div(tiles * split, sms));
  const double tiled_us = waves * gemm_model_tile_us(p, g, sms, mma_scale, clock_slowdown);
  const double hbm_us = gemm_compulsory_bytes(g) / (p.hbm_GBps * 1e3);
  return p.launch_us + gemm_bound_us(p, tiled_us, hbm_us) + gemm_model_split_reduce_us(p, g, sms);
}

}  // namespace cs::hw
