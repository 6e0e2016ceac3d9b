// The GEMM traffic model (hw/gemm_traffic.h) on shapes small enough to count by hand.
#include <catch2/catch.hpp>

#include "hw/gemm_model.h"
#include "hw/gemm_traffic.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {
sim::GemmShape fp8(int64_t m, int64_t n, int64_t k, int groups = 1) { return {m, n, k, sim::DType::kFp8, groups}; }
constexpr double kHuge = 1e12, kTiny = 1;  // an L2 that holds everything, and one that holds nothing
}  // namespace

TEST_CASE("without the model's parameters a GEMM moves its compulsory bytes", "[hw][traffic]") {
  const sim::GemmShape g = fp8(4096, 7168, 16384);
  CHECK(hw::gemm_dram_bytes(g, 132, {}) == hw::gemm_compulsory_bytes(g));
  CHECK(hw::gemm_dram_bytes(g, 132, {8, 0}) == hw::gemm_compulsory_bytes(g));
}

TEST_CASE("operands that stay in L2 are read once", "[hw][traffic]") {
  for (const sim::GemmShape& g : {fp8(4096, 7168, 2048), fp8(8192, 4096, 7168, 4), fp8(64, 2112, 7168)})
    CHECK(hw::gemm_dram_bytes(g, 132, {8, kHuge}) == Approx(hw::gemm_compulsory_bytes(g)));
}

TEST_CASE("with nothing kept between waves, each wave reads the panels its tiles share once", "[hw][traffic]") {
  // 2 x 4 tiles of 128 x 128, k = 1024: a panel is 128 KiB of FP8. Waves of 4 tiles.
  const sim::GemmShape g = fp8(256, 512, 1024);
  const double panel = 128.0 * 1024, written = 256.0 * 512 * 2;
  // Bands of 4 n-tiles: wave 1 is row 0 (A0, B0-B3), wave 2 row 1 (A1, B0-B3): 10 panels.
  CHECK(hw::gemm_dram_bytes(g, 4, {4, kTiny}) == Approx(10 * panel + written));
  // Bands of 1 n-tile: wave 1 is columns 0-1 of both rows (A0, A1, B0, B1), wave 2 columns 2-3:
  // 8 panels.
  CHECK(hw::gemm_dram_bytes(g, 4, {1, kTiny}) == Approx(8 * panel + written));
  // One wave of all 8 tiles reads each panel once: the compulsory bytes.
  CHECK(hw::gemm_dram_bytes(g, 8, {1, kTiny}) == Approx(hw::gemm_compulsory_bytes(g)));
  // An L2 that holds one wave's panels and the 4 output tiles keeps B0-B3 for the second wave.
  CHECK(hw::gemm_dram_bytes(g, 4, {4, 5 * panel + 4 * 32768.0}) == Approx(6 * panel + written));
}

TEST_CASE("a wave's tiles out of phase fetch a shared panel again when lines outlive less than the spread",
          "[hw][traffic]") {
  // 2 x 2 tiles in one wave of 4, k = 1024: A0, A1, B0, B1, each read by two tiles.
  const sim::GemmShape g = fp8(256, 256, 1024);
  const double panel = 128.0 * 1024, written = 256.0 * 256 * 2;
  const auto bytes = [&](double residency_over_skew) {
    hw::GemmTrafficParams p{1, kHuge};
    p.residency_over_skew = residency_over_skew;
    return hw::gemm_dram_bytes(g, 4, p);
  };
  CHECK(bytes(kHuge) == Approx(4 * panel + written));  // lines outlive the spread: each read once
  CHECK(bytes(1) == Approx(4 * panel + written));
  // Two readers at uniform phases: the second misses when they are more than T apart, with
  // probability (1 - T/S)^2.
  CHECK(bytes(0.5) == Approx(4 * (1 + 0.25) * panel + written));
  CHECK(bytes(0) == Approx(8 * panel + written));  // nothing outlives a read: each reader fetches
  // Shorter residency never reads less.
  double last = bytes(1);
  for (int tenths = 9; tenths >= 0; --tenths) {
    CHECK(bytes(tenths / 10.0) >= last);
    last = bytes(tenths / 10.0);
  }
}

TEST_CASE("less L2 never means fewer bytes, and never fewer than compulsory", "[hw][traffic]") {
  for (const sim::GemmShape& g : {fp8(4096, 7168, 16384), fp8(8192, 4096, 7168, 4), fp8(4096, 36864, 7168)}) {
    double last = 0;
    for (double mib : {64.0, 37.5, 25.0, 12.5, 6.0, 2.0}) {
      const double b = hw::gemm_dram_bytes(g, 132, {8, mib * 1024 * 1024});
      CHECK(b >= last);
      CHECK(b >= hw::gemm_compulsory_bytes(g));
      last = b;
    }
    CHECK(last > 2 * hw::gemm_compulsory_bytes(g));
  }
}

TEST_CASE("groups run one after another: a group does not reuse another's panels", "[hw][traffic]") {
  const sim::GemmShape one = fp8(4096, 4096, 7168), four = fp8(4096, 4096, 7168, 4);
  const hw::GemmTrafficParams p{8, 25.0 * 1024 * 1024};
  CHECK(hw::gemm_dram_bytes(four, 132, p) == Approx(4 * hw::gemm_dram_bytes(one, 132, p)).epsilon(0.02));
}

TEST_CASE("a GEMM past a million tiles per group is not walked: compulsory bytes", "[hw][traffic]") {
  const sim::GemmShape g = fp8(int64_t{1} << 30, int64_t{1} << 30, 128);
  CHECK(hw::gemm_dram_bytes(g, 132, {8, 25.0 * 1024 * 1024}) == hw::gemm_compulsory_bytes(g));
}

}  // namespace CS_TEST_FILE
