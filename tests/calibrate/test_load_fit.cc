// Sustained load read off measurements: clock logs (nvidia-smi CSV and dmon) and the HBM ceiling
// from local copies alone, on synthetic data with known answers; the clocks and memory sections
// of a profile (YAML round trip, carry-over, what a calibrated cost does with them).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "calibrate/load_fit.h"
#include "calibrate/profile_build.h"
#include "hw/calibrated_cost.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = std::string(P_tmpdir) + "/cs_test_" + name;
  std::ofstream(path) << text;
  return path;
}

// Local copies of `bytes` on `ctas` SMs at `per_sm` GB/s each, held to half of `hbm` (read + write).
calibrate::OverlapCase copy_case(int ctas, double per_sm, double hbm) {
  calibrate::OverlapCase c;
  c.ctas = ctas;
  c.local_copy_only = true;
  c.a2a_bytes = 268435456;
  c.a2a_alone_us = c.a2a_bytes / (std::min(ctas * per_sm, hbm / 2) * 1e3);
  return c;
}
}  // namespace

TEST_CASE("clock logs read in both nvidia-smi formats, and idle samples are left out of the mean", "[calibrate][load]") {
  const std::string csv = write_temp("clocks.csv",
                                     "timestamp, clocks.current.sm [MHz], clocks.current.memory [MHz], power.draw [W]\n"
                                     "2026/11/23 11:23:38.561, 345 MHz, 3201 MHz, 82.14 W, 41, 0x1\n"
                                     "2026/11/23 11:23:39.067, 1700 MHz, 3201 MHz, 600.00 W, 60, 0x4\n"
                                     "2026/11/23 11:23:39.568, 1800 MHz, 3201 MHz, 650.50 W, 61, 0x4\n");
  std::string date;
  const auto a = calibrate::read_clock_log(csv, &date);
  REQUIRE(a.size() == 3);
  CHECK(date == "2026-11-23T11:23:38Z");
  CHECK(a[1].sm_MHz == 1700);
  CHECK(a[2].power_W == Approx(650.5));
  int used = 0;
  CHECK(calibrate::loaded_mean_MHz(a, &used) == Approx(1750));
  CHECK(used == 2);

  const std::string dmon = write_temp("clocks.dmon",
                                      "# gpu    pwr  gtemp  mtemp   mclk   pclk\n"
                                      "# Idx      W      C      C    MHz    MHz\n"
                                      "    0     80     40     41   3201    345\n"
                                      "    0    500     60     48   3201   1980\n"
                                      "    0    650     66     50   3201   1620\n");
  const auto b = calibrate::read_clock_log(dmon);
  REQUIRE(b.size() == 3);
  CHECK(calibrate::loaded_mean_MHz(b) == Approx(1800));

  const std::string empty = write_temp("clocks.none", "no samples here\n");
  CHECK_THROWS_AS(calibrate::read_clock_log(empty), hw::UserError);
}

TEST_CASE("the HBM ceiling is the most traffic any measured copy moved", "[calibrate][load]") {
  // Local copies at 42 GB/s per SM, HBM 3300 GB/s of reads + writes: 48 SMs would want 2016 GB/s
  // of copy, get 1650, so their traffic is 3300.
  std::vector<calibrate::OverlapCase> cases;
  for (int k : {4, 8, 16, 24, 32, 48}) cases.push_back(copy_case(k, 42, 3300));
  calibrate::HbmCeiling h = calibrate::fit_hbm_ceiling(cases, {});
  CHECK(h.cases == 6);
  CHECK(h.GBps == Approx(3300));
  CHECK(h.what == "cs_overlap's local copy alone on 48 SMs");
  // A copy on every SM that moves more raises the ceiling: the copies on few SMs were held by
  // their SMs, not by HBM. Other memory-bound kernels and slower copies do not count.
  std::vector<calibrate::MemoryBoundCase> mb(3);
  mb[0] = {"copy", "eager", 4294967296.0, 1015.6, 0, 0};      // 4229 GB/s
  mb[1] = {"rmsnorm_fwd_7168", "eager", 4294967296.0, 500, 1, 0};  // not a copy
  mb[2] = {"copy", "compiled", 4294967296.0, 2000, 2, 0};     // 2147 GB/s
  h = calibrate::fit_hbm_ceiling(cases, mb);
  CHECK(h.cases == 8);
  CHECK(h.GBps == Approx(4294967296.0 / 1015.6e3));
  CHECK(h.what == "PyTorch's eager copy of 4.29 GB on every SM");
  CHECK(calibrate::fit_hbm_ceiling({}, {}).cases == 0);
}

