// FP8 GEMMs with 1x128 scales on both operands (hw::GemmFp8TilesModel): the fit recovers a known
// slowdown from synthetic pairs, the bundled profiles hold the fit of the H100's measured pairs,
// the cost model prices the weight gradients with it and nothing else, and the section reads back.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "calibrate/measurements.h"
#include "calibrate/profile_build.h"
#include "calibrate/tile_scaling_fit.h"
#include "calibrate/validate.h"
#include "hw/calibrated_cost.h"
#include "hw/gemm_model.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "hw/yaml_reader.h"
#include "models/layer_ops.h"
#include "models/model_zoo.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {
calibrate::GemmCase gemm_case(const std::string& name, sim::GemmShape g, sim::Fp8Scaling s, int sms, double us) {
  calibrate::GemmCase c;
  c.name = name;
  c.shape = g;
  c.shape.scaling = s;
  c.sms = sms;
  c.time_us = us;
  return c;
}
}  // namespace

TEST_CASE("FP8 tile scaling: the fit recovers the MMA slowdown synthetic pairs were made with", "[calibrate][gemm]") {
  const hw::GemmModel& fp8 = hw::find_profile("h200")->gemm;
  constexpr double kTruth = 1.4;
  std::vector<calibrate::GemmCase> cases;
  const std::vector<sim::GemmShape> shapes = {{7168, 4096, 4096, sim::DType::kFp8, 1},
                                              {16384, 7168, 4096, sim::DType::kFp8, 1},
                                              {2048, 7168, 8192, sim::DType::kFp8, 1}};
  for (const sim::GemmShape& g : shapes)
    for (int sms : {132, 112, 32}) {
      const double blocks = hw::gemm_model_us(fp8, g, sms), tiles = hw::gemm_model_us(fp8, g, sms, 1 / kTruth);
      cases.push_back(gemm_case("s", g, sim::Fp8Scaling::kWeightBlocks, sms, blocks));
      cases.push_back(gemm_case("s", g, sim::Fp8Scaling::kTiles, sms, tiles));
    }
  // A pair whose tiles ran faster (cuBLASLt's slow pick for the blocks) is left out, as is one no
  // slowdown up to kMaxTileSlowdown explains; unpaired cases of either scaling are counted apart.
  cases.push_back(gemm_case("odd", shapes[0], sim::Fp8Scaling::kWeightBlocks, 64, 500));
  cases.push_back(gemm_case("odd", shapes[0], sim::Fp8Scaling::kTiles, 64, 300));
  cases.push_back(gemm_case("slow", shapes[0], sim::Fp8Scaling::kWeightBlocks, 64, 500));
  cases.push_back(gemm_case("slow", shapes[0], sim::Fp8Scaling::kTiles, 64, 5000));
  cases.push_back(gemm_case("lone", shapes[1], sim::Fp8Scaling::kTiles, 64, 300));
  cases.push_back(gemm_case("lone", shapes[2], sim::Fp8Scaling::kWeightBlocks, 64, 300));
  const calibrate::TileScalingFit f = calibrate::fit_tile_scaling(cases, fp8);
  CHECK(f.pairs == 9);
  CHECK(f.tiles_faster == 1);
  CHECK(f.beyond_max == 1);
  CHECK(f.unpaired == 2);
  CHECK(f.mma_slowdown == Approx(kTruth).epsilon(1e-6));
  CHECK(f.worst_error < 1e-6);
  // The model's time ratio rises with the slowdown but stays below it: launch and tile overhead
  // do not stretch.
  const double r = hw::gemm_model_us(fp8, shapes[0], 132, 1 / kTruth) / hw::gemm_model_us(fp8, shapes[0], 132);
  CHECK(r > 1.2);
  CHECK(r < kTruth);
  CHECK(std::isnan(calibrate::pair_tile_slowdown(fp8, shapes[0], 132, 0.9)));
  CHECK(std::isnan(calibrate::pair_tile_slowdown(fp8, shapes[0], 132, calibrate::kMaxTileSlowdown * 2)));

  std::vector<calibrate::GemmCase> none = {cases.end()[-6], cases.end()[-5]};
  CHECK_THROWS_AS(calibrate::fit_tile_scaling(none, fp8), hw::UserError);
  std::vector<calibrate::GemmCase> twice = cases;
  twice.push_back(cases.front());
  CHECK_THROWS_WITH(calibrate::fit_tile_scaling(twice, fp8), Catch::Contains("measured twice"));
}

