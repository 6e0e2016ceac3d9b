// The memory system's contention mechanisms: fits recovering known parameters from synthetic
// data, and the fitted model against what we measured (DRAM bytes under Nsight Compute of the
// sweep's GEMMs on an H100, and of the overlap bench's GEMMs beside the copy on an H200).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/memory_fit.h"
#include "calibrate/measurements.h"
#include "calibrate/profile_build.h"
#include "hw/calibrated_cost.h"
#include "hw/gemm_model.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "test_support.h"

using namespace cs;

TEST_CASE("the HBM saturation fit recovers a known exponent from copies on 4 to 48 SMs", "[calibrate][memory]") {
  for (double p : {2.0, 3.5, 8.0}) {
    std::vector<calibrate::OverlapCase> cases;
    for (int k : {4, 8, 12, 16, 20, 24, 32, 48}) {
      calibrate::OverlapCase c;
      c.ctas = k;
      c.local_copy_only = true;
      c.a2a_bytes = 268435456;
      c.a2a_alone_us = calibrate::saturated_copy_us(c.a2a_bytes, k, 41, 4200, p);
      cases.push_back(c);
    }
    const calibrate::HbmSaturationFit f = calibrate::fit_hbm_saturation(cases, 4200, 41);
    CHECK(f.cases == 8);
    CHECK(f.exponent == Approx(p).epsilon(1e-3));
    CHECK(f.worst_error < 1e-4);
  }
  CHECK(calibrate::fit_hbm_saturation({}, 4200, 41).cases == 0);
}

TEST_CASE("the GEMM traffic fit recovers a known raster band and L2 share", "[calibrate][memory]") {
  const hw::GpuSpec& gpu = *hw::find_gpu("h100");
  std::vector<calibrate::GemmTrafficCase> cases;
  for (auto [m, n, k] : {std::tuple{4096, 7168, 16384}, {4096, 4096, 7168}, {4096, 2112, 7168}, {8192, 7168, 2048},
                         {4096, 36864, 7168}, {24576, 1536, 4096}, {4096, 7168, 8192}}) {
    calibrate::GemmTrafficCase c;
    c.shape = {m, n, k, sim::DType::kFp8, 1};
    c.sms = 112;
    cases.push_back(c);
  }
  for (auto [band, share] : {std::pair{16, 0.75}, {2, 0.25}}) {
    for (auto& c : cases) c.read_bytes = calibrate::predicted_read_bytes(c, gpu, band, share);
    const calibrate::GemmTrafficFit f = calibrate::fit_gemm_traffic(cases, gpu);
    CHECK(f.swizzle_n_blocks == band);
    CHECK(f.l2_reuse_share == share);
    CHECK(f.worst_error < 1e-9);
  }
}

TEST_CASE("H100 DRAM bytes: the fitted traffic model against Nsight Compute", "[calibrate][memory][data]") {
  calibrate::MeasurementSet set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/fp8_gemm_dram_bytes.json", set);
  REQUIRE(set.gemm_traffic.size() == 28);
  const hw::GpuSpec& gpu = *hw::find_gpu("h100");
  const calibrate::GemmTrafficFit f = calibrate::fit_gemm_traffic(set.gemm_traffic, gpu);
  // What the bundled profiles carry (hw/profiles/h200.yaml, memory section).
  CHECK(f.swizzle_n_blocks == 8);
  CHECK(f.l2_reuse_share == 0.5);
  CHECK(hw::find_profile("h200")->memory.gemm_swizzle_n_blocks == 8);
  CHECK(hw::find_profile("h200")->memory.l2_reuse_share == 0.5);
  // 21.6% median over the 16 shapes of more than one row of tiles; 56.7% worst, the grouped
  // 8192 x 7168 x 2048 (the model keeps its operands in L2, the GPU reads them 2.7 times).
  CHECK(f.reuse_cases == 16);
  CHECK(f.reuse_median_error < 0.25);
  CHECK(f.worst_error < 0.6);
  // The overlap bench's GEMM, 4 x 8192 x 4096 x 7168: 3.05 times its compulsory reads, predicted 3.00.
  bool seen = false;
  for (const auto& c : set.gemm_traffic)
    if (c.shape.m == 8192 && c.shape.n == 4096 && c.shape.groups == 4) {
      seen = true;
      const double compulsory = (8192.0 + 4096.0) * 7168;
      CHECK(c.read_bytes / compulsory == Approx(3.05).epsilon(0.01));
      CHECK(calibrate::predicted_read_bytes(c, gpu, f.swizzle_n_blocks, f.l2_reuse_share) ==
            Approx(c.read_bytes).epsilon(0.03));
    }
  CHECK(seen);
}