TEST_CASE("clocks and memory sections round-trip through YAML and carry to the H800", "[calibrate][load][profile]") {
  hw::GpuProfile p = *hw::find_profile("h200");
  p.clocks = hw::ClockModel{1930, 1980, 1770};
  p.memory = hw::MemoryModel{3300, 3.5, 0.75, 16, 1.25, 40, 0.15};
  for (int i = 0; i < hw::ClockModel::kParams; ++i)
    p.clock_params[hw::ClockModel::param_name(i)] = {i == 0 ? 1930.0 : i == 1 ? 1980.0 : 1770.0, "measured", "test"};
  p.memory_params["hbm_GBps"] = {3300, "measured", "test"};
  p.memory_params["saturation_exponent"] = {3.5, "measured", "test"};
  p.memory_params["l2_reuse_share"] = {0.75, "measured", "test"};
  p.memory_params["gemm_swizzle_n_blocks"] = {16, "measured", "test"};
  p.memory_params["l2_wave_skew"] = {1.25, "measured", "test"};
  p.memory_params["l2_skew_max_tile_us"] = {40, "measured", "test"};
  p.memory_params["copy_slowdown_beside_gemms"] = {0.15, "measured", "test"};
  const hw::GpuProfile back = hw::parse_profile(hw::parse_yaml(calibrate::profile_yaml(p), "round-trip.yaml"));
  CHECK(back.clocks.sustained_MHz == 1770);
  CHECK(back.clocks.gemm_fit_MHz == 1930);
  CHECK(back.clocks.comm_fit_MHz == 1980);
  CHECK(back.memory.hbm_GBps == 3300);
  CHECK(back.memory.saturation_exponent == 3.5);
  CHECK(back.memory.l2_reuse_share == 0.75);
  CHECK(back.memory.gemm_swizzle_n_blocks == 16);
  CHECK(back.memory.l2_wave_skew == 1.25);
  CHECK(back.memory.l2_skew_max_tile_us == 40);
  CHECK(back.memory.copy_slowdown_beside_gemms == 0.15);
  CHECK(back.memory_params.size() == 7);
  CHECK(back.clock_params.at("sustained_MHz").source == "test");

  const hw::GpuProfile h800 = calibrate::carry_profile(p, *hw::find_gpu("h200"), *hw::find_gpu("h800"));
  CHECK(h800.clocks.sustained_MHz == 1770);  // the same chip
  CHECK(h800.memory.hbm_GBps == Approx(3300.0 * 3350 / 4800));
  CHECK(h800.memory_params.at("hbm_GBps").origin == "carried");
  CHECK(h800.memory.saturation_exponent == 3.5);  // the chip's, unchanged
  CHECK(h800.memory_params.at("saturation_exponent").origin == "carried");
  CHECK(h800.memory_params.at("gemm_swizzle_n_blocks").origin == "carried");
  CHECK(h800.memory.l2_wave_skew == 1.25);  // the chip's, unchanged
  CHECK(h800.memory_params.at("l2_wave_skew").origin == "carried");
  CHECK(h800.clock_params.at("sustained_MHz").origin == "carried");
}

