// cs_fp8_gemm --probe-clocks: a case's SM clock read on the SMs right after each timed run
// ("sm_clock_probed") is the clock calibrate takes for it, ahead of NVML's samples, which lag a
// short case (kernels/fp8_gemm/clock_probe.h).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/measurements.h"
#include "hw/user_error.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;
using nlohmann::json;

TEST_CASE("a probed GEMM case is taken at its probed clock, an unprobed one at NVML's", "[calibrate][data]") {
  json d = json::parse(test::read_file(test::source_dir() + "/calibrate/data/h200/fp8_gemm_clocks_falling.json"));
  auto& cases = d.at("cases");
  // Two cases the reader keeps (green_sm_target, block scaling: measurements.cc).
  size_t first = cases.size(), second = cases.size();
  for (size_t i = 0; i < cases.size() && second == cases.size(); ++i)
    if (cases[i].at("method") == "green_sm_target") (first == cases.size() ? first : second) = i;
  REQUIRE(second < cases.size());
  const double nvml = cases[second].at("clocks").at("sm_mhz_median").get<double>();
  cases[first]["sm_clock_probed"] = {{"probes", 60}, {"mhz_median", 1432.5}, {"mhz_p10", 1420.0}, {"mhz_p90", 1440.0}};
  test::TempDir tmp;
  test::write_file(tmp.file("probed.json"), d.dump());
  calibrate::MeasurementSet set;
  calibrate::read_measurements(tmp.file("probed.json"), set);
  const auto at = [](const calibrate::MeasurementSet& s, size_t index) {
    for (const auto& g : s.gemms)
      if (g.index == static_cast<int>(index)) return g.clock_MHz;
    FAIL("case " << index << " not read");
    return 0.0;
  };
  CHECK(at(set, first) == 1432.5);
  CHECK(at(set, second) == nvml);
  REQUIRE(!set.notes.empty());
  CHECK_THAT(set.notes.back(), Catch::Matchers::Contains("probed or sampled"));

  // No probe taken: NVML's clock, as before.
  cases[first]["sm_clock_probed"]["probes"] = 0;
  test::write_file(tmp.file("unprobed.json"), d.dump());
  calibrate::MeasurementSet again;
  calibrate::read_measurements(tmp.file("unprobed.json"), again);
  CHECK(at(again, first) == cases[first].at("clocks").at("sm_mhz_median").get<double>());
  CHECK_THAT(again.notes.back(), Catch::Matchers::Contains("sampled by NVML"));

  // A probe without its median is malformed input, named at its place.
  cases[first]["sm_clock_probed"] = {{"probes", 60}};
  test::write_file(tmp.file("bad.json"), d.dump());
  calibrate::MeasurementSet bad;
  CHECK_THROWS_WITH(calibrate::read_measurements(tmp.file("bad.json"), bad), Catch::Matchers::Contains("sm_clock_probed"));
}

}  // namespace CS_TEST_FILE
