// Every scenario shipped under scenarios/ loads, builds and runs (found by listing the folder, so a
// new file is covered without touching this test), and the bundled examples agree with the closed
// forms written in their header comments.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

namespace {

using cs::models::RunResult;
using cs::models::Scenario;

std::vector<std::string> bundled_scenarios() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(cs::test::source_dir() + "/scenarios"))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string scenario_path(const std::string& name) {
  return cs::test::source_dir() + "/scenarios/" + name;
}

const cs::models::StreamResult& stream_named(const RunResult& r, const std::string& name) {
  const auto it =
      std::find_if(r.streams.begin(), r.streams.end(), [&](const auto& s) { return s.name == name; });
  REQUIRE(it != r.streams.end());
  return *it;
}

const cs::models::StreamSpec& stream_spec(const Scenario& sc, const std::string& name) {
  const auto it =
      std::find_if(sc.streams.begin(), sc.streams.end(), [&](const auto& s) { return s.name == name; });
  REQUIRE(it != sc.streams.end());
  return *it;
}

int partition_sms(const Scenario& sc, const std::string& name) {
  for (const auto& p : sc.cluster.partitions)
    if (p.name == name) return p.sms;
  FAIL("no partition named " << name);
  return 0;
}

}  // namespace

TEST_CASE("every bundled scenario loads, builds and runs", "[bundled]") {
  const std::vector<std::string> files = bundled_scenarios();
  // The three examples this test was written with; more are welcome and covered automatically.
  REQUIRE(files.size() >= 3);
  for (const std::string& file : files) {
    DYNAMIC_SECTION(std::filesystem::path(file).filename().string()) {
      const Scenario sc = cs::models::load_scenario_file(file);
      const cs::models::OpWorkload w = cs::models::build_op_workload(sc);
      CHECK_FALSE(w.graph.ops().empty());
      const RunResult r = cs::models::run_scenario(sc);
      CHECK(r.ops == static_cast<int64_t>(w.graph.ops().size()));
      // The result says whether its costs come from a calibrated profile, as the scenario asked.
      CHECK(r.calibrated == (sc.cost.kind == "calibrated"));
      CHECK(r.cost_model.find(r.calibrated ? "calibrated profile" : "uncalibrated roofline") == 0);
      REQUIRE(r.makespan > cs::sim::Time());
      REQUIRE(r.streams.size() == w.stream_names.size());
      for (const auto& s : r.streams) {
        INFO("stream " << s.name);
        if (s.ops_per_gpu == 0 && sc.streams.empty()) {
          // A model workload's communication stream where nothing communicates (one GPU, tp 1).
          CHECK(s.busy_mean == cs::sim::Time());
          continue;
        }
        CHECK(s.ops_per_gpu > 0);
        CHECK(s.busy_mean > cs::sim::Time());
        CHECK(s.busy_max >= s.busy_mean);
        CHECK(s.end_max > cs::sim::Time());
        CHECK(s.end_max <= r.makespan);
        CHECK(s.busy_max <= s.end_max);
      }
    }
  }
}

