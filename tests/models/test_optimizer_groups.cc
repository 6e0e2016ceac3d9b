// The optimizer step's two data-parallel groups, the dense parameters' and the routed experts',
// reduce and gather one after the other on each GPU (models/optimizer_step.cc: NCCL has different
// communicators used at different epochs), the dense group's first.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "tiny_moe_scenario.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;
using cs::sim::OpTiming;
using cs::sim::Time;

// Per GPU, each optimizer op's timing by label.
using OptimizerOps = std::map<int, std::map<std::string, OpTiming>>;

// Runs the tiny MoE model on 16 GPUs: two pipeline ranks of 8, each two EP groups of 4, so every
// GPU reduces its dense parameters over 8 replicas and its experts over 2.
OptimizerOps run(int zero_stage, RunResult& result) {
  const std::string text =
      cs::test::tiny_moe_on_fat_tree(2, "{pp: 2, dp: 8, ep: 4, zero_stage: " + std::to_string(zero_stage) + "}", "full",
                                     1024, "  pipeline: {schedule: dualpipe, micro_batches: 8}\n");
  const Scenario sc = load_scenario_text(text, "o.yaml");
  OptimizerOps ops;
  RunOptions options;
  options.inspect = [&](const OpWorkload& w, const cs::sim::ExecResult& ex) {
    const auto& g = w.graph;
    for (uint32_t i = 0; i < g.ops().size(); ++i) {
      const std::string label(g.label(g.ops()[i]));
      if (label.rfind("optimizer.", 0) != 0) continue;
      const int gpu = g.streams()[g.ops()[i].stream].gpu;
      CHECK(ops[gpu].count(label) == 0);  // one of each per GPU
      ops[gpu][label] = ex.ops[i];
    }
  };
  result = run_scenario(sc, options);
  return ops;
}

TEST_CASE("optimizer: the experts' reduce-scatter and all-gather follow the dense group's on every GPU",
          "[optimizer]") {
  RunResult r;
  const OptimizerOps ops = run(1, r);
  REQUIRE(ops.size() == 16);
  REQUIRE(r.step);
  for (const auto& [gpu, op] : ops) {
    INFO("GPU " << gpu);
    for (const char* label :
         {"optimizer.reduce_scatter_grads", "optimizer.reduce_scatter_expert_grads", "optimizer.sum_dualpipe_copies",
          "optimizer.adamw", "optimizer.all_gather_weights", "optimizer.all_gather_expert_weights"})
      REQUIRE(op.count(label) == 1);
    const OpTiming &rs = op.at("optimizer.reduce_scatter_grads"),
                   &rs_e = op.at("optimizer.reduce_scatter_expert_grads"), &adam = op.at("optimizer.adamw"),
                   &ag = op.at("optimizer.all_gather_weights"), &ag_e = op.at("optimizer.all_gather_expert_weights");
    // Each takes time of its own, and none overlaps the other group's.
    CHECK(rs.end > rs.start);
    CHECK(rs_e.end > rs_e.start);
    CHECK(rs_e.start >= rs.end);
    CHECK(adam.start >= rs_e.end);
    CHECK(ag.start >= adam.end);
    CHECK(ag_e.start >= ag.end);
    CHECK(ag_e.end > ag_e.start);
  }
  // Rank 0's optimizer phase holds both groups' collectives back to back.
  const auto& gpu0 = ops.at(0);
  Time collectives;
  for (const char* label : {"optimizer.reduce_scatter_grads", "optimizer.reduce_scatter_expert_grads",
                            "optimizer.all_gather_weights", "optimizer.all_gather_expert_weights"})
    collectives += gpu0.at(label).end - gpu0.at(label).start;
  CHECK(r.step->ranks.at(0).optimizer >= collectives);
}

TEST_CASE("optimizer: without ZeRO each group all-reduces in turn and nothing is gathered", "[optimizer]") {
  RunResult r;
  const OptimizerOps ops = run(0, r);
  REQUIRE(ops.size() == 16);
  for (const auto& [gpu, op] : ops) {
    INFO("GPU " << gpu);
    REQUIRE(op.count("optimizer.all_reduce_grads") == 1);
    REQUIRE(op.count("optimizer.all_reduce_expert_grads") == 1);
    CHECK(op.at("optimizer.all_reduce_expert_grads").start >= op.at("optimizer.all_reduce_grads").end);
    CHECK(op.count("optimizer.all_gather_weights") == 0);
    CHECK(op.count("optimizer.all_gather_expert_weights") == 0);
  }
}

}  // namespace CS_TEST_FILE