TEST_CASE("under sustained load GEMM tiles and copies run at the sustained clock", "[calibrate][load][cost]") {
  hw::GpuProfile p = *hw::find_profile("h200");
  p.clocks = hw::ClockModel{2000, 2000, 1600};  // 1.25 x slower at the sustained clock
  // The plain max: this shape's time is then its tiles' alone, all of which the clock stretches.
  // Under the bundled exponent its HBM term, which the clock does not stretch, adds a little (the
  // ratio below misses 1.25 by about 2e-4).
  p.gemm.hbm_overlap_exponent = 0;
  const hw::GpuSpec& gpu = *hw::find_gpu("h200");
  const hw::CalibratedCost fit(gpu, p, hw::ClockLoad::kFit), sustained(gpu, p, hw::ClockLoad::kSustained);
  const sim::GemmShape big{8192, 4096, 7168, sim::DType::kFp8};  // compute-bound
  const double launch = p.gemm.launch_us;
  const double t_fit = fit.gemm_time(0, big, 108).to_seconds() * 1e6;
  const double t_sus = sustained.gemm_time(0, big, 108).to_seconds() * 1e6;
  CHECK(t_sus - launch == Approx((t_fit - launch) * 1.25).epsilon(1e-6));
  CHECK(sustained.comm_copy_rate(0, 20, 0).gbytes_per_s() == Approx(fit.comm_copy_rate(0, 20, 0).gbytes_per_s() / 1.25));
  // Without a clocks section both loads are the fit's.
  p.clocks = {};
  const hw::CalibratedCost plain(gpu, p, hw::ClockLoad::kSustained);
  CHECK(plain.gemm_time(0, big, 108) == fit.gemm_time(0, big, 108));
}

TEST_CASE("a profile's memory section: bad contention parameters are refused at their values", "[calibrate][load][profile]") {
  const std::string text = calibrate::profile_yaml(*hw::find_profile("h200"));
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  const auto refused = [](const std::string& yaml, const std::string& what) {
    try {
      (void)hw::parse_profile(hw::parse_yaml(yaml, "p.yaml"));
      FAIL("accepted");
    } catch (const hw::UserError& e) {
      CHECK_THAT(e.what(), Catch::Contains(what));
      CHECK(e.line() > 0);
    }
  };
  // The bundled profile parses, with every contention parameter.
  const hw::GpuProfile p = hw::parse_profile(hw::parse_yaml(text, "p.yaml"));
  CHECK(p.memory.saturation_exponent > 0);
  CHECK(p.memory.gemm_swizzle_n_blocks == 8);
  const std::string exp = "saturation_exponent: {value: ";
  refused(with(exp, exp + "100"), "between 0.5 and 64");  // 100 prefixed to 3.866...: 1003.866...
  const size_t share = text.find("  l2_reuse_share:");
  REQUIRE(share != std::string::npos);
  refused(std::string(text).erase(share, text.find('\n', share) + 1 - share), "give both or neither");
  const std::string sw = "gemm_swizzle_n_blocks: {value: 8";
  refused(with(sw, "gemm_swizzle_n_blocks: {value: 8.5"), "whole number");
  CHECK(p.memory.l2_wave_skew > 0);
  CHECK(p.memory.l2_skew_max_tile_us > 0);
  const std::string skew = "l2_wave_skew: {value: ";
  refused(with(skew, skew + "9"), "at most 8");  // 9 prefixed to 0.9: 90.9
  refused(with(skew, skew + "-"), "greater than 0");
  const size_t max_tile = text.find("  l2_skew_max_tile_us:");
  REQUIRE(max_tile != std::string::npos);
  refused(std::string(text).erase(max_tile, text.find('\n', max_tile) + 1 - max_tile), "give both or neither");
  const std::string tile = "l2_skew_max_tile_us: {value: ";
  refused(with(tile, tile + "-"), "greater than 0");
  // The spread needs the traffic model it refines.
  std::string no_traffic = std::string(text).erase(share, text.find('\n', share) + 1 - share);
  const size_t sw_at = no_traffic.find("  gemm_swizzle_n_blocks:");
  no_traffic.erase(sw_at, no_traffic.find('\n', sw_at) + 1 - sw_at);
  refused(no_traffic, "needs the L2 traffic model");
}

}  // namespace CS_TEST_FILE
