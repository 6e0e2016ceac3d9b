// Issue 7's physics checks: turning one knob of a training scenario moves the answer the way the
// mechanism says it must. The tiny MoE model on two HGX nodes (EP over one node's NVLink), each
// variant a sweep point of one base scenario.
#include <catch2/catch.hpp>

#include <fstream>

#include "models/scenario_runner.h"
#include "models/sweep_point.h"
#include "models/sweep_spec.h"
#include "models/training_run.h"
#include "test_support.h"
#include "tiny_moe_scenario.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

struct Outcome {
  RunResult run;
  double comm_busy_s = 0;  // summed over the communication partition's streams, per GPU
};

// The base scenario with `set` (a flow map of key: value), run with its training prediction.
Outcome run_with(const std::string& set) {
  cs::test::TempDir dir;
  const std::string path = dir.file("knobs.yaml");
  std::ofstream(path) << R"(schema_version: 1
name: knobs
cluster:
  gpu: h800
  node: hgx-8gpu
  nodes: 2
  nic: cx7-400g
  switch: ib-64x400g
  sm_partitions: {compute: 112, comm: 20}
  fabric: {kind: multi_plane_fat_tree}
workload:
  kind: model
)" + cs::test::kTinyMoeModel + R"(  layout: {pp: 2, dp: 8, ep: 8}
  seq_len: 1024
  pipeline: {schedule: dualpipe, micro_batches: 8}
training:
  phases: [{name: all, tokens: 1e9, global_batch: 64}]
sweep:
  points: [)" + set + R"(]
)";
  const SweepSpec spec = load_sweep_file(path);
  const Scenario sc = sweep_point_scenario(spec, expand_sweep(spec).at(0));
  Outcome o;
  o.run = run_scenario(sc);
  o.run.training = predict_training(sc, o.run);
  for (const StreamResult& s : o.run.streams)
    if (s.partition == "comm") o.comm_busy_s += s.busy_mean.to_seconds();
  return o;
}

double step_s(const Outcome& o) { return o.run.makespan.to_seconds(); }

}  // namespace

TEST_CASE("knobs: fewer communication SMs slow the all-to-all", "[knobs]") {
  const Outcome many = run_with("{comm_sms: 20}"), few = run_with("{comm_sms: 4}");
  CHECK(few.comm_busy_s > 1.5 * many.comm_busy_s);
  CHECK(step_s(few) > step_s(many));
}

TEST_CASE("knobs: 1F1B instead of DualPipe adds bubble", "[knobs]") {
  const Outcome dual = run_with("{workload.pipeline.schedule: dualpipe}");
  const Outcome one = run_with("{workload.pipeline.schedule: 1f1b}");
  REQUIRE(dual.run.step);
  REQUIRE(one.run.step);
  CHECK(one.run.step->mean.bubble > dual.run.step->mean.bubble);
  CHECK(step_s(one) > step_s(dual));
}

TEST_CASE("knobs: H100's NVLink instead of H800's speeds the intra-node all-to-all", "[knobs]") {
  // With 48 SMs copying (7.65 GB/s each, the roofline's DeepEP rate) the all-to-all outruns the
  // H800's 200 GB/s of NVLink, not the H100's 450; at 20 SMs (153 GB/s) the SMs bind on both.
  const Outcome h800 = run_with("{cluster.gpu: h800, comm_sms: 48}"), h100 = run_with("{cluster.gpu: h100, comm_sms: 48}");
  CHECK(h100.comm_busy_s < 0.9 * h800.comm_busy_s);
  const Outcome h800_20 = run_with("{cluster.gpu: h800, comm_sms: 20}"), h100_20 = run_with("{cluster.gpu: h100, comm_sms: 20}");
  CHECK(h100_20.comm_busy_s == Approx(h800_20.comm_busy_s).epsilon(0.02));
  CHECK(step_s(h100) <= step_s(h800));
}

TEST_CASE("knobs: more GPUs at a fixed batch cut days, but not GPU-hours in proportion", "[knobs]") {
  const Outcome two = run_with("{cluster.nodes: 2, workload.layout.dp: 8}");
  const Outcome four = run_with("{cluster.nodes: 4, workload.layout.dp: 16}");
  REQUIRE(two.run.training);
  REQUIRE(four.run.training);
  CHECK(four.run.gpus == 2 * two.run.gpus);
  CHECK(four.run.training->days < two.run.training->days);
  // Half the micro-batches per pipeline: the same fill and drain over less work.
  CHECK(four.run.training->days > 0.5 * two.run.training->days);
  CHECK(four.run.training->gpu_hours > two.run.training->gpu_hours);
}

}  // namespace CS_TEST_FILE
