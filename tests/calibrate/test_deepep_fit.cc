// DeepEP's internode kernels paced from their published H800 table (calibrate/deepep_fit.h): the
// fit's recovery of a known pace from a synthetic table, its refusals, and the bundled H800
// profiles as `calibrate deepep` writes the pace into them.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <vector>

#include "calibrate/deepep_fit.h"
#include "calibrate/profile_build.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {
hw::GpuProfile unpaced(const char* name) {
  hw::GpuProfile p = *hw::find_profile(name);
  p.deepep = {};
  p.deepep_params.clear();
  return p;
}
}  // namespace

TEST_CASE("the DeepEP fit recovers a known pace from a table the model wrote with it", "[deepep]") {
  hw::GpuProfile truth = unpaced("h800");
  truth.deepep.internode_channel_GBps = 3.7;
  std::vector<calibrate::DeepEpInternodeRow> rows;
  for (const calibrate::DeepEpInternodeRow& r : calibrate::deepep_internode_rows())
    rows.push_back({r.ep, r.dispatch, calibrate::deepep_internode_check(truth, r).predicted});
  const calibrate::DeepEpFit fit = calibrate::fit_deepep(unpaced("h800"), 16, rows);
  CHECK(fit.profile.deepep.internode_channel_GBps == Approx(3.7).epsilon(1e-6));
  REQUIRE(fit.fitted.size() == 2);
  REQUIRE(fit.held_out.size() == 4);
  for (const auto* set : {&fit.fitted, &fit.held_out})
    for (const calibrate::PublishedCheck& c : *set) CHECK(std::abs(c.error()) < 1e-6);
  CHECK(fit.profile.deepep_params.at("internode_channel_GBps").origin == "published");
}

TEST_CASE("the DeepEP fit refuses another GPU, a missing EP size and a row faster than the wire", "[deepep]") {
  CHECK_THROWS_AS(calibrate::fit_deepep(*hw::find_profile("h200")), hw::UserError);
  CHECK_THROWS_AS(calibrate::fit_deepep(unpaced("h800"), 128), hw::UserError);
  // 80 GB/s logical at EP16: half of it would cross a 50 GB/s NIC, which carries less unpaced.
  const std::vector<calibrate::DeepEpInternodeRow> fast = {{16, true, 200}};
  try {
    calibrate::fit_deepep(unpaced("h800"), 16, fast);
    FAIL("a row above the wire was fitted");
  } catch (const hw::UserError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("faster than the profile's links carry"));
  }
}

TEST_CASE("the bundled H800 profiles carry the pace calibrate deepep writes, within 10% of DeepEP's table held out",
          "[deepep]") {
  const calibrate::DeepEpFit fit = calibrate::fit_deepep(unpaced("h800"));
  for (const char* name : {"h800", "h800-deepgemm"}) {
    INFO(name);
    const hw::GpuProfile& bundled = *hw::find_profile(name);
    const hw::ProfileParam& pace = bundled.deepep_params.at("internode_channel_GBps");
    const hw::ProfileParam& fitted = fit.profile.deepep_params.at("internode_channel_GBps");
    CHECK(pace.value == Approx(fitted.value).epsilon(1e-10));  // the file keeps 12 digits
    CHECK(pace.source == fitted.source);
  }
  hw::GpuProfile written = fit.profile;
  written.file = hw::find_profile("h800")->file;
  CHECK(calibrate::profile_yaml(written) == calibrate::profile_yaml(*hw::find_profile("h800")));
  // A pace per channel of about 4.3 GB/s: DeepEP's 43 GB/s on 10 channels.
  CHECK(fit.profile.deepep.internode_channel_GBps == Approx(4.32).epsilon(0.01));
  for (const calibrate::PublishedCheck& c : fit.fitted) CHECK(std::abs(c.error()) < 0.01);
  for (const calibrate::PublishedCheck& c : fit.held_out) {
    INFO(c.name << ": published " << c.published << ", predicted " << c.predicted);
    CHECK(std::abs(c.error()) < 0.10);
  }
}

TEST_CASE("calibrate deepep writes the paced profile, and refuses another GPU's with nothing written",
          "[deepep][cli]") {
  test::TempDir tmp;
  const test::RunOutput ok = test::run_clustersim({"calibrate", "deepep", "h800", "-o", tmp.file("paced.yaml")});
  REQUIRE(ok.exit_code == 0);
  CHECK_THAT(ok.out, Catch::Matchers::Contains("held out (EP32, EP64)"));
  CHECK(hw::load_profile(tmp.file("paced.yaml")).deepep.internode_channel_GBps ==
        Approx(hw::find_profile("h800")->deepep.internode_channel_GBps).epsilon(1e-10));
  const test::RunOutput bad = test::run_clustersim({"calibrate", "deepep", "h200", "-o", tmp.file("bad.yaml")});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Matchers::Contains("DeepEP's table is of the H800"));
  CHECK(!std::ifstream(tmp.file("bad.yaml")).good());
}

}  // namespace CS_TEST_FILE
