#include "hw/power_model.h"

#include <cmath>

namespace cs::hw {

const char* PowerModel::param_name(int i) {
  static constexpr const char* kNames[kParams] = {
      "limit_W",         "static_W",        "max_MHz",         "clock_step_MHz", "voltage_exponent",
      "bf16_pJ_per_flop", "fp8_pJ_per_flop", "hbm_pJ_per_byte", "clock_stretch",  "window_ms"};
  return kNames[i];
}

double clock_stretch(const PowerModel& p, double MHz, double fit_MHz) {
  return share_stretch(p.clock_stretch, fit_MHz, MHz);
}

double board_power_W(const PowerModel& p, double MHz, double fit_MHz, const sim::PowerLoad& load, const MmaClock& mma) {
  const double volt = std::pow(MHz / p.max_MHz, p.voltage_exponent);
  const double mma_stretch = mma.share > 0 ? share_stretch(mma.share, mma.ref_MHz, MHz) : 1.0;
  return p.static_W + volt * (load.gemm_W / clock_stretch(p, MHz, fit_MHz) + load.mma_W / mma_stretch) + load.hbm_W;
}

double capped_clock_MHz(const PowerModel& p, double fit_MHz, const sim::PowerLoad& load, const MmaClock& mma) {
  if (board_power_W(p, p.max_MHz, fit_MHz, load, mma) <= p.limit_W) return p.max_MHz;
  // The power rises with the clock (the energy per operation and the rate both do): bisection over
  // the clock steps below max_MHz.
  const int top = static_cast<int>(std::floor(p.max_MHz / p.clock_step_MHz - 1e-9));
  int lo = 1, hi = top;  // the answer is in [lo, hi]; `lo` is taken when no step fits
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (board_power_W(p, mid * p.clock_step_MHz, fit_MHz, load, mma) <= p.limit_W) lo = mid;
    else hi = mid - 1;
  }
  return lo * p.clock_step_MHz;
}

}  // namespace cs::hw
