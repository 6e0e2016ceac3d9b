// The largest graph a scenario may expand to (models::GraphLimits): refused beyond the default at
// the key that makes it so, accepted when the caller raises the limits (clustersim run
// --graph-limit), on every path that checks a size: a model workload's step, a training phase's
// full-batch step and an ops workload's streams.
#include <catch2/catch.hpp>
#include <string>

#include "hw/user_error.h"
#include "models/model_workload.h"
#include "models/scenario_loader.h"
#include "models/training_run.h"
#include "tiny_moe_scenario.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

// The tiny MoE model's whole DualPipe step on 8 GPUs, or its 1F1B step with a one-phase training run.
std::string pipeline_step() {
  return R"(schema_version: 1
name: limits
)" + cs::test::kEightH800OnASwitch +
         R"(workload:
  kind: model
)" + cs::test::kTinyMoeModel +
         R"(  layout: {pp: 4, dp: 2, ep: 2}
  seq_len: 1024
  pipeline: {schedule: dualpipe, micro_batches: 8}
)";
}

std::string error_of(const std::string& text, const GraphLimits& limits) {
  try {
    load_scenario_text(text, "l.yaml", limits);
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a model workload's step beyond the graph limits is refused, within raised ones accepted", "[limits]") {
  const Scenario sc = load_scenario_text(pipeline_step(), "l.yaml");
  const WorkloadSize size = model_workload_size(*sc.model);
  REQUIRE(size.ops > 0);
  REQUIRE(size.transfers > 0);
  const auto ops = static_cast<int64_t>(size.ops), transfers = static_cast<int64_t>(size.transfers);
  // Exactly the step's size passes; one op or one transfer fewer is refused, saying how to raise it.
  CHECK(error_of(pipeline_step(), {ops, transfers}).empty());
  const std::string few_ops = error_of(pipeline_step(), {ops - 1, transfers});
  CHECK_THAT(few_ops, Catch::Contains("l.yaml:") && Catch::Contains(std::to_string(size.ops) + " ops") &&
                          Catch::Contains("beyond the limits of " + std::to_string(ops - 1)) &&
                          Catch::Contains("--graph-limit of clustersim run, sweep and check"));
  CHECK_THAT(error_of(pipeline_step(), {ops, transfers - 1}), Catch::Contains("transfers, beyond the limits"));
  // The defaults are the loader's constants.
  CHECK(GraphLimits{}.ops == kMaxExpandedOps);
  CHECK(GraphLimits{}.transfers == kMaxTransfers);
}

TEST_CASE("a training phase's step beyond the graph limits is refused at its batch", "[limits]") {
  const std::string text =
      cs::test::tiny_training_scenario("  phases:\n    - {name: p, steps: 10, global_batch: 16}\n");
  const Scenario sc = load_scenario_text(text, "l.yaml");
  REQUIRE(sc.training);
  const WorkloadSize size = model_workload_size(*sc.training->phases.front().workload);
  const auto ops = static_cast<int64_t>(size.ops), transfers = static_cast<int64_t>(size.transfers);
  CHECK(error_of(text, {ops, transfers}).empty());
  // The phase's full batch (16 sequences: 8 micro-batches per pipeline) is larger than the
  // workload's own 4 micro-batches, so the workload passes and the phase is refused at its batch.
  const Scenario four = load_scenario_text(
      cs::test::tiny_training_scenario("  phases:\n    - {name: p, steps: 1, global_batch: 8}\n"), "l.yaml");
  REQUIRE(model_workload_size(*four.training->phases.front().workload).ops < size.ops);
  const std::string e = error_of(text, {ops - 1, transfers});
  CHECK_THAT(e, Catch::Contains("l.yaml:21:") && Catch::Contains("a step of this batch holds") &&
                    Catch::Contains("--graph-limit of clustersim run, sweep and check raises the limits"));
}

TEST_CASE("an ops workload beyond the graph limits is refused at its stream", "[limits]") {
  const std::string text = R"(schema_version: 1
name: ops
cluster: {gpu: h800, gpus: 2, sm_partitions: {compute: 132}}
workload:
  kind: ops
  streams:
    - {name: s, gpus: [0, 1], partition: compute, ops: [{compute: {gflop: 1}, repeat: 5}]}
)";
  CHECK(error_of(text, {10, 10}).empty());  // 2 GPUs x 5 repeats
  CHECK_THAT(error_of(text, {9, 10}), Catch::Contains("l.yaml:7:") && Catch::Contains("more than 9 ops"));
}

}  // namespace CS_TEST_FILE
