// The bundled sweeps (scenarios/sweeps/): each reads, its base loads, and every point's scenario
// loads or is refused for the reason the sweep's comments give. Running them is a benchmark
// (tests/bench, README), not a test: the DeepSeek-V3 points take seconds each.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "hw/user_error.h"
#include "models/scenario_loader.h"
#include "models/sweep_point.h"
#include "models/sweep_spec.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

// The indices of the points whose scenarios the loader refuses, each message checked for `why`.
std::set<int> refused(const std::string& name, const std::vector<std::pair<int, std::string>>& why = {}) {
  const SweepSpec spec = load_sweep_file(cs::test::source_dir() + "/scenarios/sweeps/" + name);
  load_scenario_text(spec.base_text, spec.base_file);
  std::set<int> out;
  for (const SweepPoint& p : expand_sweep(spec)) {
    CHECK(p.skip.empty());
    try {
      sweep_point_scenario(spec, p);
    } catch (const cs::hw::UserError& e) {
      out.insert(p.index);
      for (const auto& [i, text] : why)
        if (i == p.index) CHECK(std::string(e.what()).find(text) != std::string::npos);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("bundled sweeps: the SM partition of DeepSeek-V3 from 0 to 48 SMs, every point valid", "[sweep][bundled]") {
  const SweepSpec spec = load_sweep_file(cs::test::source_dir() + "/scenarios/sweeps/deepseek-v3-sm-partition.yaml");
  CHECK(expand_sweep(spec).size() == 13);
  CHECK(spec.objective == SweepObjective::kGpuHours);
  CHECK(refused("deepseek-v3-sm-partition.yaml").empty());
}

TEST_CASE("bundled sweeps: schedule x PP for DeepSeek-V3, with the layouts that cannot run", "[sweep][bundled]") {
  CHECK(refused("deepseek-v3-schedule-pp.yaml", {{0, "pipeline rank 0 does not fit"},
                                                 {5, "more than the model's 61 layers"},
                                                 {12, "does not fit"},
                                                 {13, "interleaved 1F1B needs the micro-batches to be a multiple"}}) ==
        std::set<int>{0, 5, 12, 13, 14});
}

TEST_CASE("bundled sweeps: three fat-trees at three oversubscriptions, every point valid", "[sweep][bundled]") {
  CHECK(refused("deepseek-v3-fabric.yaml").empty());
}

TEST_CASE("bundled sweeps: the benchmark's 1008 DeepSeek-V3 layouts, a sample of them loaded", "[sweep][bundled]") {
  const SweepSpec spec = load_sweep_file(cs::test::source_dir() + "/scenarios/sweeps/deepseek-v3-layouts-1000.yaml");
  const auto points = expand_sweep(spec);
  REQUIRE(points.size() == 1008);
  for (size_t i = 0; i < points.size(); i += 97) {
    INFO(i);
    CHECK(points[i].skip.empty());
    try {
      const Scenario sc = sweep_point_scenario(spec, points[i]);
      CHECK(sc.cluster.gpus == 2048);
    } catch (const cs::hw::UserError& e) {
      // DualPipe's two copies of 8 stages' weights: as in the schedule x PP sweep.
      CHECK(std::string(e.what()).find("pipeline rank 0 does not fit") != std::string::npos);
    }
  }
}

TEST_CASE("bundled sweeps: cuBLASLt's or DeepGEMM's GEMMs at 4 to 28 communication SMs, every point valid",
          "[sweep][bundled]") {
  const SweepSpec spec = load_sweep_file(cs::test::source_dir() + "/scenarios/sweeps/deepseek-v3-gemm-kernels.yaml");
  const auto points = expand_sweep(spec);
  REQUIRE(points.size() == 8);
  CHECK(refused("deepseek-v3-gemm-kernels.yaml").empty());
  // The first four points run cuBLASLt's tile time, the last four DeepGEMM's, longer.
  const Scenario cublaslt = sweep_point_scenario(spec, points[0]);
  const Scenario deepgemm = sweep_point_scenario(spec, points[4]);
  REQUIRE(cublaslt.cost.profile);
  REQUIRE(deepgemm.cost.profile);
  CHECK(deepgemm.cost.profile->gemm.tile_us > cublaslt.cost.profile->gemm.tile_us);
  CHECK(deepgemm.cost.profile->comm.sm_copy_GBps == cublaslt.cost.profile->comm.sm_copy_GBps);
}

TEST_CASE("bundled sweeps: the attention PyTorch picks or FlashAttention-2, every point valid", "[sweep][bundled]") {
  const SweepSpec spec =
      load_sweep_file(cs::test::source_dir() + "/scenarios/sweeps/deepseek-v3-attention-kernels.yaml");
  const auto points = expand_sweep(spec);
  REQUIRE(points.size() == 2);
  CHECK(refused("deepseek-v3-attention-kernels.yaml").empty());
  CHECK(sweep_point_scenario(spec, points[0]).cost.attention_kernel == cs::hw::AttentionKernel::kSdpa);
  CHECK(sweep_point_scenario(spec, points[1]).cost.attention_kernel == cs::hw::AttentionKernel::kFa2);
}

TEST_CASE("bundled sweeps: every file under scenarios/sweeps is checked here", "[sweep][bundled]") {
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(cs::test::source_dir() + "/scenarios/sweeps"))
    files.insert(e.path().filename().string());
  CHECK(files == std::set<std::string>{"deepseek-v3-attention-kernels.yaml", "deepseek-v3-fabric.yaml",
                                       "deepseek-v3-gemm-kernels.yaml", "deepseek-v3-layouts-1000.yaml",
                                       "deepseek-v3-schedule-pp.yaml", "deepseek-v3-sm-partition.yaml"});
}

}  // namespace CS_TEST_FILE
