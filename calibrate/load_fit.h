// What sustained load does to a GPU, read off measurements: the SM clock it holds (from clock
// logs: nvidia-smi's CSV query or `nvidia-smi dmon`) and the most HBM carries (from the overlap
// bench's local copies alone, whose per-SM rate falls once HBM binds).
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.h"

namespace cs::calibrate {

struct ClockSample {
  double sm_MHz = 0, power_W = 0;
};

// Samples of a clock log: nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,...
// CSV lines ("2026/11/23 11:23:38.561, 345 MHz, 3201 MHz, 82.14 W, ...") or `nvidia-smi dmon`
// lines (gpu pwr gtemp mtemp mclk pclk). Other lines are skipped. `date_utc` gets the first CSV
// sample's timestamp ("2026-11-23T11:23:38Z"; empty for dmon, which has none). UserError when the
// file cannot be read or holds no sample.
std::vector<ClockSample> read_clock_log(const std::string& path, std::string* date_utc = nullptr);

// The mean SM clock while the GPU worked: over the samples drawing more than twice the lowest
// sample's power (the idle ones, at idle clocks, are left out). `used` gets their count.
double loaded_mean_MHz(const std::vector<ClockSample>& samples, int* used = nullptr);

// The HBM ceiling (reads plus writes, GB/s) from the overlap cases whose all-to-all is a local
// copy: the most traffic one moved alone, 2 x bytes / time. `bound` says whether that case was
// held by HBM, its copy's per-SM rate under 90% of the median over the cases (if not, the value
// is only a lower bound).
struct HbmCeiling {
  double GBps = 0;
  int cases = 0;
  bool bound = false;
  double per_sm_GBps_at = 0, per_sm_GBps_median = 0;
  int ctas_at = 0;
};
HbmCeiling fit_hbm_ceiling(const std::vector<OverlapCase>& cases);

}  // namespace cs::calibrate
