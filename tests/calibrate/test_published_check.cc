// The bundled H800 profile (carried from our H200 fit) against DeepSeek's published H800 tables.
// What holds today is asserted; where the model misses (DeepGEMM's small-m and small-k shapes,
// a different kernel from the cuBLASLt one we measured) the test pins the direction of the miss,
// so a change that moves it shows here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "calibrate/published_check.h"
#include "hw/gemm_model.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {
const hw::GpuProfile& h800() { return *hw::find_profile("h800"); }
const hw::GpuSpec& h800_gpu() { return *hw::find_gpu("h800"); }
}  // namespace

TEST_CASE("DeepGEMM rows are the engine's GEMM time on 132 SMs less the launch", "[published]") {
  const auto checks = calibrate::check_deepgemm(h800(), h800_gpu());
  REQUIRE(checks.size() == 22);
  CHECK(std::count_if(checks.begin(), checks.end(), [](const auto& c) { return c.table == "DeepGEMM dense"; }) == 18);
  const auto& c = checks[16];  // m 4096 n 4096 k 7168
  REQUIRE(c.name == "m 4096 n 4096 k 7168");
  CHECK(c.published == 1304);
  sim::GemmShape g;
  g.m = 4096, g.n = 4096, g.k = 7168, g.dtype = sim::DType::kFp8;
  const double kernel_us = hw::gemm_model_us(h800().gemm, g, 132, 1.0) - h800().gemm.launch_us;
  CHECK(c.predicted == Approx(2.0 * 4096 * 4096 * 7168 / kernel_us * 1e-6).epsilon(1e-5));
}

TEST_CASE("large DeepGEMM shapes with deep k agree within 10%, small m with deep k is under- and small k over-predicted", "[published]") {
  for (const auto& c : calibrate::check_deepgemm(h800(), h800_gpu())) {
    INFO(c.table << " " << c.name << ": published " << c.published << ", predicted " << c.predicted);
    const bool small_m = c.name.find("m 64 ") == 0 || c.name.find("m 128 ") == 0;
    const bool deep_k = c.name.find("k 7168") != std::string::npos || c.name.find("k 16384") != std::string::npos;
    // 6-8% fast: the check runs at the fit's reference clock (1931 MHz), where DeepGEMM's bench ran
    // its large shapes under the power cap, as our sweep's probes show ours ran (1514-1582 MHz for
    // 4096 x 36864 x 7168 on 132 SMs); the fit on clocks read on the SMs prices them at their clock.
    if (!small_m && deep_k && c.table == "DeepGEMM dense") {
      CHECK(c.error() > 0);
      CHECK(c.error() < 0.10);
    }
    // DeepGEMM picks 64-row and narrow tiles for small m; the cuBLASLt-fitted model keeps 128 x 128.
    if (small_m && deep_k) CHECK(c.error() < -0.15);
    if (!small_m && !deep_k) CHECK(c.error() > 0.10);
  }
}

TEST_CASE("DeepEP's intranode bandwidths come out within 10%", "[published]") {
  const auto checks = calibrate::check_deepep_intranode(h800(), h800_gpu());
  REQUIRE(checks.size() == 2);
  CHECK(checks[0].published == 153);
  CHECK(checks[1].published == 158);
  for (const auto& c : checks) {
    INFO(c.name << ": " << c.predicted << " GB/s");
    CHECK(std::abs(c.error()) < 0.10);
    // NVLink-bound on 20 SMs: never above the profile's measured-and-carried link rate.
    CHECK(c.predicted <= h800().comm.nvlink_GBps);
  }
}

TEST_CASE("DeepEP's internode bandwidths: paced as DeepEP's kernels, within 10% of every row", "[published]") {
  const auto checks = calibrate::check_deepep_internode(h800());
  REQUIRE(checks.size() == 6);
  CHECK(checks[0].name == "EP16 dispatch (FP8)");
  CHECK(checks[5].name == "EP64 combine (BF16)");
  CHECK(checks[4].published == 46);
  REQUIRE(h800().deepep.present());
  for (const auto& c : checks) {
    INFO(c.name << ": " << c.predicted << " GB/s logical (a token counted once per node it reaches)");
    CHECK(std::abs(c.error()) < 0.10);
    // The kernel's pace on 20 SMs binds, at the clock DeepEP's test runs its kernels alone at.
    CHECK(c.predicted <= h800().deepep.internode_GBps(20) * 1.0001);
  }
}

TEST_CASE("DeepEP's internode bandwidths unpaced: the model's IB runs at line rate, above DeepEP's February kernel",
          "[published]") {
  hw::GpuProfile unpaced = h800();
  unpaced.deepep = {};
  const auto checks = calibrate::check_deepep_internode(unpaced);
  REQUIRE(checks.size() == 6);
  for (const auto& c : checks) {
    INFO(c.name << ": " << c.predicted << " GB/s logical (a token counted once per node it reaches)");
    // Without the pace each NIC runs at the wire's 50 GB/s, where DeepEP's kernel of February 2025
    // reached less (its April update 12-14% more at EP32 and EP64): the mechanism deepep paces.
    CHECK(c.error() > 0.15);
    CHECK(c.error() < 0.60);
  }
  // EP32's tokens reach nearly all of its 4 nodes, their own among them, while EP64's reach 4 of
  // 8: more of EP32's logical bytes stay on the node and cross no NIC.
  CHECK(checks[2].predicted > checks[4].predicted);
}

}  // namespace CS_TEST_FILE
