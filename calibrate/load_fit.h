// What sustained load does to a GPU, read off measurements: the SM clock it holds (from clock
// logs: nvidia-smi's CSV query or `nvidia-smi dmon`) and the most HBM traffic it carried.
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

// The HBM ceiling (reads plus writes, GB/s): the most traffic any copy we measured moved, the
// overlap bench's local copies alone (2 x bytes / time, on their k SMs) and the memory-bound
// kernels' copies (bytes read and written / time, on every SM). A copy on a few SMs is held by
// its SMs' issue rate, not by HBM (the overlap bench's 48-SM copy moves 3.3 TB/s on an H200 where
// PyTorch's copy on 132 SMs moves 4.2), so the most over all of them is the best figure we have;
// it is still a lower bound of what HBM can carry. `what` names the case.
struct HbmCeiling {
  double GBps = 0;
  int cases = 0;
  std::string what;
};
HbmCeiling fit_hbm_ceiling(const std::vector<OverlapCase>& overlaps, const std::vector<MemoryBoundCase>& memory_bound);

}  // namespace cs::calibrate
