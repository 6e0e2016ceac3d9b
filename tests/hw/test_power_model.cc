// hw::PowerModel: the power at a clock, the clock the limit leaves, and a GEMM's time at a clock.
#include <catch2/catch.hpp>

#include <cmath>

#include "hw/power_model.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::hw::PowerModel;
using cs::sim::PowerLoad;

namespace {
// Round figures of the H100 fit's size (hw/profiles/h100.yaml, power).
PowerModel model() { return {700, 120, 1980, 15, 2, 1.8, 1.0, 90, 0.4, 50}; }
}  // namespace

TEST_CASE("a GEMM's time follows the SM clock in the measured share", "[hw][power]") {
  const PowerModel p = model();
  CHECK(cs::hw::clock_stretch(p, 1900, 1900) == 1);
  CHECK(cs::hw::clock_stretch(p, 950, 1900) == Approx(0.6 + 0.4 * 2));
  CHECK(cs::hw::clock_stretch(p, 1980, 1900) < 1);  // above the reference clock: faster
}

TEST_CASE("the board's power: static, MMA energy falling with the clock, HBM energy not", "[hw][power]") {
  const PowerModel p = model();
  CHECK(cs::hw::board_power_W(p, 1980, 1980, {}) == 120);
  CHECK(cs::hw::board_power_W(p, 1980, 1980, {300, 100, 50}) == Approx(120 + 300 + 100 + 50));
  // At half the clock: MMA energy per operation x 1/4, a GEMM's rate / 1.4 (0.6 + 0.4 x 2).
  CHECK(cs::hw::board_power_W(p, 990, 1980, {300, 100, 50}) == Approx(120 + 0.25 * (300 / 1.4 + 100) + 50));
}

TEST_CASE("the power limit leaves the highest clock step within it", "[hw][power]") {
  const PowerModel p = model();
  CHECK(cs::hw::capped_clock_MHz(p, 1980, {400, 0, 100}) == 1980);  // 620 W: within the limit
  for (double gemm_W : {700.0, 1000.0, 1500.0, 3000.0}) {
    const PowerLoad load{gemm_W, 0, 40};
    const double f = cs::hw::capped_clock_MHz(p, 1980, load);
    INFO(gemm_W << " W at max: " << f << " MHz");
    CHECK(std::fmod(f, 15) == 0);
    CHECK(cs::hw::board_power_W(p, f, 1980, load) <= 700);
    CHECK(cs::hw::board_power_W(p, f + 15, 1980, load) > 700);
  }
  // More draw, a lower clock.
  CHECK(cs::hw::capped_clock_MHz(p, 1980, {3000, 0, 0}) < cs::hw::capped_clock_MHz(p, 1980, {1500, 0, 0}));
  // HBM energy alone beyond the limit: nothing the clock can do; the lowest step.
  CHECK(cs::hw::capped_clock_MHz(p, 1980, {0, 0, 900}) == 15);
}

}  // namespace CS_TEST_FILE
