// The calibrated GEMM time: output tiles in waves over the SMs a kernel gets, each tile costing a
// fixed prologue/epilogue plus the larger of its MMA time and the time to stream its operands,
// with the chip's total MMA rate capped (the clock drops when every SM multiplies: our H200
// sweep gives 12.3 TFLOPS per SM on 16-64 SMs but 10.2 on 132), and never faster than the
// compulsory HBM bytes allow. calibrate/ fits the parameters; CalibratedCost evaluates them.
//
//   tile          tm x 128, tm = 64 for m <= 64 (a half tile for decode-like shapes) else 128
//   tiles         groups x ceil(m / tm) x ceil(n / 128), each split in k over up to 2 SMs while
//                 the tiles are fewer than the SMs (cuBLASLt's split-K); waves = ceil(units / sms)
//   per-SM rate   min(sm_tflops, chip_tflops / min(tiles, sms))
//   tile time     tile_us + max(2 tm 128 k / rate, (tm + 128) k in_bytes / sm_load_GBps)
//   time          max(launch_us + waves x tile time, launch_us + bytes / hbm_GBps)
#pragma once

#include <array>

#include "sim/op_graph.h"

namespace cs::hw {

struct GemmModel {
  double launch_us = 0;      // per kernel: launch and the tail of the last wave
  double tile_us = 0;        // per tile: pipeline fill and the BF16 epilogue
  double sm_tflops = 0;      // FP8 MMA rate of one SM while few SMs are busy
  double chip_tflops = 0;    // FP8 MMA rate of the whole chip at its loaded clock
  double sm_load_GBps = 0;   // operand bytes one SM streams from L2/HBM per second
  double hbm_GBps = 0;       // compulsory bytes (A and B once, C once) per second, whole chip

  static constexpr int kParams = 6;
  std::array<double, kParams> to_array() const {
    return {launch_us, tile_us, sm_tflops, chip_tflops, sm_load_GBps, hbm_GBps};
  }
  static GemmModel from_array(const std::array<double, kParams>& a) {
    return {a[0], a[1], a[2], a[3], a[4], a[5]};
  }
  static const char* param_name(int i);
};

// Tensor-core input types other than FP8 run at `mma_scale` of the FP8 rate (the datasheet ratio:
// 1/2 for BF16 and FP16, 1/4 for TF32), and stream dtype_bytes per element.
double gemm_model_us(const GemmModel& p, const sim::GemmShape& g, int sms, double mma_scale = 1.0);
// Tiles of the shape.
int64_t gemm_model_tiles(const sim::GemmShape& g);
// The SMs the kernel can use at most on a GPU of `sms` SMs: its tiles, times the k-split it takes
// when they are fewer than the SMs.
int gemm_model_max_sms(const sim::GemmShape& g, int sms);
// Compulsory HBM bytes: A and B read once, C written once in BF16 (FP32 for FP32 inputs).
double gemm_compulsory_bytes(const sim::GemmShape& g);

}  // namespace cs::hw