TEST_CASE("FP8 tile scaling: the bundled profiles hold the fit of the H100's measured pairs", "[calibrate][gemm][data]") {
  calibrate::MeasurementSet set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/fp8_tile_scaling.json", set);
  REQUIRE(set.fp8_scaling_gemms.size() == 136);  // 17 shapes x 4 SM counts x 2 scalings
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  const calibrate::TileScalingFit f = calibrate::fit_tile_scaling(set.fp8_scaling_gemms, h200.gemm);
  // A case of a scaling the fit does not know is refused, naming it.
  std::string text = test::read_file(test::source_dir() + "/calibrate/data/h100/fp8_tile_scaling.json");
  const size_t at = text.find("\"tile_1x128_1x128\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 18, "\"tile_1x64_1x64\"");
  const test::TempDir dir;
  test::write_file(dir.path() + "/bad.json", text);
  calibrate::MeasurementSet bad;
  CHECK_THROWS_WITH(calibrate::read_measurements(dir.path() + "/bad.json", bad), Catch::Contains("tile_1x128_1x128"));
  std::string bf16 = test::read_file(test::source_dir() + "/calibrate/data/h100/fp8_tile_scaling.json");
  const std::string fp8_dtype = "\"dtype\": \"fp8\"";
  const size_t dt = bf16.find(fp8_dtype);
  REQUIRE(dt != std::string::npos);
  bf16.replace(dt, fp8_dtype.size(), "\"dtype\": \"bf16\"");
  test::write_file(dir.path() + "/bf16.json", bf16);
  calibrate::MeasurementSet wrong;
  CHECK_THROWS_WITH(calibrate::read_measurements(dir.path() + "/bf16.json", wrong), Catch::Contains("dtype must be \"fp8\""));
  CHECK(f.pairs + f.tiles_faster + f.beyond_max == 68);
  CHECK(f.unpaired == 0);
  CHECK(f.tiles_faster == 3);  // kv_down's n = 640 on 132 SMs, kv_up's k = 512 on 32 and 64 SMs
  CHECK(f.beyond_max == 0);
  CHECK(f.mma_slowdown == Approx(h200.gemm_fp8_tiles.mma_slowdown).epsilon(1e-6));  // the YAML's digits
  CHECK(f.mma_slowdown > 1.25);  // the kernels' time 1.28-1.36 times longer, by SM count
  CHECK(f.median_error < 0.03);
  // Validated as times (not ratios) on the H100's own profile: both scalings' kernels, the blocks'
  // never fitted (PyTorch's shapes), the tiles' at the slowdown. The worst are cuBLASLt's odd picks.
  const calibrate::Validation v = calibrate::validate_profile(*hw::find_profile("h100"), *hw::find_gpu("h100"), set, 4);
  CHECK(v.gemm_scalings.cases == 136);
  for (const calibrate::CaseCheck& c : v.cases) {
    INFO(c.label);
    CHECK_FALSE(c.held_out);  // the blocks' never fitted, the tiles' only as ratios
  }
  CHECK(v.gemm_tiles.cases == 68);
  CHECK(v.gemm_scalings.median_error < 0.08);  // 4.9%
  CHECK(v.gemm_tiles.median_error < 0.08);     // 4.4%
  for (const char* gpu : {"h800", "h100"}) {
    INFO(gpu);
    const hw::GpuProfile& p = *hw::find_profile(gpu);
    CHECK(p.gemm_fp8_tiles.mma_slowdown == h200.gemm_fp8_tiles.mma_slowdown);  // the same chip
    CHECK(p.gemm_fp8_tiles_params.at("mma_slowdown").origin == "carried");
  }
}

