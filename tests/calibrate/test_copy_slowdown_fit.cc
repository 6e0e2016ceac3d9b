// The copy's slowdown beside GEMMs (hw/gpu_profile.h, MemoryModel::copy_slowdown_beside_gemms):
// recovered from synthetic cases made with a known value, and the bundled H200 profile's value is
// the fit of its Nsight Compute overlap ranges.
#include <catch2/catch.hpp>

#include <vector>

#include "calibrate/copy_slowdown_fit.h"
#include "calibrate/measurements.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

TEST_CASE("copy slowdown beside GEMMs: the fit recovers the value synthetic cases were made with", "[calibrate][memory]") {
  const hw::GpuSpec& gpu = *hw::find_gpu("h200");
  hw::GpuProfile truth = *hw::find_profile("h200");
  truth.memory.copy_slowdown_beside_gemms = 0.3;
  std::vector<calibrate::OverlapTrafficCase> cases;
  for (const auto& [k, sms] : std::vector<std::pair<int, int>>{{4, 124}, {24, 108}, {48, 84}}) {
    calibrate::OverlapTrafficCase c;
    c.shape = "dense";
    c.gemm = {8192, 4096, 7168, sim::DType::kFp8, 1};
    c.copy_sms = k;
    c.compute_sms = sms;
    c.gemm_alone_us = 600;
    c.copy_payload_bytes = 268435456;
    c.copy_alone_us = 2e4 / k;
    c.copy_together_us = c.copy_alone_us * calibrate::simulated_copy_ratio(c, truth, gpu);
    cases.push_back(c);
  }
  hw::GpuProfile start = truth;
  start.memory.copy_slowdown_beside_gemms = 0;
  const calibrate::CopySlowdownFit f = calibrate::fit_copy_slowdown_beside_gemms(cases, start, gpu);
  CHECK(f.cases == 3);
  CHECK(f.slowdown == Approx(0.3).margin(1e-3));
  CHECK(f.median_error < 1e-3);
  CHECK(f.error_without > 0.05);  // the HBM queue alone leaves the cases well short
  // The slower the copy beside the GEMMs, the larger the simulated ratio.
  CHECK(calibrate::simulated_copy_ratio(cases[0], truth, gpu) > calibrate::simulated_copy_ratio(cases[0], start, gpu));
}

TEST_CASE("the bundled H200 profile's copy slowdown is the fit of its overlap ranges under Nsight Compute", "[calibrate][memory][data]") {
  calibrate::MeasurementSet set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/overlap_dram_ranges.json", set);
  const hw::GpuProfile& p = *hw::find_profile("h200");
  hw::GpuProfile without = p;
  without.memory.copy_slowdown_beside_gemms = 0;
  const calibrate::CopySlowdownFit f = calibrate::fit_copy_slowdown_beside_gemms(set.overlap_traffic, without, *hw::find_gpu("h200"));
  CHECK(f.cases == 6);
  CHECK(f.slowdown == Approx(p.memory.copy_slowdown_beside_gemms).epsilon(1e-6));  // the YAML's digits
  CHECK(f.slowdown > 0.1);        // 0.146: a copy 12-13% slower beside GEMMs on 108-124 SMs
  CHECK(f.error_without > 0.08);  // 9.9%: the HBM queue explains little of it
  CHECK(f.median_error < 0.02);   // 1.3%
}

}  // namespace CS_TEST_FILE
