// The GEMM model's tiles (hw/gemm_model.h): cuBLASLt's 128 x 128 with split-K, and DeepGEMM's tile
// choice with no split-K, each tile paying the fixed time and the MMA rate per FLOP of the model.
#include <algorithm>
#include <catch2/catch.hpp>

#include "hw/gemm_model.h"
#include "hw/gpu_profile.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {
hw::GemmModel model(hw::GemmTiling tiling) {
  hw::GemmModel m{5.0, 1.5, 12.0, 1500.0, 3000.0, 3.0, 3.0, 16.0};
  m.tiling = tiling;
  return m;
}
const sim::GemmShape kSmallM{64, 2112, 7168, sim::DType::kFp8};
}  // namespace

TEST_CASE("cuBLASLt's plan: 128 x 128 tiles, k split in two where twice the tiles fit", "[hw][gemm]") {
  const hw::GemmModel m = model(hw::GemmTiling::kCublasLt);
  const hw::GemmPlan plan = hw::gemm_model_plan(m, kSmallM, 132);
  CHECK(plan.tile == hw::GemmTile{128, 128});
  CHECK(plan.split_k == 2);  // 17 tiles, k 7168
  CHECK(hw::gemm_model_tiles(m, kSmallM, 132) == 17);
  CHECK(hw::gemm_model_max_sms(m, kSmallM, 132) == 132);  // the reduction spreads over the partition
  CHECK(hw::gemm_model_split_reduce_us(m, kSmallM, 132) > 3.0);
  CHECK(hw::gemm_model_plan(m, sim::GemmShape{4096, 7168, 7168, sim::DType::kFp8}, 132).split_k == 1);
}

TEST_CASE("DeepGEMM's plan: its own tile, never a split, every tile at the model's rate per FLOP", "[hw][gemm]") {
  const hw::GemmModel m = model(hw::GemmTiling::kDeepGemm);
  const hw::GemmPlan plan = hw::gemm_model_plan(m, kSmallM, 132);
  CHECK(plan.tile == hw::GemmTile{64, 16});  // 132 tiles: one full wave
  CHECK(plan.split_k == 1);
  CHECK(hw::gemm_model_tiles(m, kSmallM, 132) == 132);
  CHECK(hw::gemm_model_max_sms(m, kSmallM, 132) == 132);
  CHECK(hw::gemm_model_split_reduce_us(m, kSmallM, 132) == 0.0);
  // One wave of 64 x 16 tiles over the whole k, every SM busy: the chip's rate shared.
  const double rate_tflops = std::min(m.sm_tflops, m.chip_tflops / 132);
  const double tile_us = m.tile_us + 2.0 * 64 * 16 * 7168 / (rate_tflops * 1e6);
  CHECK(hw::gemm_model_tile_us(m, kSmallM, 132) == Approx(tile_us));
  const double hbm_us = hw::gemm_compulsory_bytes(kSmallM) / (m.hbm_GBps * 1e3);
  CHECK(hw::gemm_model_us(m, kSmallM, 132) == Approx(m.launch_us + hw::gemm_bound_us(m, tile_us, hbm_us)));
  // On 112 SMs the same shape takes 24-column tiles, 88 of them in one wave (DeepGEMM's choice
  // depends on the SMs it is given: 16 columns would make 132 tiles, two waves).
  CHECK(hw::gemm_model_plan(m, kSmallM, 112).tile == hw::GemmTile{64, 24});
  // Grouped shapes are DeepGEMM's contiguous layout: 128 rows whatever m.
  CHECK(hw::gemm_model_tile(m, sim::GemmShape{64, 4096, 7168, sim::DType::kFp8, 4}, 132).m == 128);
}

TEST_CASE("a given plan prices as the model's own when it is the same plan", "[hw][gemm]") {
  for (const hw::GemmTiling t : {hw::GemmTiling::kCublasLt, hw::GemmTiling::kDeepGemm})
    for (const int sms : {16, 112, 132})
      for (const sim::GemmShape& g : {kSmallM, sim::GemmShape{4096, 2112, 7168, sim::DType::kFp8}}) {
        const hw::GemmModel m = model(t);
        CHECK(hw::gemm_model_planned_us(m, g, sms, hw::gemm_model_plan(m, g, sms), 0.9, 1.1) ==
              hw::gemm_model_us(m, g, sms, 0.9, 1.1));
      }
  // A narrower tile on a small m fills more SMs and ends sooner than cuBLASLt's 17 tiles unsplit.
  const hw::GemmModel m = model(hw::GemmTiling::kCublasLt);
  CHECK(hw::gemm_model_planned_us(m, kSmallM, 132, {{64, 32}, 1}) <
        hw::gemm_model_planned_us(m, kSmallM, 132, {{128, 128}, 1}));
}

TEST_CASE("BF16 GEMMs keep cuBLASLt's tiles on a DeepGEMM profile", "[hw][gemm]") {
  const hw::GemmModel fp8 = model(hw::GemmTiling::kDeepGemm);
  CHECK(hw::with_bf16_rates(fp8, hw::GemmBf16Model{6.0, 750.0}).tiling == hw::GemmTiling::kCublasLt);
}

}  // namespace CS_TEST_FILE