TEST_CASE("FP8 tile scaling: the weight gradients, and only they, take the slowdown", "[calibrate][gemm]") {
  models::LayerContext c;
  c.tokens = c.seq_len = 4096;
  c.ep = 64;
  const models::ModelSpec& v3 = *models::find_zoo_model("deepseek-v3");
  int wgrads = 0;
  for (const models::LayerOp& op : models::layer_ops(v3, 5, c)) {
    if (op.kind != models::LayerOpKind::kGemm) continue;
    INFO(op.name);
    const bool fp8_wgrad = op.pass == models::Pass::kBackwardWeight && op.gemm.dtype == sim::DType::kFp8;
    CHECK((op.gemm.scaling == sim::Fp8Scaling::kTiles) == fp8_wgrad);
    wgrads += fp8_wgrad;
  }
  CHECK(wgrads == 9);  // q_down, q_up, kv_down, kv_up, o_proj, shared up and down, experts up and down
  c.fp8 = false;
  for (const models::LayerOp& op : models::layer_ops(v3, 5, c)) CHECK(op.gemm.scaling == sim::Fp8Scaling::kWeightBlocks);

  const hw::GpuSpec& gpu = *hw::find_gpu("h800");
  const hw::GpuProfile& p = *hw::find_profile("h800");
  hw::GpuProfile without = p;
  without.gemm_fp8_tiles = {};
  const hw::CalibratedCost with_cost(gpu, p, hw::ClockLoad::kFit), without_cost(gpu, without, hw::ClockLoad::kFit);
  sim::GemmShape g{7168, 4096, 8192, sim::DType::kFp8, 4};
  const double blocks = with_cost.gemm_time(0, g, 112).to_seconds();
  g.scaling = sim::Fp8Scaling::kTiles;
  const double tiles = with_cost.gemm_time(0, g, 112).to_seconds();
  CHECK(tiles / blocks > 1.2);
  CHECK(tiles / blocks < p.gemm_fp8_tiles.mma_slowdown);
  CHECK(without_cost.gemm_time(0, g, 112).to_seconds() == Approx(blocks).epsilon(1e-9));
  // BF16 has no such scaling: the field is ignored.
  sim::GemmShape b{7168, 4096, 8192, sim::DType::kBf16, 1, sim::Fp8Scaling::kTiles};
  CHECK(with_cost.gemm_time(0, b, 112) == without_cost.gemm_time(0, b, 112));
}

TEST_CASE("FP8 tile scaling: the profile section reads back, and a bad value is refused", "[calibrate][profile]") {
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  const std::string yaml = calibrate::profile_yaml(h200);
  const hw::GpuProfile back = hw::parse_profile(hw::parse_yaml(yaml, "round-trip.yaml"));
  CHECK(back.gemm_fp8_tiles.mma_slowdown == h200.gemm_fp8_tiles.mma_slowdown);
  CHECK(back.gemm_fp8_tiles_params.at("mma_slowdown").source == h200.gemm_fp8_tiles_params.at("mma_slowdown").source);
  const size_t at = yaml.find("mma_slowdown: {value: ");
  REQUIRE(at != std::string::npos);
  std::string one = yaml;
  const size_t from1 = at + std::string("mma_slowdown: {value: ").size();
  one.replace(from1, one.find(',', from1) - from1, "1");
  CHECK(hw::parse_profile(hw::parse_yaml(one, "one.yaml")).gemm_fp8_tiles.mma_slowdown == 1);  // no extra cost
  for (const char* value : {"-", "0.5"}) {
    INFO(value);
    std::string bad = yaml;
    const size_t from = at + std::string("mma_slowdown: {value: ").size();
    bad.replace(from, bad.find(',', from) - from, std::string(value) == "-" ? "-1.3" : value);
    try {
      hw::parse_profile(hw::parse_yaml(bad, "bad.yaml"));
      FAIL("accepted");
    } catch (const hw::UserError& e) {
      CHECK(e.line() > 1);
    }
  }
}

}  // namespace CS_TEST_FILE