TEST_CASE("H200: beside the copy the GEMMs read more, as their share of L2 shrinks", "[calibrate][memory][data]") {
  // calibrate/data/h200/overlap_dram_ranges.json: the overlap bench's windows as Nsight Compute
  // ranges (GEMMs alone, copy alone, together), 2026-11-25.
  const auto d = nlohmann::json::parse(test::read_file(test::source_dir() + "/calibrate/data/h200/overlap_dram_ranges.json"));
  REQUIRE(d["cases"].size() == 6);
  const hw::CalibratedCost cost(*hw::find_gpu("h200"), *hw::find_profile("h200"));
  for (const auto& c : d["cases"]) {
    const sim::GemmShape g{c["m"], c["n"], c["k_dim"], sim::DType::kFp8, c["groups"]};
    const int k = c["k"];
    const double alone = c["gemm_alone_dram_bytes"], together = c["gemm_together_dram_bytes"];
    const double copy = c["copy_alone_dram_bytes"], a2a = c["a2a_bytes"];
    INFO(c["shape"].get<std::string>() << " beside the copy on " << k << " SMs");
    // The copy reads and writes its bytes once each: the executor's two HBM crossings.
    CHECK(copy == Approx(2 * a2a).epsilon(0.005));
    // The GEMM alone moves over twice its compulsory bytes (it reads A and B 2.5 to 3.2 times).
    CHECK(alone / hw::gemm_compulsory_bytes(g) > 1.5);
    // The executor's L2 share: the GEMM's traffic rate alone against the copy's beside it.
    const double own = cost.gemm_hbm_bytes(0, g, 1) / (c["gemm_alone_us"].get<double>() * 1e-6);
    const double others = copy / (c["a2a_together_us"].get<double>() * 1e-6);
    const double predicted = cost.gemm_hbm_bytes(0, g, own / (own + others)) / cost.gemm_hbm_bytes(0, g, 1);
    const double measured = together / alone;
    INFO("measured " << measured << ", predicted " << predicted);
    // Measured: 1.06-1.07 beside 4 copy SMs, 1.40-1.49 beside 24, 1.71-1.76 beside 48.
    CHECK(measured > (k == 4 ? 1.03 : k == 24 ? 1.35 : 1.65));
    CHECK(predicted >= 1);
    // The model keeps a wave's shared panels shared however little L2 is left, so it finds only
    // part of the rise: 1.25 of 1.40-1.49 beside 24 SMs, 1.36 of 1.71-1.76 beside 48 (the rest is
    // sharing within a wave lost too); beside 4 SMs both are within 10% of no rise.
    CHECK(predicted <= measured);
    if (k == 4) CHECK(predicted / measured > 0.9);
    else CHECK(predicted - 1 > 0.45 * (measured - 1));
  }
}

TEST_CASE("DRAM-byte files: impossible cases are refused, and only a GPU of the same SMs and L2 lends its bytes",
          "[calibrate][memory]") {
  test::TempDir dir;
  const std::string path = dir.file("dram_bytes.json");
  const auto write = [&](const std::string& gpu, double read) {
    nlohmann::json d = {{"schema_version", 1},
                        {"provenance", {{"program", "ncu_dram_bytes"}, {"gpus", {{{"name", gpu}}}}}},
                        {"cases", {{{"name", "t"}, {"m", 4096}, {"n", 4096}, {"k", 7168}, {"groups", 1}, {"sms", 112},
                                    {"dram_read_bytes", read}, {"dram_write_bytes", 0}}}}};
    test::write_file(path, d.dump());
  };
  calibrate::MeasurementSet bad;
  write("NVIDIA H100 80GB HBM3", 0);
  CHECK_THROWS_AS(calibrate::read_measurements(path, bad), hw::UserError);

  const hw::GpuSpec& h200 = *hw::find_gpu("h200");
  calibrate::Provenance prov;
  prov.gpu = "NVIDIA H100 80GB HBM3";
  CHECK(calibrate::traffic_gpu(prov, h200) == hw::find_gpu("h100"));  // 132 SMs and 50 MB of L2 both
  prov.gpu = "NVIDIA H200";
  CHECK(calibrate::traffic_gpu(prov, h200) == &h200);
  prov.gpu = "NVIDIA A100-SXM4-80GB";  // not in the catalog: nothing says its L2 is the H200's
  CHECK(calibrate::traffic_gpu(prov, h200) == nullptr);

  calibrate::MeasurementSet set;
  for (const char* f : {"fp8_gemm.json", "all_to_all.json"})
    calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/" + f, set);
  calibrate::MeasurementSet with_a100 = set;
  write("NVIDIA A100-SXM4-80GB", 1e8);
  calibrate::read_measurements(path, with_a100);
  try {
    (void)calibrate::build_profile(with_a100, h200, 4);
    FAIL("an A100's DRAM bytes were taken for the H200");
  } catch (const hw::UserError& e) {
    CHECK_THAT(e.what(), Catch::Contains("nor a catalog GPU of its SM count and L2"));
  }
  write("NVIDIA H100 80GB HBM3", 1e8);
  calibrate::read_measurements(path, set);
  const calibrate::ProfileBuild b = calibrate::build_profile(set, h200, 4);
  CHECK(b.profile.memory_params.count("gemm_swizzle_n_blocks") == 0);  // no memory section without copies
}

TEST_CASE("the bundled H200 profile's HBM exponent is the fit of its overlap bench's copies", "[calibrate][memory][data]") {
  calibrate::MeasurementSet set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/overlap.json", set);
  const hw::GpuProfile& p = *hw::find_profile("h200");
  const double copy = p.comm.sm_copy_GBps * p.clocks.sustained_MHz / p.clocks.comm_fit_MHz;
  const calibrate::HbmSaturationFit f = calibrate::fit_hbm_saturation(set.overlaps, p.memory.hbm_GBps, copy);
  CHECK(f.cases == 16);
  CHECK(f.min_ctas == 4);
  CHECK(f.max_ctas == 48);
  CHECK(f.exponent == Approx(p.memory.saturation_exponent).epsilon(1e-6));
  CHECK(f.median_error < 0.05);  // 3.2%
  CHECK(f.worst_error < 0.08);   // 7.0%
}
