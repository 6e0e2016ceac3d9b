// The H200 profile against the GEMM / all-to-all overlap bench (calibrate/data/h200/overlap.json):
// the optimum SM split is asserted (the acceptance), the makespan's miss is pinned in
// direction and size. The profile's sustained clocks and HBM ceiling took it from 17% to 7.4% at
// the median, HBM as a saturating queue with the GEMMs' real traffic to 5.6% (then helped by a
// GEMM counting its own predecessor's traffic as another kernel's; without that, and with the
// sharing a wave loses beside the copy, 5.6% and 15.6% worst); what is left is the copy kernel's local rate, the GEMMs on
// partitions, and HBM carrying less of a mixed load (README).
#include <catch2/catch.hpp>

#include <algorithm>

#include "calibrate/validate.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {
const calibrate::Validation& validation() {
  static const calibrate::Validation v = [] {
    calibrate::MeasurementSet set;
    calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/overlap.json", set);
    return calibrate::validate_profile(*hw::find_profile("h200"), *hw::find_gpu("h200"), set, 4);
  }();
  return v;
}
}  // namespace

TEST_CASE("overlap: every bench case is simulated as the bench ran it", "[calibrate][overlap]") {
  const auto& v = validation();
  const auto n = std::count_if(v.cases.begin(), v.cases.end(), [](const auto& c) { return c.kind == "overlap"; });
  CHECK(n == 16);  // 2 shapes x 8 CTA counts (k = 0 is the GEMM alone)
  CHECK(v.overlap.cases == 16);
  for (const auto& c : v.cases) {
    if (c.kind != "overlap") continue;
    INFO(c.label << ": measured " << c.measured_us << ", predicted " << c.predicted_us);
    CHECK(c.held_out);
    // Up to 32 copy SMs the copy is the longer stream, and it slows beside the GEMMs as the
    // profile's copy_slowdown_beside_gemms says (fitted to other runs, under Nsight Compute):
    // within -1% and +6.1%, a little long where the sustained clock already slows it more than the
    // bench's copy alone ran. At 48 the GEMMs are the longer stream, 15.7-18.2% short: HBM carries
    // 3.28 TB/s of copy and GEMM traffic together, no more than the copy alone there, where the
    // queue model carries more (mixed streams lose efficiency the model does not have), and the
    // GEMMs read 1.76 times their bytes alone (overlap_dram_ranges.json) where the engine gives
    // 1.54.
    const bool gemm_bound = c.label.find("on 48 SMs") != std::string::npos;
    CHECK(c.error() < (gemm_bound ? -0.1 : 0.07));
    CHECK(c.error() > (gemm_bound ? -0.2 : -0.02));
  }
  // 3.7% median. Without the copy's slowdown beside GEMMs: 5.6% (every case short); without the
  // sustained clocks too: 17.2% median, 38.0% worst; without the HBM queue and the GEMMs' real
  // traffic: 7.4%, 32.4%.
  CHECK(v.overlap.median_error < 0.045);
}

TEST_CASE("overlap: the predicted best SM split is within one sweep step of the measured one", "[calibrate][overlap]") {
  const auto& v = validation();
  REQUIRE(v.optima.size() == 2);
  for (const auto& o : v.optima) {
    INFO(o.shape << ": measured best " << o.measured_best << ", predicted " << o.predicted_best);
    CHECK(o.ctas == std::vector<int>{4, 8, 12, 16, 20, 24, 32, 48});
    CHECK(o.steps_apart <= 1);
    // The job's measured time falls, then rises: starved communication, then starved compute.
    const double best = *std::min_element(o.measured_us.begin(), o.measured_us.end());
    CHECK(o.measured_us.front() > 1.5 * best);
    CHECK(o.measured_us.back() > 1.1 * best);
  }
}

}  // namespace CS_TEST_FILE
