// A profile's FP8 GEMMs refitted to DeepGEMM, the kernels DeepSeek published for its training, from
// their published H800 table (../shared/REFERENCE.md; calibrate/published_check.h). The carried
// H800 profile times cuBLASLt 13.1, measured on our H200: on the table's training shapes it runs
// 6-22% faster than DeepGEMM did in February 2025. The refitted profile runs DeepGEMM's tile choice
// (hw::deepgemm_tile, no split-K; `gemm_tiles: {kernel: deepgemm}`), and where DeepGEMM runs the
// same 128 x 128 tiles as cuBLASLt the difference is two figures of its kernel: a longer fixed time
// per tile and a slower MMA loop. Those two are fitted on those rows; every other row is predicted.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "calibrate/published_check.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

struct DeepGemmFit {
  hw::GpuProfile profile;                   // the input profile with tile_us, sm_tflops and chip_tflops refitted
  double tile_us_added = 0;                 // DeepGEMM's tile time minus the profile's
  double mma_scale = 0;                     // DeepGEMM's MMA rates over the profile's
  std::vector<PublishedCheck> fitted;       // the dense rows fitted on (128 x 128 tiles)
  std::vector<PublishedCheck> held_out;     // the grouped rows, predicted with the fit
  std::vector<PublishedCheck> other_tiles;  // dense rows DeepGEMM runs in other tiles, predicted in them
};

// Fits on the dense rows that DeepGEMM runs in 128 x 128 tiles and predicts the others in their own
// tiles and the grouped rows (held out); by default the published table's rows. `gpu` is the profile's GPU
// (an H800: the table's). UserError when the profile has no GEMM model, `gpu` has another SM count
// than the table's 132, or fewer than two dense rows run in 128 x 128 tiles.
DeepGemmFit fit_deepgemm(const hw::GpuProfile& p, const hw::GpuSpec& gpu,
                         std::span<const DeepGemmRow> dense = deepgemm_dense_rows(),
                         std::span<const DeepGemmRow> grouped = deepgemm_grouped_rows());

}  // namespace cs::calibrate
