// A profile's attention and memory-bound sections from a fit of their measurements (kernel_fit.h),
// each parameter with its source: `kernels` (SDPA's own pick, the fused memory-bound kernels) and
// `attention_fa2` (FlashAttention-2 per head-dim kernel, with the clock its calls ran at).
#pragma once

#include <optional>
#include <string>

#include "calibrate/kernel_fit.h"
#include "calibrate/measurements.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

// Fits and sets both sections on `p` where `set` holds attention or memory-bound measurements;
// nullopt (and `p` unchanged) where it holds neither. `fa2_clock_log`: an nvidia-smi log taken while
// FlashAttention-2's calls ran (empty: none), for attention_fa2.fit_MHz. UserError as fit_kernels
// throws, and for a FlashAttention-2 clock log without a FlashAttention-2 call.
std::optional<KernelFit> fit_kernel_sections(const MeasurementSet& set, const hw::GpuSpec& gpu,
                                             const std::string& fa2_clock_log, hw::GpuProfile& p);

}  // namespace cs::calibrate
