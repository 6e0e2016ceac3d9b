// The calibrated GEMM time: output tiles in waves over the SMs a kernel gets, each tile costing a
// fixed prologue/epilogue plus its MMA time (with one tile shape, streaming its operands costs a
// time proportional to k too, so a separate streaming rate could not be told apart from the
// per-SM MMA rate), with the chip's total MMA rate capped (the clock drops when every SM multiplies: our H200
// sweep gives 12.3 TFLOPS per SM on 16-64 SMs but 10.2 on 132), never faster than the compulsory
// HBM bytes allow, and slower than either bound alone where the two come close (the overlap
// exponent below). A GEMM split in k pays for reducing its slices. calibrate/ fits the
// parameters; CalibratedCost evaluates them.
//
//   tile          the kernel's (GemmTiling): cuBLASLt's 128 x 128 for every shape (with DeepSeek's
//                 block scaling it has no other: calibrate/data/h200/fp8_gemm_tiles_block.json;
//                 its heuristic chose it in all 644 cases of fp8_gemm.json, m = 64 included), or
//                 DeepGEMM's tile choice (deepgemm_tile below: 64 or 128 rows, 16 to 128 columns)
//   tiles         groups x ceil(m / tile m) x ceil(n / tile n); cuBLASLt splits k over 2 SMs when
//                 twice the tiles fit on the SMs and k >= 4096 (its split-K in our sweep: chosen
//                 for k = 7168 and 16384, never for k <= 2048); DeepGEMM never splits k;
//                 waves = ceil(units / sms)
//   per-SM rate   min(sm_tflops, chip_tflops / busy), busy = min(units, sms)
//   tile time     tile_us + 2 (tile m) (tile n) k / rate: a tile of another shape pays the same
//                 fixed time and MMA rate per FLOP as the 128 x 128 it was fitted on (cuBLASLt's
//                 narrow tiles at small m, per-tensor scaled, come out so at 4.4% median:
//                 tests/calibrate/test_fp8_tile_data.cc)
//   time          launch_us + (T^p + H^p)^(1/p) + R when split, with T = waves x tile
//                 time, H = bytes / hbm_GBps and p = hbm_overlap_exponent: a tile's pipeline
//                 overlaps its operand loads with its MMAs, but not perfectly where both take about
//                 as long (each stage waits for the other now and then), so the time rises above
//                 max(T, H) near the roofline's knee and tends to it away from it (p absent or 0:
//                 max(T, H), the model before the exponent was fitted)
//   split-K       a second kernel (cuBLASLt's splitKreduce_kernel, seen under Nsight Compute:
//                 calibrate/data/h200/fp8_gemm_splitk_reduce_under_ncu_*) adds the slices' FP32
//                 partial tiles and writes the output (BF16; FP32 for FP32 inputs). Its grid does not
//                 depend on the partition (264 to 896 blocks over the shapes measured), so it
//                 spreads over every SM of the partition, not only those the tiles used:
//                 R = split_k_us + groups m n (4 split + output bytes) bytes /
//                 (split_k_reduce_GBps_per_sm x SMs of the partition). On the H200 the GEMM kernel
//                 of m = 128, n = 4096, k = 7168 takes 20.3 us on 64 SMs and 20.4 on 128, its
//                 reduction 9.7 and 6.7 us. (split_k_reduce_GBps_per_sm absent or 0: R = split_k_us, the
//                 model before it was seen.) A split-K GEMM therefore holds its whole partition.
#pragma once

#include <array>
#include <cstdint>

#include "sim/op_graph.h"

