// The committed H100 traces of two DeepSeek-V3 MoE layers (kernels/torch/deepseek_layers.py)
// against scenarios/deepseek-v3-layers-h100.yaml: what was measured, and how far the model is.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/compare_run.h"
#include "calibrate/kineto_trace.h"
#include "models/scenario_loader.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::calibrate;
using nlohmann::json;

namespace {
std::string trace(const std::string& name) { return cs::test::source_dir() + "/calibrate/data/h100/" + name; }

// Measured GEMM milliseconds by cuBLASLt's scaling of the kernel, as its name says: both operands
// in 1x128 tiles (Avec128_Bvec128), one in 128x128 blocks (blk128), or none (BF16).
std::map<std::string, double> gemm_ms_by_scaling(const json& t) {
  std::map<std::string, double> ms;
  for (const json& e : t["traceEvents"]) {
    if (e.value("cat", "") != "kernel") continue;
    const std::string name = e["name"];
    if (classify_kernel(name) != KernelClass::kGemm) continue;
    const std::string key = name.find("Avec128_Bvec128") != std::string::npos ? "1x128_1x128"
                            : name.find("blk128") != std::string::npos         ? "1x128_128x128"
                                                                               : "bf16";
    ms[key] += e["dur"].get<double>() / 1000.0;
  }
  return ms;
}

std::map<std::string, ClassRow> compare_rows(const std::string& file) {
  const cs::models::Scenario sc =
      cs::models::load_scenario_file(cs::test::source_dir() + "/scenarios/deepseek-v3-layers-h100.yaml");
  const CompareReport r = compare_scenario(sc, trace(file));
  std::map<std::string, ClassRow> rows;
  for (const ClassRow& c : r.classes) rows[class_name(c.cls)] = c;
  return rows;
}
}  // namespace

TEST_CASE("the DeepSeek-V3 layer traces: an H100, DeepSeek's FP8 scaling, four micro-batches of sustained load",
          "[compare][data]") {
  for (const auto& [file, weights] : {std::pair{"kineto_deepseek_layers_block128.json", "128x128"},
                                      std::pair{"kineto_deepseek_layers.json", "1x128"}}) {
    INFO(file);
    const json t = json::parse(cs::test::read_file(trace(file)));
    const json& cs = t["clustersim"];
    CHECK(cs["provenance"]["gpu"]["name"] == "NVIDIA H100 80GB HBM3");
    CHECK(cs["provenance"]["git_commit"] != "unknown");
    CHECK(cs["fp8_scaling"] == "blockwise_1x128");
    // The 1x128-weight run came first, from the script before CS_WEIGHT_SCALING and this field.
    CHECK(cs.value("fp8_weight_scaling", "1x128") == weights);
    CHECK(cs["model"]["micro_batches"] == 4);
    // About 3 s of steps back to back before the profiled one: the power limit had acted.
    CHECK(cs["step_ms_events"]["runs"].get<int>() >= 8);
    CHECK(cs["power_W_while_stepping"]["median"].get<double>() > 600);
    CHECK(cs["sm_clock_MHz_while_stepping"]["median"].get<double>() < 1980);
  }
}

TEST_CASE("the DeepSeek-V3 layers: the model's GEMMs and attention against the H100 run with DeepSeek's recipe",
          "[compare][data]") {
  std::map<std::string, ClassRow> rows = compare_rows("kineto_deepseek_layers_block128.json");
  // Per micro-batch 2 layers x (5 attention linears + gate + 2 shared + 2 x 8 experts) x 3 passes and
  // the head's 3, each expert its own kernel: 149; the model runs an expert group as one op: 63.
  CHECK(rows["gemm"].measured_count == 4 * 149);
  CHECK(rows["gemm"].simulated_count == 4 * 63);
  CHECK(rows["attention"].simulated_count == 4 * 2 * 2);
  CHECK(std::abs(rows["gemm"].error_pct()) < 10);
  CHECK(std::abs(rows["attention"].error_pct()) < 5);

  // By scaling: the weight gradients (1x128 on both operands) priced by the profile's
  // gemm_fp8_tiles, the rest by its FP8 rates. Without the former they came out 17.5% short.
  const cs::models::Scenario sc =
      cs::models::load_scenario_file(cs::test::source_dir() + "/scenarios/deepseek-v3-layers-h100.yaml");
  REQUIRE(sc.cost.profile);
  REQUIRE(sc.cost.profile->gemm_fp8_tiles.present());
  double makespan_us = 0;
  std::map<std::string, double> sim_ms;
  for (const SimulatedOp& op : simulate_ops(sc, 0, makespan_us)) {
    if (op.cls != KernelClass::kGemm || op.gemm.dtype != cs::sim::DType::kFp8) continue;
    sim_ms[op.gemm.scaling == cs::sim::Fp8Scaling::kTiles ? "1x128_1x128" : "1x128_128x128"] += op.dur_us / 1000.0;
  }
  const std::map<std::string, double> meas =
      gemm_ms_by_scaling(json::parse(cs::test::read_file(trace("kineto_deepseek_layers_block128.json"))));
  for (const char* k : {"1x128_1x128", "1x128_128x128"}) {
    INFO(k << ": simulated " << sim_ms[k] << " ms, measured " << meas.at(k));
    CHECK(std::abs(sim_ms[k] / meas.at(k) - 1) < 0.12);
  }
}

TEST_CASE("the DeepSeek-V3 layers: 1x128 scales on both operands run about 1.2 times slower than 128x128 weights",
          "[compare][data]") {
  const json block = json::parse(cs::test::read_file(trace("kineto_deepseek_layers_block128.json")));
  const json vec = json::parse(cs::test::read_file(trace("kineto_deepseek_layers.json")));
  const std::map<std::string, double> b = gemm_ms_by_scaling(block), v = gemm_ms_by_scaling(vec);
  // With DeepSeek's recipe only the weight gradients keep 1x128 on both operands (a third of the FLOPs).
  REQUIRE(b.count("1x128_128x128"));
  REQUIRE(b.count("1x128_1x128"));
  CHECK(b.at("1x128_1x128") < b.at("1x128_128x128"));
  CHECK(v.count("1x128_128x128") == 0);
  // The same forward and input-gradient GEMMs with 1x128 weights (the rest unchanged) take over
  // 1.15 times as long: the whole GEMM class grows by more than 10%.
  const double block_total = b.at("1x128_128x128") + b.at("1x128_1x128");
  const double vec_total = v.at("1x128_1x128");
  CHECK(vec_total > 1.10 * block_total);
  CHECK((vec_total - b.at("1x128_1x128")) > 1.15 * b.at("1x128_128x128"));
}

}  // namespace CS_TEST_FILE
