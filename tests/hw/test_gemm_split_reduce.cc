// The split-K reduction: a second kernel over the whole partition (hw/gemm_model.h).
#include <catch2/catch.hpp>

#include "hw/gemm_model.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

namespace hw = cs::hw;
namespace sim = cs::sim;

namespace {
hw::GemmModel model(double reduce_GBps_per_sm) {
  return hw::GemmModel{6.0, 0.8, 12.5, 1350.0, 3000.0, 3.0, 2.5, reduce_GBps_per_sm};
}
}  // namespace

TEST_CASE("a split-K GEMM's reduction moves its partials over every SM of the partition", "[hw][gemm]") {
  // 128 x 4096 x 7168: 32 tiles, split in two over 64 or more SMs; the reduction reads two FP32
  // partial outputs and writes one BF16 output: 128 x 4096 x 10 bytes.
  const sim::GemmShape g{128, 4096, 7168, sim::DType::kFp8};
  const hw::GemmModel m = model(15.0);
  const double bytes = 128.0 * 4096 * 10;
  CHECK(hw::gemm_model_split_reduce_us(m, g, 64) == Approx(3.0 + bytes / (15e3 * 64)));
  CHECK(hw::gemm_model_split_reduce_us(m, g, 128) == Approx(3.0 + bytes / (15e3 * 128)));
  // The GEMM kernel itself is one wave of 64 units either way: the whole difference is the reduction's.
  const double main_64 = hw::gemm_model_us(m, g, 64) - hw::gemm_model_split_reduce_us(m, g, 64);
  const double main_128 = hw::gemm_model_us(m, g, 128) - hw::gemm_model_split_reduce_us(m, g, 128);
  CHECK(main_64 == Approx(main_128));
  CHECK(hw::gemm_model_us(m, g, 64) - hw::gemm_model_us(m, g, 128) == Approx(bytes / (15e3 * 128)));
  // Below 64 SMs it does not split: no reduction.
  CHECK(hw::gemm_model_split_reduce_us(m, g, 56) == 0.0);
  // Grouped: every group's partials (64 tiles still split on 132 SMs; 96 do not).
  CHECK(hw::gemm_model_split_reduce_us(m, sim::GemmShape{128, 4096, 7168, sim::DType::kFp8, 2}, 132) ==
        Approx(3.0 + 2 * bytes / (15e3 * 132)));
  CHECK(hw::gemm_model_split_reduce_us(m, sim::GemmShape{128, 4096, 7168, sim::DType::kFp8, 3}, 132) == 0.0);
}

TEST_CASE("a split-K GEMM holds its whole partition, a GEMM that does not split only its tiles' SMs", "[hw][gemm]") {
  CHECK(hw::gemm_model_max_sms(hw::GemmModel{}, sim::GemmShape{128, 4096, 7168, sim::DType::kFp8}, 112) == 112);
  CHECK(hw::gemm_model_max_sms(hw::GemmModel{}, sim::GemmShape{128, 4096, 7168, sim::DType::kFp8}, 56) == 32);
  CHECK(hw::gemm_model_max_sms(hw::GemmModel{}, sim::GemmShape{128, 4096, 2048, sim::DType::kFp8}, 112) ==
        32);  // short k: no split
  CHECK(hw::gemm_model_max_sms(hw::GemmModel{}, sim::GemmShape{4096, 7168, 2048, sim::DType::kFp8}, 112) == 112);
}

TEST_CASE("without a reduction rate the reduction costs the fixed split_k_us, as profiles before it", "[hw][gemm]") {
  const sim::GemmShape g{128, 4096, 7168, sim::DType::kFp8};
  const hw::GemmModel old = model(0.0);
  CHECK(hw::gemm_model_split_reduce_us(old, g, 64) == 3.0);
  CHECK(hw::gemm_model_split_reduce_us(old, g, 128) == 3.0);
  CHECK(hw::gemm_model_us(old, g, 64) == Approx(hw::gemm_model_us(old, g, 128)));
}

}  // namespace CS_TEST_FILE
