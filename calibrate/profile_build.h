// Measurements -> a calibrated profile: fits the GEMM and communication models, records where
// every parameter came from and the measured range, and writes it as YAML (hw/gpu_profile.h reads
// it back). carry_profile takes a profile to a GPU of the same chip through datasheet ratios.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibrate/comm_fit.h"
#include "calibrate/gemm_fit.h"
#include "calibrate/kernel_clock_fit.h"
#include "calibrate/kernel_fit.h"
#include "calibrate/measurements.h"
#include "calibrate/tile_scaling_fit.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

// Clock logs for the profile's clocks section: one taken under sustained load (the overlap
// bench's nvidia-smi log) and one while the GEMM sweep ran (its dmon log). Both or neither.
// `attention_fa2`: one taken while FlashAttention-2's calls ran, for its section's fit_MHz.
struct ClockLogs {
  std::string sustained, gemm_sweep;
  std::string attention_fa2;
};

struct ProfileBuild {
  hw::GpuProfile profile;
  GemmFit gemm;
  CommFit comm;
  std::optional<KernelFit> kernels;  // when attention and memory-bound measurements were given
  std::optional<GemmBf16Fit> gemm_bf16;  // when BF16 GEMM measurements were given
  std::optional<TileScalingFit> fp8_tiles;  // when FP8 GEMMs under both scalings were given
  std::optional<PowerFit> power;         // when a power response was given
  std::optional<KernelClockFit> kernel_clock;  // when kernels timed at two clocks were given
  int gemm_held_out = 0, comm_held_out = 0, gemm_bf16_held_out = 0;
};

// Fits on the cases not held out (every `holdout_every`-th shape / grid cell; 0 holds none out).
// UserError when the measurements lack GEMM or all-to-all cases, or come from another GPU.
// Given overlap cases, the memory section (HBM ceiling) is fitted too; given clock logs, the
// clocks section; given a power response (and the clocks), the power section.
ProfileBuild build_profile(const MeasurementSet& set, const hw::GpuSpec& gpu, int holdout_every,
                           const ClockLogs& clocks = {});
// The profile of `to`, from `from`'s: the same Hopper chip, so the SM-side figures carry over
// unchanged; the HBM- and NVLink-bound ones scale by the datasheet ratios.
hw::GpuProfile carry_profile(const hw::GpuProfile& from, const hw::GpuSpec& from_gpu, const hw::GpuSpec& to_gpu);
// Sets the per-form memory-bound rates and the launch gap measured in `set`
// (kernels/torch/memory_bound_forms.py) on a profile with kernels; nothing when there are none.
// UserError when they were measured on a GPU of another chip or HBM bandwidth than the profile's
// (memory_system_gpu), or the profile has no kernels section to hold them.
void apply_measured_memory_forms(const MeasurementSet& set, const hw::GpuSpec& gpu, hw::GpuProfile& p);
// Fits the kernel_clock section from `set`'s kernels timed at two clocks (kernels/torch/kernel_clock.py)
// onto `p`, whose power section gives the maximum clock and whose kernels section the attention
// model; the fit, for its report. UserError without a power section.
KernelClockFit apply_kernel_clock(const MeasurementSet& set, hw::GpuProfile& p);
// UserError unless `p` was measured on `gpu` or on a GPU of its chip and HBM bandwidth.
void check_kernel_clock_source(const Provenance& p, const hw::GpuSpec& gpu);
std::string profile_yaml(const hw::GpuProfile& p);
// The NVLink latency the simulator puts on a GPU-to-GPU route of one node, microseconds.
double nvlink_latency_us(const hw::GpuSpec& gpu);

}  // namespace cs::calibrate
