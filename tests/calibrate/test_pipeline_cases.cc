// Pipeline-parallel steps (kernels/torch/pipeline_step.py, calibrate/data/h100 and h200/pipeline_step.json):
// what the reader refuses, and the whole steps simulated under the H200 profile carried to the H100,
// which never saw a pipeline (every case held out).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "calibrate/pipeline_cases.h"
#include "calibrate/profile_build.h"
#include "calibrate/validate.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;
using nlohmann::json;

namespace {

std::string data_file() { return test::source_dir() + "/calibrate/data/h100/pipeline_step.json"; }

// The committed file with only its first case of `schedule`, edited by `edit`, read back; returns
// the reader's message, empty when it read the file.
std::string read_edited(const std::string& schedule, const std::function<void(json&)>& edit) {
  json d = json::parse(test::read_file(data_file()));
  json kept = json::array();
  for (const json& c : d["cases"])
    if (c["schedule"] == schedule && kept.empty()) kept.push_back(c);
  REQUIRE(kept.size() == 1);
  d["cases"] = kept;
  edit(d);
  test::TempDir tmp;
  test::write_file(tmp.file("pipeline_step.json"), d.dump());
  calibrate::MeasurementSet set;
  try {
    calibrate::read_measurements(tmp.file("pipeline_step.json"), set);
  } catch (const hw::UserError& e) {
    return e.what();
  }
  REQUIRE(set.pipelines.size() == 1);
  return "";
}

}  // namespace

TEST_CASE("pipeline steps: a case of the committed file reads back unedited", "[calibrate][pipeline]") {
  CHECK(read_edited("1f1b", [](json&) {}) == "");
  CHECK(read_edited("dualpipev", [](json&) {}) == "");
}

TEST_CASE("pipeline steps: the reader refuses what it cannot trust", "[calibrate][pipeline]") {
  using Catch::Matchers::Contains;
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["cases"][0]["schedule"] = "gpipe"; }),
             Contains("schedule 'gpipe' is not one clustersim generates"));
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["cases"][0]["check"]["passed"] = false; }),
             Contains("gradient check did not pass"));
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["cases"][0].erase("check"); }), Contains("has no 'check'"));
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["cases"][0]["layers_per_stage"] = {4, 3}; }),
             Contains("layers_per_stage adds up to 7 layers, but bench.model has 8"));
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["cases"][0]["ranks"] = 0; }),
             Contains("ranks must be a whole number of at least 1"));
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["cases"][0]["micro_batches"] = "4"; }),
             Contains("micro_batches must be a number"));
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["cases"][0].erase("iteration_ms"); }),
             Contains("has no 'iteration_ms'"));
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["bench"]["model"]["hidden"] = 4096.5; }),
             Contains("bench.model.hidden must be a whole number"));
  // Simulated with copy-engine sends, as the bench sent them: another way of sending is refused.
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["bench"]["stage_boundary"] = "NCCL send/recv"; }),
             Contains("bench.stage_boundary 'NCCL send/recv': only stage boundaries sent by the copy engine are simulated"));
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["bench"].erase("stage_boundary"); }), Contains("has no 'stage_boundary'"));
}

TEST_CASE("pipeline steps: tokens that are not the generator's order refuse the file", "[calibrate][pipeline]") {
  using Catch::Matchers::Contains;
  // Two tasks of rank 0 in the other order: the bench ran a schedule the generator does not give.
  CHECK_THAT(read_edited("dualpipe",
                         [](json& d) {
                           json& tasks = d["cases"][0]["tasks_last_run"][0];
                           std::swap(tasks[1]["token"], tasks[2]["token"]);
                         }),
             Contains("rank 0's task 1 ran 'F1' where clustersim's dualpipe pp2 m4 now runs 'F0''"));
  // The tasks' ends out of order: not one step's timeline.
  CHECK_THAT(read_edited("dualpipe",
                         [](json& d) {
                           json& tasks = d["cases"][0]["tasks_last_run"][0];
                           std::swap(tasks[1], tasks[2]);
                         }),
             Contains("tasks_last_run[0][2].end_ms must not run backwards"));
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["cases"][0]["tasks_last_run"][1].erase(0); }),
             Contains("the schedule generator changed since the measurement"));
  // Another micro-batch count than the tokens were generated for.
  CHECK_THAT(read_edited("1f1b", [](json& d) { d["cases"][0]["micro_batches"] = 6; }),
             Contains("the schedule generator changed since the measurement"));
}

