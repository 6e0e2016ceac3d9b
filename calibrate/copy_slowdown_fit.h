// How much a communication kernel's copies slow beside GEMMs (hw/gpu_profile.h, MemoryModel::
// copy_slowdown_beside_gemms), from the overlap bench under Nsight Compute. There the clocks are
// locked to base, so a copy's time beside the GEMMs over its time alone is contention alone, and
// DRAM carries under 1 TB/s at k = 4 while the copy still slows 12%: not HBM's queue but the L2's,
// where a copy's few loads in flight per SM wait behind the GEMMs' operand traffic.
#pragma once

#include <vector>

#include "calibrate/measurements.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

// Each case runs through the engine as the bench ran it (sim_cases.h: the copies on their SMs,
// the GEMMs on theirs, both from the start, the GEMMs outlasting the copies), alone and together,
// on `p` (its HBM queue and GEMM traffic model included). Per case, bisection on [0, 2] finds the
// slowdown g whose simulated ratio of a copy's time together over alone equals the measured one;
// the fit is the median of the cases' g.
struct CopySlowdownFit {
  double slowdown = 0;
  int cases = 0;
  double median_error = 0, worst_error = 0;  // |simulated / measured - 1| of the ratio, at the median g
  double error_without = 0;                  // the median at g = 0 (HBM's queue alone)
};
// cases == 0 when there are no cases.
CopySlowdownFit fit_copy_slowdown_beside_gemms(const std::vector<OverlapTrafficCase>& cases, const hw::GpuProfile& p,
                                               const hw::GpuSpec& gpu);
// A case's copy time beside its GEMMs over alone, simulated on `p`.
double simulated_copy_ratio(const OverlapTrafficCase& c, const hw::GpuProfile& p, const hw::GpuSpec& gpu);

}  // namespace cs::calibrate