// Ring all-reduce of S bytes over n GPUs at per-rank bandwidth B with per-phase latency L:
// 2(n-1) synchronous phases of S/n each (sim/collective_plan.h), so
//   t = 2(n-1)/n * S / B + 2(n-1) * L.
TEST_CASE("bundled all-reduce sweep follows the ring closed form", "[bundled]") {
  const Scenario sc = cs::models::load_scenario_file(scenario_path("allreduce-ring-h200x8.yaml"));
  const cs::hw::GpuSpec* gpu = cs::hw::find_gpu("h200");
  REQUIRE(gpu != nullptr);
  REQUIRE(sc.cluster.gpu.name == "h200");
  const int n = sc.cluster.gpus;
  REQUIRE(n == 8);

  // Candidate bottlenecks of one ring step (each rank sends to the next while receiving from the
  // previous one):
  const double copy_GBps = sc.cost.comm_bw_per_sm_GBps * partition_sms(sc, "comm");  // 32 x 7.65
  const double nvlink_GBps = gpu->nvlink_bw_GBps_per_direction;                       // 450
  const double hbm_share_GBps = gpu->hbm_bw_GBps / 2;  // one flow out of, one into each HBM: 2400
  // The comm kernel's SM copy rate (244.8 GB/s) is the bottleneck, not NVLink nor HBM. Should
  // the scenario give the comm partition 59 or more SMs, NVLink would be, and this test says so.
  REQUIRE(copy_GBps < nvlink_GBps);
  REQUIRE(copy_GBps < hbm_share_GBps);
  const double b = std::min({copy_GBps, nvlink_GBps, hbm_share_GBps}) * 1e9;
  const double lat_s = gpu->nvlink_lat_ns * 1e-9;

  const cs::models::StreamSpec& spec = stream_spec(sc, "ar_256MiB");
  REQUIRE(spec.ops.size() == 1);
  const double s = spec.ops[0].size_bytes;
  REQUIRE(s == 256.0 * (1 << 20));
  const double expected_s = 2.0 * (n - 1) / n * s / b + 2.0 * (n - 1) * lat_s;  // 1965.58 us

  const RunResult r = cs::models::run_scenario(sc);
  const auto& st = stream_named(r, "ar_256MiB");
  REQUIRE(st.ops_per_gpu == 1);
  CHECK(st.busy_mean.to_seconds() == Approx(expected_s).epsilon(1e-6));
  CHECK(st.busy_max.to_seconds() == Approx(expected_s).epsilon(1e-6));

  // The sizes run one after another (each waits for the previous one through `after`), so the
  // makespan is the sum of the per-size times.
  double sum_s = 0;
  for (const auto& ss : sc.streams) {
    const double size = ss.ops[0].size_bytes;
    sum_s += 2.0 * (n - 1) / n * size / b + 2.0 * (n - 1) * lat_s;
  }
  CHECK(r.makespan.to_seconds() == Approx(sum_s).epsilon(1e-6));
}

// Four stages, M micro-batches, GEMM time F and send time S with S < F: the last GEMM ends at
// (stages-1)(F + S) + M F (see the header of the scenario).
TEST_CASE("bundled pipeline overlaps GEMMs with activation sends", "[bundled]") {
  const Scenario sc = cs::models::load_scenario_file(scenario_path("pipeline-sends-h800.yaml"));
  const cs::hw::GpuSpec* gpu = cs::hw::find_gpu("h800");
  REQUIRE(gpu != nullptr);
  const int compute_sms = partition_sms(sc, "compute");
  const int comm_sms = partition_sms(sc, "comm");

  // Roofline GEMM (hw/roofline_cost.h): 128x128 tiles in waves over the compute SMs.
  const auto& g = stream_spec(sc, "stage0").ops[0].gemm;
  const int64_t tiles = ((g.m + 127) / 128) * ((g.n + 127) / 128);
  const int64_t waves = (tiles + compute_sms - 1) / compute_sms;
  const double f = waves * 2.0 * 128 * 128 * g.k / (gpu->bf16_dense_tflops * 1e12 / gpu->sms);
  // Send: the comm SMs' copy rate (153 GB/s) is below the NVLink (200 GB/s).
  const double copy_GBps = sc.cost.comm_bw_per_sm_GBps * comm_sms;
  REQUIRE(copy_GBps < gpu->nvlink_bw_GBps_per_direction);
  const double bytes = stream_spec(sc, "send0to1").ops[0].size_bytes;
  const double s = gpu->nvlink_lat_ns * 1e-9 + bytes / (copy_GBps * 1e9);
  REQUIRE(s < f);

  const int stages = sc.cluster.gpus;
  const auto micro_batches = static_cast<int>(stream_spec(sc, "stage0").ops.size());
  const RunResult r = cs::models::run_scenario(sc);
  CHECK(r.makespan.to_seconds() == Approx((stages - 1) * (f + s) + micro_batches * f).epsilon(1e-6));
  for (int st = 0; st < stages; ++st) {
    const auto& compute = stream_named(r, "stage" + std::to_string(st));
    CHECK(compute.busy_mean.to_seconds() == Approx(micro_batches * f).epsilon(1e-6));
    CHECK(compute.end_max.to_seconds() == Approx(st * (f + s) + micro_batches * f).epsilon(1e-6));
  }
}

