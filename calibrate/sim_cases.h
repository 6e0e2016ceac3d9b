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
// One attention call (on `attention`'s kernel) or memory-bound kernel on the whole GPU.
sim::Time simulate_kernel(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const sim::GenericCompute& k,
                          hw::AttentionKernel attention = hw::AttentionKernel::kSdpa);

// An overlap case as the bench ran it: the case's GEMMs one after another on the compute SMs, its
// all-to-alls one after another on the comm SMs, both streams starting together.
struct OverlapRun {
  sim::Time makespan;
  sim::Time gemm_end, a2a_end;  // when each stream's last op ended
};
OverlapRun simulate_overlap(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const OverlapCase& c);

}  // namespace cs::calibrate