namespace cs::hw {

// cuBLASLt's output tile (see above).
inline constexpr int64_t kGemmTileM = 128;
inline constexpr int64_t kGemmTileN = 128;

// Whose tile choice the modelled kernel follows.
enum class GemmTiling : uint8_t {
  kCublasLt,  // 128 x 128, split-K as above
  kDeepGemm,  // deepgemm_tile, no split-K
};

struct GemmTile {
  int64_t m = kGemmTileM, n = kGemmTileN;  // rows along the GEMM's m, columns along its n
  bool operator==(const GemmTile&) const = default;
};

// DeepGEMM's tile for an m x n output on `sms` SMs, as its get_best_configs chose in February 2025
// (the kernels of its published H800 table): 64 rows when m <= 64, else 128 (always 128 for the
// grouped contiguous layout); then, of 16 to 128 columns in steps of 8, the fewest waves, then the
// fullest last wave.
GemmTile deepgemm_tile(int64_t m, int64_t n, int groups, int sms, bool grouped_contiguous);

struct GemmModel {
  double launch_us = 0;      // per kernel: launch and the tail of the last wave
  double tile_us = 0;        // per tile: pipeline fill and the BF16 epilogue
  double sm_tflops = 0;      // FP8 MMA rate of one SM while few SMs are busy, operand streaming included
  double chip_tflops = 0;    // FP8 MMA rate of the whole chip at its loaded clock
  double hbm_GBps = 0;       // compulsory bytes (A and B once, C once) per second, whole chip
  double split_k_us = 0;     // per split-K kernel: reducing the k slices' partial tiles
  double hbm_overlap_exponent = 0;  // p above (at least 1; 0: the plain max)
  double split_k_reduce_GBps_per_sm = 0;  // the split-K reduction's GB/s per SM of the partition (0: split_k_us alone)
  GemmTiling tiling = GemmTiling::kCublasLt;  // not a fitted figure: the kernel's (a profile's gemm_tiles)

  static constexpr int kParams = 8;
  static constexpr int kOverlapExponent = 6;  // hbm_overlap_exponent's index in to_array()
  static constexpr int kSplitKReduce = 7;     // split_k_reduce_GBps_per_sm's index
  static constexpr int kRequiredParams = 6;  // a profile without the last two takes the plain max and no reduction rate
  std::array<double, kParams> to_array() const {
    return {launch_us, tile_us, sm_tflops, chip_tflops, hbm_GBps, split_k_us, hbm_overlap_exponent, split_k_reduce_GBps_per_sm};
  }
  static GemmModel from_array(const std::array<double, kParams>& a) {
    return {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]};
  }
  static const char* param_name(int i);
};

// The tile the kernel runs `g` in on `sms` SMs (grouped shapes take DeepGEMM's contiguous layout).
GemmTile gemm_model_tile(const GemmModel& p, const sim::GemmShape& g, int sms);

// How a kernel runs a GEMM: its output tile and the slices k is split into.
struct GemmPlan {
  GemmTile tile;
  int64_t split_k = 1;
};
// The modelled kernel's plan for `g` on `sms` SMs (see above).
GemmPlan gemm_model_plan(const GemmModel& p, const sim::GemmShape& g, int sms);
// gemm_model_us for a given plan, such as the tile and split a measured kernel ran (a split one pays
// the reduction as above).
double gemm_model_planned_us(const GemmModel& p, const sim::GemmShape& g, int sms, const GemmPlan& plan,
                             double mma_scale = 1.0, double clock_slowdown = 1.0);

// Tensor-core input types other than FP8 run at `mma_scale` of the FP8 rate (the datasheet ratio:
// 1/2 for BF16 and FP16, 1/4 for TF32). `clock_slowdown` (fit clock / running clock, >= 0)
// stretches the SM-clock-bound tiles; launch and the HBM bound keep their time.
double gemm_model_us(const GemmModel& p, const sim::GemmShape& g, int sms, double mma_scale = 1.0,
                     double clock_slowdown = 1.0);
// The tiled time T and the HBM time H combined as above.
double gemm_bound_us(const GemmModel& p, double tiled_us, double hbm_us);
// The time of one unit of a wave (a tile, or a tile's k slice when split) on `sms` SMs.
double gemm_model_tile_us(const GemmModel& p, const sim::GemmShape& g, int sms, double mma_scale = 1.0,
                          double clock_slowdown = 1.0);
// Tiles of the shape on `sms` SMs.
int64_t gemm_model_tiles(const GemmModel& p, const sim::GemmShape& g, int sms);
// The SMs the kernel can use at most on a GPU of `sms` SMs: its tiles, or all `sms` when it splits
// k (its reduction spreads over the partition).
int gemm_model_max_sms(const GemmModel& p, const sim::GemmShape& g, int sms);
// The split-K reduction's time on a partition of `sms` SMs (0 when the shape does not split there).
double gemm_model_split_reduce_us(const GemmModel& p, const sim::GemmShape& g, int sms);
// Compulsory HBM bytes: A and B read once, C written once in BF16 (FP32 for FP32 inputs).
double gemm_compulsory_bytes(const sim::GemmShape& g);

}  // namespace cs::hw