// DeepSeek-V3 stage: each MoE layer's dispatch sends 96.14 MB per GPU over InfiniBand (3.63 of 8
// nodes per token, 7/8 of them remote, 4096 tokens x 7392 B) and 194.97 MB over NVLink; at 50 GB/s
// per NIC that would be 1.923 ms. DeepEP's internode kernel goes slower: it works through each
// token once per node it reaches (4096 x 3.629 x 7392 B = 109.9 MB) at the profile's pace on 20
// SMs, at the sustained SM clock the copies run at in a training step (about 38.6 GB/s: 2.85 ms).
// Combine and the backward dispatch of gradients move BF16 (14336 B per token): 5.52 ms. Four
// MoE layers, forward and backward, two micro-batches: 2 x 4 x 2 x (2.85 + 5.52) = 133.9 ms.
TEST_CASE("bundled DeepSeek-V3 stage: the communication stream carries the routed all-to-alls", "[bundled]") {
  const RunResult r = cs::models::run_scenario(cs::models::load_scenario_file(scenario_path("deepseek-v3-stage-h800.yaml")));
  REQUIRE(r.model);
  CHECK(r.model->stage_gpus == 128);
  CHECK(r.model->nodes_per_token == Approx(3.629).epsilon(1e-3));
  const double comm_ms = stream_named(r, "comm").busy_mean.to_ms();
  const cs::hw::GpuProfile& h800 = *cs::hw::find_profile("h800");
  const double pace_GBps = h800.deepep.internode_GBps(20) * h800.clocks.sustained_MHz / h800.clocks.comm_fit_MHz;
  CHECK(comm_ms == Approx(2 * 4 * 2 * 4096 * 3.629 * (7392 + 14336) / 1e6 / pace_GBps).epsilon(0.03));
  // Above what the NICs alone would allow: the pace, not the wire, bounds it.
  CHECK(comm_ms > 1.3 * 2 * 4 * 2 * (96.14 / 50 + 4096 * 14336 * 3.629 * 7 / 8 / 1e6 / 50));
  // The routed experts wait for their dispatch, so compute and communication only partly overlap.
  CHECK(r.makespan.to_ms() > stream_named(r, "compute").busy_mean.to_ms());
  CHECK(r.makespan.to_ms() < stream_named(r, "compute").busy_mean.to_ms() + comm_ms);
}

// Llama 3 70B TP8: 336 ring collectives per GPU (21 layers x 8 x 2 micro-batches), each 7 phases of
// 134.2 MB / 8 on 20 comm SMs at 7.65 GB/s, plus 7 NVLink latencies (scenario header).
TEST_CASE("bundled Llama 3 70B TP8: tensor-parallel collectives follow the ring closed form", "[bundled]") {
  const Scenario sc = cs::models::load_scenario_file(scenario_path("llama3-70b-tp8-h100.yaml"));
  const RunResult r = cs::models::run_scenario(sc);
  const auto& comm = stream_named(r, "comm");
  CHECK(comm.ops_per_gpu == 336);
  const double bytes = 8192.0 * 8192 * 2 * 7 / 8;
  const double one_ms = bytes / (20 * 7.65e9) * 1e3 + 7 * sc.cluster.figures.nvlink_lat_ns * 1e-6;
  CHECK(comm.busy_mean.to_ms() == Approx(336 * one_ms).epsilon(1e-3));
  REQUIRE(r.model);
  CHECK(r.model->stage_gpus == 256);
}

}  // namespace CS_TEST_FILE
