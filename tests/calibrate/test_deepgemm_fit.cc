// The H800 profile's FP8 GEMMs refitted to DeepGEMM's published table (calibrate/deepgemm_fit.h):
// DeepGEMM's tile choice, the fit's recovery of known figures from a synthetic table, and the
// bundled hw/profiles/h800-deepgemm.yaml as `calibrate deepgemm h800` writes it.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "calibrate/deepgemm_fit.h"
#include "calibrate/profile_build.h"
#include "hw/gemm_model.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {
const hw::GpuProfile& h800() { return *hw::find_profile("h800"); }
const hw::GpuSpec& h800_gpu() { return *hw::find_gpu("h800"); }

hw::GpuProfile moved(double tile_us_added, double mma_scale) {
  hw::GpuProfile q = h800();
  q.gemm.tiling = hw::GemmTiling::kDeepGemm;
  q.gemm.tile_us += tile_us_added;
  q.gemm.sm_tflops *= mma_scale;
  q.gemm.chip_tflops *= mma_scale;
  return q;
}
}  // namespace

TEST_CASE("DeepGEMM's February tile choice: the fewest waves, then the fullest last wave, then the narrower",
          "[deepgemm]") {
  const auto tile = [](int64_t m, int64_t n, int groups, bool grouped) {
    const hw::GemmTile t = hw::deepgemm_tile(m, n, groups, 132, grouped);
    return std::to_string(t.m) + "x" + std::to_string(t.n);
  };
  CHECK(tile(64, 2112, 1, false) == "64x16");      // 132 blocks: one full wave
  CHECK(tile(64, 24576, 1, false) == "64x96");     // 256 blocks in 2 waves, the last of 124
  CHECK(tile(64, 7168, 1, false) == "64x56");      // 128 blocks in one wave
  CHECK(tile(128, 4096, 1, false) == "128x32");    // 128 blocks
  CHECK(tile(4096, 2112, 1, false) == "128x112");  // 608 blocks in 5 waves, the last of 80
  CHECK(tile(4096, 4096, 1, false) == "128x128");  // 1024 blocks: 8 waves whatever the width
  CHECK(tile(64, 4096, 4, true) == "128x128");     // the grouped contiguous layout always takes 128 rows
}

TEST_CASE("the DeepGEMM fit recovers a known tile time and MMA rate from a synthetic table", "[deepgemm]") {
  // The table's shapes, their TFLOPS those of a profile 0.4 us per tile slower with 0.9 of the MMA rate.
  const hw::GpuProfile truth = moved(0.4, 0.9);
  std::vector<calibrate::DeepGemmRow> dense, grouped;
  for (calibrate::DeepGemmRow r : calibrate::deepgemm_dense_rows()) {
    r.tflops = calibrate::deepgemm_check(truth, h800_gpu(), r).predicted;
    dense.push_back(r);
  }
  for (calibrate::DeepGemmRow r : calibrate::deepgemm_grouped_rows()) {
    r.tflops = calibrate::deepgemm_check(truth, h800_gpu(), r).predicted;
    grouped.push_back(r);
  }
  const calibrate::DeepGemmFit fit = calibrate::fit_deepgemm(h800(), h800_gpu(), dense, grouped);
  CHECK(fit.tile_us_added == Approx(0.4).margin(1e-4));
  CHECK(fit.mma_scale == Approx(0.9).epsilon(1e-4));
  REQUIRE(fit.fitted.size() == 6);  // the dense rows DeepGEMM runs in 128 x 128 tiles
  REQUIRE(fit.held_out.size() == 4);
  CHECK(fit.other_tiles.size() == 12);
  for (const auto* rows : {&fit.fitted, &fit.held_out, &fit.other_tiles})
    for (const calibrate::PublishedCheck& c : *rows) CHECK(std::abs(c.error()) < 1e-4);
}

TEST_CASE("the DeepGEMM fit refuses a GPU of another SM count and too few rows in the model's tiles", "[deepgemm]") {
  hw::GpuSpec other = h800_gpu();
  other.sms = 114;
  CHECK_THROWS_AS(calibrate::fit_deepgemm(h800(), other), hw::UserError);
  const std::vector<calibrate::DeepGemmRow> small_m = {{1, 64, 2112, 7168, 206}, {1, 64, 4096, 7168, 287}};
  CHECK_THROWS_AS(calibrate::fit_deepgemm(h800(), h800_gpu(), small_m, {}), hw::UserError);
}

TEST_CASE(
    "the bundled h800-deepgemm profile is the h800 one refitted to DeepGEMM's table, as calibrate deepgemm writes it",
    "[deepgemm]") {
  const calibrate::DeepGemmFit fit = calibrate::fit_deepgemm(h800(), h800_gpu());
  const hw::GpuProfile& bundled = *hw::find_profile("h800-deepgemm");
  hw::GpuProfile written = fit.profile;
  written.file = bundled.file;
  CHECK(calibrate::profile_yaml(written) == calibrate::profile_yaml(bundled));
  // DeepGEMM's February kernel: a longer fixed time per tile and a slower MMA loop than cuBLASLt 13.1.
  CHECK(fit.tile_us_added > 0.3);
  CHECK(fit.mma_scale < 0.99);
  CHECK(fit.mma_scale > 0.85);
  // Two figures fit the six dense rows and predict the four grouped ones within 3%.
  for (const auto* rows : {&fit.fitted, &fit.held_out})
    for (const calibrate::PublishedCheck& c : *rows) {
      INFO(c.name << ": published " << c.published << ", predicted " << c.predicted);
      CHECK(std::abs(c.error()) < 0.03);
    }
  // The 12 dense rows in DeepGEMM's other tiles (64 rows, or narrower than 128), held out, in their
  // own tiles: 7.5% median when written. Their worst, 64 and 128 x 2112 x 7168 in 16-column tiles,
  // runs narrower than any tile measured (cuBLASLt's narrowest, 32: test_fp8_tile_data.cc).
  CHECK(bundled.gemm.tiling == hw::GemmTiling::kDeepGemm);
  CHECK(calibrate::published_stats(fit.other_tiles).median_error < 0.10);
  // Only the three figures and the tiling move; the rest is the h800 profile's.
  CHECK(bundled.gemm.launch_us == h800().gemm.launch_us);
  CHECK(bundled.gemm.hbm_GBps == h800().gemm.hbm_GBps);
  CHECK(bundled.comm.nvlink_GBps == h800().comm.nvlink_GBps);
  CHECK(bundled.gemm_params.at("tile_us").origin == "published");
  CHECK(bundled.gemm_params.at("launch_us").origin == h800().gemm_params.at("launch_us").origin);
}

}  // namespace CS_TEST_FILE
