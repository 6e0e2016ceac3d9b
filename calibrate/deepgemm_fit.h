// A profile's FP8 GEMMs refitted to DeepGEMM, the kernels DeepSeek published for its training, from
// their published H800 table (../shared/REFERENCE.md; calibrate/published_check.h). The carried
// H800 profile times cuBLASLt 13.1, measured on our H200: on the table's training shapes it runs
// 6-22% faster than DeepGEMM did in February 2025. Where DeepGEMM runs the same 128 x 128 tiles as
// the profile's model, the difference is two figures of its kernel: a longer fixed time per tile and
// a slower MMA loop. Those two are fitted here, and nothing else of the profile changes.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "calibrate/published_check.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

// DeepGEMM's output tile for a GEMM (its deep_gemm/jit_kernels/gemm.py get_best_configs of
// February 2025): block_m 64 for m <= 64, else 128 (128 always for the grouped contiguous layout);
// block_n from 16 to 128 in steps of 8, the fewest waves over the SMs first, then the fullest last
// wave, then the smaller block_n.
struct DeepGemmTile {
  int block_m = 0, block_n = 0;
};
DeepGemmTile deepgemm_tile(int64_t m, int64_t n, int groups, int sms, bool grouped_contiguous);

struct DeepGemmFit {
  hw::GpuProfile profile;                   // the input profile with tile_us, sm_tflops and chip_tflops refitted
  double tile_us_added = 0;                 // DeepGEMM's tile time minus the profile's
  double mma_scale = 0;                     // DeepGEMM's MMA rates over the profile's
  std::vector<PublishedCheck> fitted;       // the dense rows fitted on (128 x 128 tiles)
  std::vector<PublishedCheck> held_out;     // the grouped rows, predicted with the fit
  std::vector<PublishedCheck> other_tiles;  // rows DeepGEMM runs in other tiles, not the model's (reported only)
};

// Fits on the dense rows that DeepGEMM runs in 128 x 128 tiles and holds the grouped rows out
// (those in 128 x 128 tiles too); by default the published table's rows. `gpu` is the profile's GPU
// (an H800: the table's). UserError when the profile has no GEMM model, `gpu` has another SM count
// than the table's 132, or fewer than two dense rows run in 128 x 128 tiles.
DeepGemmFit fit_deepgemm(const hw::GpuProfile& p, const hw::GpuSpec& gpu,
                         std::span<const DeepGemmRow> dense = deepgemm_dense_rows(),
                         std::span<const DeepGemmRow> grouped = deepgemm_grouped_rows());

}  // namespace cs::calibrate
