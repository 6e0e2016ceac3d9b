// The memory system's two contention mechanisms, fitted from measurements (hw/gpu_profile.h,
// MemoryModel): how HBM saturates as the traffic offered to it grows, and how much HBM traffic a
// GEMM really makes (hw/gemm_traffic.h).
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.h"
#include "hw/gpu_catalog.h"

namespace cs::calibrate {

// The saturation exponent p of HBM, from the overlap bench's local copies alone on k SMs (4 to
// 48 in our data): each offers 2 x k x `copy_GBps_per_sm` (reads and writes, the copy kernel's rate per SM at
// the bench's clock) to a queue of capacity `hbm_GBps`, which carries (D^-p + C^-p)^(-1/p). p
// minimises the squared log error of the copies' times (golden section over [0.5, 64]).
struct HbmSaturationFit {
  double exponent = 0;
  int cases = 0;
  int min_ctas = 0, max_ctas = 0;  // the copies' SMs
  double median_error = 0, worst_error = 0;  // |predicted / measured - 1| of the copies' times
};
// cases == 0 when there is no local-copy overlap case.
HbmSaturationFit fit_hbm_saturation(const std::vector<OverlapCase>& overlaps, double hbm_GBps, double copy_GBps_per_sm);
// The time of a local copy of `bytes` on `ctas` SMs under that model, microseconds.
double saturated_copy_us(double bytes, int ctas, double copy_GBps_per_sm, double hbm_GBps, double exponent);

// The GEMM traffic model's raster band and L2 share, by search over bands {1, 2, 4, ..., 64} n-tiles
// and shares {1/4, 1/2, 3/4, 1} of `gpu`'s L2, for the least squared log error of the DRAM bytes
// read per group. `gpu` is the GPU the cases were measured on. The median is also given over the
// cases of more than one row of tiles: one row reads its A once under any raster.
struct GemmTrafficFit {
  int swizzle_n_blocks = 0;
  double l2_reuse_share = 0;
  int cases = 0;
  double median_error = 0, worst_error = 0;  // |predicted / measured - 1| of the bytes read
  std::string worst_case;
  int reuse_cases = 0;              // cases of more than one row of tiles
  double reuse_median_error = 0;    // the median over them
};
// cases == 0 when there are no cases.
GemmTrafficFit fit_gemm_traffic(const std::vector<GemmTrafficCase>& cases, const hw::GpuSpec& gpu);
// The GPU DRAM bytes measured on `p` may stand for on `gpu`: `gpu` itself, or the catalog GPU
// that measured them when it has `gpu`'s SM count and L2 (the raster and L2 reuse are the chip's).
// nullptr when neither.
const hw::GpuSpec* traffic_gpu(const Provenance& p, const hw::GpuSpec& gpu);
// Whether `p` measured the chip rather than the board: DRAM bytes under Nsight Compute (the L2
// decides them), BF16 GEMM rates and the FP8 scalings' relative cost (the SMs decide them). Such
// data may come from another GPU of the same chip (traffic_gpu); every other measurement belongs
// to its own GPU's profile, except the share of a kernel's time that follows the SM clock
// (kernels/torch/kernel_clock.py) and the memory-bound kernels' rates by form
// (kernels/torch/memory_bound_forms.py): both depend on how fast the HBM is against the SMs (one
// H200 against one H100: RMSNorm's forward share 0.50 against 0.30, SwiGLU's 0.35 against 0.04),
// so they may come from a GPU of the same chip and the same HBM bandwidth (memory_system_gpu: the
// H100 for the H800).
bool chip_level_measurement(const Provenance& p);
const hw::GpuSpec* memory_system_gpu(const Provenance& p, const hw::GpuSpec& gpu);
// Bytes one group of `c` reads, as the traffic model predicts them.
double predicted_read_bytes(const GemmTrafficCase& c, const hw::GpuSpec& gpu, int swizzle_n_blocks, double l2_reuse_share);

// The spread of a wave's tile phases, in tile times (hw/gemm_traffic.h), from the overlap bench
// under Nsight Compute: the GEMMs' DRAM bytes beside the copy over alone. The bytes were moved at
// the profiler's rates (clocks locked to base), so the L2 shares, a line's residency and a tile's
// time (the GEMM's alone over its waves) are read off the same run. The walk keeps the traffic
// model's raster and L2 share. Least squared log error of the ratio, over [0, 8] tile times in
// steps of 1/100. Every case has one tiling and tiles of 25 to 33 us: no case says how the spread
// goes on longer tiles, and the profile holds it there (hw/gpu_profile.h).
struct L2WaveSkewFit {
  double skew = 0;
  int cases = 0;
  double median_error = 0, worst_error = 0;  // |predicted / measured - 1| of the ratio
  double error_without = 0;                   // the median with no spread (the L2 shares alone)
  double max_tile_us = 0;                     // the longest tile among the cases
};
// cases == 0 when there are no cases.
L2WaveSkewFit fit_l2_wave_skew(const std::vector<OverlapTrafficCase>& cases, const hw::GpuSpec& gpu,
                               int swizzle_n_blocks, double l2_reuse_share);
// A case's bytes beside the copy over alone, as the traffic model predicts them with `skew` at the
// case's own rates (alone too, a line lives for the cache over the GEMM's own rate).
double predicted_together_ratio(const OverlapTrafficCase& c, const hw::GpuSpec& gpu, int swizzle_n_blocks,
                                double l2_reuse_share, double skew);

}  // namespace cs::calibrate
