// The scenario's `cost_model: {kind: calibrated}`: the profile's GEMM model and copy rate drive
// the run (at the sustained clock), its measured NVLink and HBM replace the catalog's unless the
// scenario overrides them, a relative profile path starts at the scenario's folder, and uses
// beyond the measured range are reported.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <string>

#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/power_model.h"
#include "hw/user_error.h"
#include "models/cost_config.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "sim/power_window.h"
#include "test_support.h"

namespace cs::models::CS_TEST_FILE {  // unique per file: unity batches (tests/CMakeLists.txt)
namespace {

// One FP8 GEMM on 112 SMs, then one send of `mib` MiB from GPU 0 to GPU 1 on 20 SMs.
std::string scenario(const std::string& cost, const std::string& fabric_extra = "", int64_t k = 7168,
                     int mib = 64) {
  return "schema_version: 1\nname: t\ncluster:\n  gpu: h800\n  gpus: 2\n  sm_partitions: {compute: 112, comm: 20}\n"
         "  fabric: {kind: switch" + fabric_extra + "}\n" + cost +
         "workload:\n  kind: ops\n  streams:\n"
         "    - {name: g, gpus: [0], partition: compute, ops: [{gemm: {m: 4096, n: 7168, k: " + std::to_string(k) +
         ", dtype: fp8}, id: g0}]}\n"
         "    - {name: s, gpus: [0], partition: comm, ops: [{send: {to: 1, size_MiB: " + std::to_string(mib) +
         "}, after: [g0]}]}\n";
}

const std::string kCalibrated = "cost_model: {kind: calibrated, profile: h800}\n";

TEST_CASE("a calibrated scenario times its GEMM by the profile's model") {
  const Scenario sc = load_scenario_text(scenario(kCalibrated), "t.yaml");
  const RunResult r = run_scenario(sc);
  REQUIRE(r.calibrated);
  const hw::GpuProfile& p = *hw::find_profile("h800");
  // The profile has a power limit: one GEMM of 0.3 ms from an idle GPU ends before the power
  // controller's first look (window_ms / 8), so it runs at the maximum clock, a little faster than
  // at the clock the GEMM fit measured at.
  REQUIRE(p.clocks.present());
  REQUIRE(p.power.present());
  const double gemm_us = hw::gemm_model_us(p.gemm, sim::GemmShape{4096, 7168, 7168, sim::DType::kFp8}, 112, 1.0, 1.0) *
                         hw::clock_stretch(p.power, p.power.max_MHz, p.clocks.gemm_fit_MHz);
  REQUIRE(gemm_us * 1e-3 < p.power.window_ms / sim::PowerWindow::kBlocks);
  REQUIRE(r.streams[0].busy_mean.to_seconds() * 1e6 == Approx(gemm_us).epsilon(1e-6));
  // A mean over the clock's intervals (sum of MHz x dt over sum of dt): equal to rounding.
  REQUIRE(r.gemm_mean_MHz.size() == 2);
  REQUIRE(r.gemm_mean_MHz[0] == Approx(p.power.max_MHz).epsilon(1e-12));
  REQUIRE(r.gemm_mean_MHz[1] == 0.0);  // the second GPU ran no GEMM
  // The roofline times the same GEMM differently: the profile is what was used.
  const RunResult roof = run_scenario(load_scenario_text(scenario(""), "t.yaml"));
  REQUIRE_FALSE(roof.calibrated);
  REQUIRE(roof.streams[0].busy_mean.to_seconds() * 1e6 != Approx(gemm_us).epsilon(0.01));
}

TEST_CASE("a calibrated send moves at the profile's NVLink rate, less what the HBM queues take, after its launch time") {
  const hw::GpuProfile& p = *hw::find_profile("h800");
  const Scenario sc = load_scenario_text(scenario(kCalibrated), "t.yaml");
  REQUIRE(sc.cluster.fabric.link_bw_GBps == p.comm.nvlink_GBps);
  REQUIRE(sc.cluster.figures.nvlink_bw_GBps == p.comm.nvlink_GBps);
  const RunResult r = run_scenario(sc);
  // 20 SMs copy at 20 x sm_copy (~919 GB/s), far above NVLink: the link binds.
  REQUIRE(20 * p.comm.sm_copy_GBps > p.comm.nvlink_GBps);
  const double bytes = 64.0 * (1 << 20);
  // Both HBMs it crosses are queues offered the NVLink rate: each carries a hair less (5.5% of
  // the H800's HBM: 4 ppm less).
  const double q = p.memory.saturation_exponent, load = p.comm.nvlink_GBps / p.memory.hbm_GBps;
  const double carried = p.comm.nvlink_GBps * std::pow(1 + std::pow(load, q), -1 / q);
  REQUIRE(carried < p.comm.nvlink_GBps);
  const double expect_s = p.comm.launch_us * 1e-6 + sc.cluster.fabric.link_lat_ns * 1e-9 + bytes / (carried * 1e9);
  REQUIRE(r.streams[1].busy_mean.to_seconds() == Approx(expect_s).epsilon(1e-6));
  REQUIRE(r.fabric.find("NVLink as measured, profile h800") != std::string::npos);
}

TEST_CASE("a scenario's own NVLink figure wins over the profile's") {
  const Scenario sc = load_scenario_text(scenario(kCalibrated, ", link_bw_GBps: 120"), "t.yaml");
  REQUIRE(sc.cluster.fabric.link_bw_GBps == 120);
  REQUIRE(run_scenario(sc).fabric.find("as measured") == std::string::npos);
}

TEST_CASE("a calibrated scenario's HBM carries the profile's measured ceiling, unless the scenario overrides it") {
  const hw::GpuProfile& p = *hw::find_profile("h800");
  REQUIRE(p.memory.present());
  REQUIRE(p.memory.hbm_GBps < hw::find_gpu("h800")->hbm_bw_GBps);
  CHECK(load_scenario_text(scenario(kCalibrated), "t.yaml").cluster.figures.hbm_bw_GBps == p.memory.hbm_GBps);
  CHECK(load_scenario_text(scenario(""), "t.yaml").cluster.figures.hbm_bw_GBps == hw::find_gpu("h800")->hbm_bw_GBps);
  const std::string own = "  overrides: {hbm_bw_GBps: 1000}\n" + kCalibrated;
  CHECK(load_scenario_text(scenario(own), "t.yaml").cluster.figures.hbm_bw_GBps == 1000);
}

TEST_CASE("a calibrated profile named by a path relative to the scenario's folder") {
  test::TempDir dir;
  std::filesystem::create_directory(dir.file("profiles"));
  test::write_file(dir.file("profiles/mine.yaml"), test::read_file(test::source_dir() + "/hw/profiles/h800.yaml"));
  test::write_file(dir.file("s.yaml"), scenario("cost_model: {kind: calibrated, profile: profiles/mine.yaml}\n"));
  const Scenario sc = load_scenario_file(dir.file("s.yaml"));
  REQUIRE(sc.cost.profile);
  REQUIRE(sc.cost.profile->gpu == "h800");
  REQUIRE(sc.cost.profile->file.ends_with("profiles/mine.yaml"));
}

TEST_CASE("the bundled profile of the cluster's GPU is the default of kind calibrated") {
  const Scenario sc = load_scenario_text(scenario("cost_model: {kind: calibrated}\n"), "t.yaml");
  REQUIRE(sc.cost.profile);
  REQUIRE(sc.cost.profile->gpu == "h800");
}

TEST_CASE("uses beyond the profile's measured range are reported, those inside are not") {
  REQUIRE(run_scenario(load_scenario_text(scenario(kCalibrated), "t.yaml")).cost_warnings.empty());
  const hw::GpuProfile& p = *hw::find_profile("h800");
  const int64_t k_far = static_cast<int64_t>(p.gemm_range.at("k").hi) * 4;
  const RunResult r = run_scenario(load_scenario_text(scenario(kCalibrated, "", k_far, 4096), "t.yaml"));
  REQUIRE(r.cost_warnings.size() == 2);
  REQUIRE_THAT(r.cost_warnings[0], Catch::Contains("k from " + std::to_string(k_far)) &&
                                       Catch::Contains("in 1 of 1 GEMM ops"));
  REQUIRE_THAT(r.cost_warnings[1], Catch::Contains("bytes per GPU") && Catch::Contains("communication ops"));
  REQUIRE(run_scenario(load_scenario_text(scenario(""), "t.yaml")).cost_warnings.empty());
}

TEST_CASE("FlashAttention-2 at a head dim whose kernel was not measured is reported, with the kernel it borrows") {
  CostModelConfig cost;
  cost.kind = "calibrated";
  cost.profile = std::make_shared<const hw::GpuProfile>(*hw::find_profile("h800"));
  const hw::AttentionFa2Model& fa2 = cost.profile->attention_fa2;
  REQUIRE(fa2.kernels[hw::AttentionFa2Model::kernel_of(192)].present());
  REQUIRE(fa2.kernels[hw::AttentionFa2Model::kernel_of(128)].present());
  REQUIRE_FALSE(fa2.kernels[hw::AttentionFa2Model::kernel_of(64)].present());
  sim::OpGraph g;
  const sim::StreamId s = g.add_stream(0, 0, "compute");
  const auto attention = [&](sim::ComputeKind kind, int qk, int v) {
    g.add_compute(s, sim::GenericCompute{1e12, 1e6, sim::DType::kBf16, kind, sim::MemoryForm::kAny, qk, v}, "attn");
  };
  attention(sim::ComputeKind::kAttentionForward, 192, 128);  // MLA: v padded to 192, measured
  attention(sim::ComputeKind::kAttentionForward, 64, 64);
  attention(sim::ComputeKind::kAttentionBackward, 64, 64);
  attention(sim::ComputeKind::kAttentionForward, 96, 64);  // runs the head-dim-96 kernel
  const std::vector<sim::PartitionSpec> parts = {{"compute", 132}};
  REQUIRE(profile_range_warnings(cost, g, parts).empty());  // SDPA's kernel: one fit for every head dim
  cost.attention_kernel = hw::AttentionKernel::kFa2;
  const std::vector<std::string> w = profile_range_warnings(cost, g, parts);
  REQUIRE(w.size() == 2);
  CHECK_THAT(w[0], Catch::Contains("head-dim-64 kernel, which 2 attention ops run, was not measured") &&
                       Catch::Contains("the head-dim-128 kernel's rates") && Catch::Contains("profile h800"));
  CHECK_THAT(w[1], Catch::Contains("head-dim-96 kernel, which 1 attention op runs, was not measured: it takes") &&
                       Catch::Contains("the head-dim-128 kernel's rates"));
}

TEST_CASE("attention_kernel picks FlashAttention-2 where the profile has its rates, and is refused elsewhere") {
  const Scenario fa2 =
      load_scenario_text(scenario("cost_model: {kind: calibrated, profile: h800, attention_kernel: fa2}\n"), "t.yaml");
  REQUIRE(fa2.cost.attention_kernel == hw::AttentionKernel::kFa2);
  REQUIRE_THAT(run_scenario(fa2).cost_model, Catch::Contains("attention by FlashAttention-2"));
  REQUIRE(load_scenario_text(scenario(kCalibrated), "t.yaml").cost.attention_kernel == hw::AttentionKernel::kSdpa);
  const auto refused = [](const std::string& text, const std::string& what) {
    try {
      load_scenario_text(text, "t.yaml");
      FAIL("accepted");
    } catch (const hw::UserError& e) {
      REQUIRE_THAT(std::string(e.what()), Catch::Contains(what));
    }
  };
  refused(scenario("cost_model: {kind: roofline, attention_kernel: fa2}\n"),
          "t.yaml:8:48: 'attention_kernel' applies to kind 'calibrated'");
  refused(scenario("cost_model: {kind: calibrated, profile: h800, attention_kernel: fa3}\n"), "t.yaml:8:65:");
  refused(scenario("cost_model: {kind: calibrated, profile: h800, attention_kernel: fa3}\n"), "fa3");
  // A profile fitted without the flash backend's calls has no section to run it on.
  test::TempDir dir;
  std::string yaml = test::read_file(test::source_dir() + "/hw/profiles/h800.yaml");
  const size_t from = yaml.find("\nattention_fa2:\n") + 1;
  REQUIRE(from != 0);
  size_t to = yaml.find('\n', from) + 1;
  while (yaml.compare(to, 2, "  ") == 0) to = yaml.find('\n', to) + 1;  // the section's lines
  yaml.erase(from, to - from);
  REQUIRE(yaml.find("fa2") == std::string::npos);
  REQUIRE(yaml.find("\nclocks:\n") != std::string::npos);  // the sections after it kept
  test::write_file(dir.file("plain.yaml"), yaml);
  const std::string cost =
      "cost_model: {kind: calibrated, profile: " + dir.file("plain.yaml") + ", attention_kernel: fa2}";
  refused(scenario(cost + "\n"), "t.yaml:8:" + std::to_string(cost.find("fa2}") + 1) + ": profile '" +
                                     dir.file("plain.yaml") + "' has no FlashAttention-2 rates");
}

}  // namespace
}  // namespace cs::models::CS_TEST_FILE
