// The SM clock under the board's power limit. Hopper lowers its SM clock whenever the board draws
// more than its limit (NVML reason "SW power cap"), so the clock a GEMM runs at depends on what
// the GPU ran over the last tens of milliseconds. Measured on H100 (kernels/torch/power_response.py):
// back-to-back BF16 GEMMs on 132 SMs run at 1350 MHz, on 32 SMs at the full 1980 MHz; 10 ms bursts
// with 10 ms gaps stay near the full clock; from idle the clock falls about 30 ms into a load.
//
// Power at SM clock f with an average draw L (sim::PowerLoad, watts at the reference clock):
//   P(f) = static_W + (f / max_MHz)^voltage_exponent * (L.gemm_W / s(f) + L.mma_W / a(f)) + L.hbm_W,
// where the MMA energy per operation falls with the clock (CV^2 with V about in proportion to f:
// an exponent near 2), HBM energy does not (the memory clock does not move), and a GEMM's time at
// f over its time at the reference clock is s(f) = (1 - clock_stretch) + clock_stretch * fit_MHz / f
// (only part of a GEMM's time follows the SM clock), and a(f) the same for the other tensor-core
// work (attention) by its own share and reference clock (1 where it has none). The controller sets the clock from L averaged
// over the last window_ms: max_MHz where P(max_MHz) is within limit_W, else the highest step of
// clock_step_MHz where P(f) is.
#pragma once

#include "sim/cost_model.h"

namespace cs::hw {

struct PowerModel {
  double limit_W = 0;           // the board's enforced power limit
  double static_W = 0;          // drawn with no kernel running
  double max_MHz = 0;           // the SM clock when the limit does not bind
  double clock_step_MHz = 0;    // the clocks the driver sets are multiples of this
  double voltage_exponent = 0;  // energy per operation against the clock: (f / max_MHz)^this
  double bf16_pJ_per_flop = 0;  // at max_MHz, BF16 tensor-core FLOPs (attention's too)
  double fp8_pJ_per_flop = 0;   // at max_MHz, FP8 tensor-core FLOPs
  double hbm_pJ_per_byte = 0;   // every HBM byte read or written (GEMMs', copies', other kernels')
  double clock_stretch = 0;     // share of a GEMM's time that follows the SM clock
  double window_ms = 0;         // the controller acts on the draw averaged over this long
  static constexpr int kParams = 10;
  static const char* param_name(int i);
  bool present() const { return limit_W > 0; }
};

// The time at `MHz` over the time at `ref_MHz` of a kernel a share `share` of whose time at
// ref_MHz follows the SM clock (t = A + B / f).
inline double share_stretch(double share, double ref_MHz, double MHz) { return (1 - share) + share * ref_MHz / MHz; }
// A GEMM's time at f over its time at fit_MHz.
double clock_stretch(const PowerModel& p, double MHz, double fit_MHz);
// How the other tensor-core work (L.mma_W: attention) follows the clock; share 0: not at all.
struct MmaClock {
  double share = 0, ref_MHz = 0;
};
// The board's power at SM clock f under the average draw `load` (its GEMM part at fit_MHz).
double board_power_W(const PowerModel& p, double MHz, double fit_MHz, const sim::PowerLoad& load, const MmaClock& mma = {});
// The SM clock the power limit leaves under `load`: max_MHz, or the highest clock step where the
// power is within limit_W (at least one step: nothing real is clocked lower).
double capped_clock_MHz(const PowerModel& p, double fit_MHz, const sim::PowerLoad& load, const MmaClock& mma = {});

}  // namespace cs::hw