TEST_CASE("pipeline steps: the H200 profile and the H100's carried from it predict every measured step within 8%",
          "[calibrate][pipeline][data]") {
  for (const char* gpu : {"h200", "h100"}) {
    INFO(gpu);
    calibrate::MeasurementSet set;
    calibrate::read_measurements(test::source_dir() + "/calibrate/data/" + gpu + "/pipeline_step.json", set);
    REQUIRE(set.pipelines.size() == 10);
    const hw::GpuProfile& profile = *hw::find_profile(gpu);
    const calibrate::Validation v = calibrate::validate_profile(profile, *hw::find_gpu(gpu), set, 4);
    CHECK(v.pipeline.cases == 10);
    std::vector<double> pred_1f1b, meas_1f1b, pred_dualpipe, meas_dualpipe;
    for (const calibrate::CaseCheck& c : v.cases) {
      REQUIRE(c.kind == "pipeline");
      INFO(c.label << ": measured " << c.measured_us << " us, predicted " << c.predicted_us << " us");
      CHECK(c.held_out);
      // The issue's 5%: H200 1.9-4.5% (3.2% at the median), H100 1.1-3.9% (2.3%) when written, every
      // case short, with BF16 at its measured rates, copy-engine sends, the SM clock under the power
      // limit (simulated 1616 and 1629 MHz while GEMMs run, against NVML logs of 1545-1620 and
      // 1560-1665), attention and the memory-bound kernels following that clock by their measured
      // shares (kernel_clock), SDPA's layout copies and, on the H100, each memory-bound form at its
      // measured rate. Before the kernels followed the clock: H200 2.8-5.9%, H100 1.6-5.2%.
      CHECK(std::abs(c.error()) < 0.05);
      const std::string kind = c.label.substr(0, c.label.find(' '));
      if (kind == "1f1b") pred_1f1b.push_back(c.predicted_us), meas_1f1b.push_back(c.measured_us);
      if (kind == "dualpipe") pred_dualpipe.push_back(c.predicted_us), meas_dualpipe.push_back(c.measured_us);
    }
    CHECK(calibrate::fit_stats(pred_1f1b, meas_1f1b).cases == 3);
    CHECK(calibrate::fit_stats(pred_dualpipe, meas_dualpipe).cases == 3);
    CHECK(v.pipeline.median_error < 0.035);
  }
}

