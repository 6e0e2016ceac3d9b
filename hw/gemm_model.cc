#include "hw/gemm_model.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstdint>

#include "hw/ceil_div.h"

namespace cs::hw {

namespace {
constexpr int64_t kSplitK = 2;
constexpr int64_t kMinSplitKDepth = 4096;
}  // namespace

namespace {
GemmTile choose_deepgemm_tile(int64_t m, int64_t n, int groups, int sms, bool grouped_contiguous) {
  const int64_t block_m = grouped_contiguous || m > 64 ? 128 : 64;
  const auto blocks = [&](int64_t bn) { return ceil_div(m, block_m) * ceil_div(n, bn) * groups; };
  const auto waves = [&](int64_t bn) { return ceil_div(blocks(bn), sms); };
  const auto last_wave = [&](int64_t bn) { return blocks(bn) % sms == 0 ? sms : blocks(bn) % sms; };
  int64_t best = 16;
  for (int64_t bn = 24; bn <= 128; bn += 8)
    if (waves(bn) < waves(best) || (waves(bn) == waves(best) && last_wave(bn) > last_wave(best))) best = bn;
  return {block_m, best};
}
}  // namespace

GemmTile deepgemm_tile(int64_t m, int64_t n, int groups, int sms, bool grouped_contiguous) {
  sms = std::max(1, sms);
  // A step prices the same few shapes at every clock step (the search was 10% of a DeepSeek-V3
  // run): the choices are remembered per thread, in a small table indexed by the shape.
  struct Entry {
    int64_t m = -1, n = -1;
    int groups = 0, sms = 0;
    bool contiguous = false;
    GemmTile tile;
  };
  thread_local std::array<Entry, 64> remembered;
  const uint64_t h = (static_cast<uint64_t>(m) * 0x9E3779B97F4A7C15ull) ^
                     (static_cast<uint64_t>(n) * 0xC2B2AE3D27D4EB4Full) ^ (static_cast<uint64_t>(groups) << 20) ^
                     static_cast<uint64_t>(sms) ^ (grouped_contiguous ? 1ull << 40 : 0);
  Entry& e = remembered[(h ^ (h >> 29)) % remembered.size()];
  if (e.m != m || e.n != n || e.groups != groups || e.sms != sms || e.contiguous != grouped_contiguous)
    e = {m, n, groups, sms, grouped_contiguous, choose_deepgemm_tile(m, n, groups, sms, grouped_contiguous)};
  return e.tile;
}

GemmTile gemm_model_tile(const GemmModel& p, const sim::GemmShape& g, int sms) {
  if (p.tiling == GemmTiling::kDeepGemm) return deepgemm_tile(g.m, g.n, static_cast<int>(g.groups), sms, g.groups > 1);
  return {};
}

const char* GemmModel::param_name(int i) {
  static constexpr const char* kNames[kParams] = {"launch_us",   "tile_us",      "sm_tflops",
                                                  "chip_tflops", "hbm_GBps",    "split_k_us",
                                                  "hbm_overlap_exponent", "split_k_reduce_GBps_per_sm"};
  return kNames[i];
}

namespace {
int64_t tiles_of(const sim::GemmShape& g, const GemmTile& t) {
  return g.groups * ceil_div(g.m, t.m) * ceil_div(g.n, t.n);
}

double split_reduce_us(const GemmModel& p, const sim::GemmShape& g, int sms, int64_t split) {
  if (split == 1) return 0.0;
  if (!(p.split_k_reduce_GBps_per_sm > 0)) return p.split_k_us;
  // FP32 partial tiles read, one per slice, and the output written (as gemm_compulsory_bytes).
  const double out = g.dtype == sim::DType::kFp32 ? 4.0 : 2.0;
  const double bytes = static_cast<double>(g.groups) * static_cast<double>(g.m) * static_cast<double>(g.n) *
                       (4.0 * static_cast<double>(split) + out);
  return p.split_k_us + bytes / (p.split_k_reduce_GBps_per_sm * 1e3 * sms);
}

double planned_tile_us(const GemmModel& p, const sim::GemmShape& g, int sms, const GemmPlan& plan, double mma_scale,
                       double clock_slowdown) {
  const double busy = static_cast<double>(std::min<int64_t>(tiles_of(g, plan.tile) * plan.split_k, sms));
  const double rate_tflops = mma_scale * std::min(p.sm_tflops, p.chip_tflops / busy);
  const double k = static_cast<double>(g.k) / static_cast<double>(plan.split_k);
  const double mma_us = 2.0 * static_cast<double>(plan.tile.m * plan.tile.n) * k / (rate_tflops * 1e6);
  return (p.tile_us + mma_us) * clock_slowdown;
}
}  // namespace

GemmPlan gemm_model_plan(const GemmModel& p, const sim::GemmShape& g, int sms) {
  sms = std::max(1, sms);
  GemmPlan plan{gemm_model_tile(p, g, sms), 1};
  // Too few tiles for the SMs and a deep k: cuBLASLt splits k over two SMs per tile, each
  // computing a k/2 slice.
  if (p.tiling == GemmTiling::kCublasLt && tiles_of(g, plan.tile) * kSplitK <= sms && g.k >= kMinSplitKDepth)
    plan.split_k = kSplitK;
  return plan;
}

int64_t gemm_model_tiles(const GemmModel& p, const sim::GemmShape& g, int sms) {
  return tiles_of(g, gemm_model_tile(p, g, sms));
}

int gemm_model_max_sms(const GemmModel& p, const sim::GemmShape& g, int sms) {
  const GemmPlan plan = gemm_model_plan(p, g, sms);
  return plan.split_k > 1 ? sms : static_cast<int>(std::min<int64_t>(tiles_of(g, plan.tile), sms));
}

double gemm_model_split_reduce_us(const GemmModel& p, const sim::GemmShape& g, int sms) {
  sms = std::max(1, sms);
  return split_reduce_us(p, g, sms, gemm_model_plan(p, g, sms).split_k);
}

double gemm_compulsory_bytes(const sim::GemmShape& g) {
  const double in = sim::dtype_bytes(g.dtype);
  const double out = g.dtype == sim::DType::kFp32 ? 4.0 : 2.0;
  return g.groups * ((static_cast<double>(g.m) * g.k + static_cast<double>(g.k) * g.n) * in +
                     static_cast<double>(g.m) * g.n * out);
}

double gemm_model_tile_us(const GemmModel& p, const sim::GemmShape& g, int sms, double mma_scale, double clock_slowdown) {
  sms = std::max(1, sms);
  return planned_tile_us(p, g, sms, gemm_model_plan(p, g, sms), mma_scale, clock_slowdown);
}

double gemm_bound_us(const GemmModel& p, double tiled_us, double hbm_us) {
  assert(!std::isnan(tiled_us) && !std::isnan(hbm_us));
  assert(p.hbm_overlap_exponent == 0 || p.hbm_overlap_exponent >= 1);  // the parser and the fit see to it
  const double hi = std::max(tiled_us, hbm_us), lo = std::min(tiled_us, hbm_us);
  if (p.hbm_overlap_exponent <= 0 || !(hi > 0) || std::isinf(hi)) return hi;
  // hi (1 + (lo / hi)^p)^(1/p): no overflow for large p, and tending to the max as p grows.
  return hi * std::pow(1.0 + std::pow(lo / hi, p.hbm_overlap_exponent), 1.0 / p.hbm_overlap_exponent);
}

double gemm_model_planned_us(const GemmModel& p, const sim::GemmShape& g, int sms, const GemmPlan& plan,
                             double mma_scale, double clock_slowdown) {
  sms = std::max(1, sms);
  const double waves = static_cast<double>(ceil_div(tiles_of(g, plan.tile) * plan.split_k, sms));
  const double tiled_us = waves * planned_tile_us(p, g, sms, plan, mma_scale, clock_slowdown);
  const double hbm_us = gemm_compulsory_bytes(g) / (p.hbm_GBps * 1e3);
  return p.launch_us + gemm_bound_us(p, tiled_us, hbm_us) + split_reduce_us(p, g, sms, plan.split_k);
}

double gemm_model_us(const GemmModel& p, const sim::GemmShape& g, int sms, double mma_scale, double clock_slowdown) {
  return gemm_model_planned_us(p, g, sms, gemm_model_plan(p, g, sms), mma_scale, clock_slowdown);
}

}  // namespace cs::hw
