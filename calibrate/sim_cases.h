// A measured case as the simulator runs it: one GPU's GEMM on its SMs, or an all-to-all between
// the GPUs of one NVSwitch node, through the engine with a calibrated cost model. Validation
// compares these times, not the fit's closed forms, with the measurements.
#pragma once

#include "calibrate/measurements.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "sim/time.h"

namespace cs::calibrate {

sim::Time simulate_gemm(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const GemmCase& c);
sim::Time simulate_all_to_all(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const AllToAllCase& c);

}  // namespace cs::calibrate