TEST_CASE("pipeline steps: the profile in memory runs as a scenario naming its file would", "[calibrate][pipeline]") {
  // simulate_pipeline_step applies the profile the way the scenario loader's cost_model does;
  // the same step with the profile written to a file and named there must take the same time
  // (the bundled H100 profile: its memory-bound forms and launch gap too).
  const hw::GpuProfile p = *hw::find_profile("h100");
  REQUIRE(p.kernels.launch_gap_us > 0);
  calibrate::MeasurementSet set;
  calibrate::read_measurements(data_file(), set);
  const auto it = std::find_if(set.pipelines.begin(), set.pipelines.end(), [](const calibrate::PipelineCase& c) {
    return c.schedule == models::ScheduleKind::kDualPipe;
  });
  REQUIRE(it != set.pipelines.end());
  const calibrate::PipelineCase& c = *it;
  test::TempDir tmp;
  test::write_file(tmp.file("h100.yaml"), calibrate::profile_yaml(p));
  std::string layers;
  for (int n : c.layers_per_stage) layers += (layers.empty() ? "" : ", ") + std::to_string(n);
  const std::string yaml =
      "schema_version: 1\nname: t\ndescription: t\n"
      "cluster: {gpu: h100, gpus: " + std::to_string(c.ranks) + ", sm_partitions: {compute: 132, comm: 0}}\n"
      "cost_model: {kind: calibrated, profile: " + tmp.file("h100.yaml") + "}\n"
      "workload:\n  kind: model\n"
      "  model: {name: dense, source: t, layers: 8, hidden: 4096, vocab: 32000, norm: rmsnorm, attention: {kind: gqa, "
      "heads: 32, kv_heads: 8, head_dim: 128}, ffn: {activation: swiglu, hidden: 14336}}\n"
      "  layout: {tp: 1, dp: 1, pp: " + std::to_string(c.ranks) + ", layers_per_stage: [" + layers + "]}\n"
      "  seq_len: 4096\n  micro_batch: 1\n  precision: bf16_mixed\n  recompute: {rms_norm: false, mla_up_proj: false}\n"
      "  implementation: {attention_layout_copies: true}\n"
      "  pipeline: {schedule: dualpipe, micro_batches: " + std::to_string(c.micro_batches) + ", p2p: copy_engine}\n";
  REQUIRE(c.model.layers == 8);
  REQUIRE(c.model.hidden == 4096);
  REQUIRE(c.seq_len == 4096);
  const models::RunResult r = models::run_scenario(models::load_scenario_text(yaml, "t.yaml"));
  REQUIRE(r.step);
  sim::Time end;
  for (const auto& rank : r.step->ranks) end = std::max(end, rank.pipeline_end);
  const double in_memory_s = calibrate::simulate_pipeline_step(p, *hw::find_gpu("h100"), c, "t").to_seconds();
  CHECK(in_memory_s == Approx(end.to_seconds()).epsilon(1e-6));
}

TEST_CASE("pipeline steps: validate refuses another GPU's pipeline measurements", "[calibrate][pipeline]") {
  const test::RunOutput r = test::run_clustersim({"calibrate", "validate", "h200", data_file()});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Matchers::Contains("measured on 'NVIDIA H100"));
}

TEST_CASE("pipeline steps: a copy-engine send of a stage boundary takes the measured copy time",
          "[calibrate][pipeline][data]") {
  // The bench timed each 32 MiB boundary copy (cudaMemcpyPeerAsync, GPU 0 to 1 over NVLink, beside
  // the other rank's kernels); the simulator's copy-engine send gets no rate of its own, so its
  // time alone is the bundled profile's NVLink figure and HBMs at work.
  const json d = json::parse(test::read_file(data_file()));
  std::vector<double> measured_ms;
  for (const json& c : d["cases"]) {
    REQUIRE(c["copies_last_run"]["bytes_each"] == 33554432);
    measured_ms.push_back(c["copies_last_run"]["ms_median"].get<double>());
  }
  REQUIRE(measured_ms.size() == 10);
  const models::Scenario sc = models::load_scenario_text(R"(schema_version: 1
name: copy
cluster: {gpu: h100, gpus: 2, sm_partitions: {compute: 132}}
cost_model: {kind: calibrated, profile: h100}
workload:
  kind: ops
  streams:
    - {name: idle, gpus: [0], partition: compute, ops: [{compute: {gflop: 0.001}}]}
)", "copy.yaml");
  models::OpWorkload w;
  const sim::StreamId s = w.graph.add_stream(0, 0, "pp_p2p");
  w.graph.add_send(s, 1, 33554432, "pp.send_activation", sim::Mover::kCopyEngine);
  w.stream_names = {"pp_p2p"};
  w.stream_partitions = {"compute"};
  w.engine_streams = {{s.v}};
  w.op_pos.assign(1, {});
  const double simulated_ms = models::run_scenario(sc, w).makespan.to_ms();
  std::sort(measured_ms.begin(), measured_ms.end());
  INFO("simulated " << simulated_ms << " ms; measured " << measured_ms.front() << " to " << measured_ms.back() << " ms");
  // Measured 0.092-0.096 ms (case medians): the simulated copy within 5% of every one.
  for (double m : measured_ms) CHECK(std::abs(simulated_ms / m - 1) < 0.05);
}

}  // namespace CS_TEST_FILE
