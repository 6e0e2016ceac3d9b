// Training runs from representative steps: steps, tokens, GPU-hours, days and cost per phase, the
// batch ramp, phase overrides of the workload, and the errors a user can make in `training:`.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "hw/user_error.h"
#include "models/model_workload.h"
#include "models/scenario_loader.h"
#include "tiny_moe_scenario.h"
#include "models/scenario_runner.h"
#include "models/training_run.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

std::string scenario(const std::string& training) { return cs::test::tiny_training_scenario(training); }

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "t.yaml");
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

TrainingResult predict(const Scenario& sc) { return predict_training(sc, run_scenario(sc)); }

}  // namespace

TEST_CASE("training run: a fixed batch costs steps x step time x GPUs") {
  const Scenario sc = load_scenario_text(scenario(R"(  usd_per_gpu_hour: 2.5
  phases:
    - {name: main, steps: 1000, global_batch: 16}
)"), "t.yaml");
  REQUIRE(sc.training);
  REQUIRE(sc.model->pipeline);
  CHECK(sc.model->pipeline->micro_batches == 8);  // 16 sequences over dp 2 x micro_batch 1
  const RunResult first = run_scenario(sc);
  const TrainingResult t = predict_training(sc, first);
  REQUIRE(t.phases.size() == 1);
  const PhaseResult& p = t.phases[0];
  const double step_s = first.makespan.to_seconds();
  CHECK(p.steps == 1000);
  CHECK(p.tokens == Approx(1000.0 * 16 * 1024));
  CHECK(p.step == first.makespan);
  CHECK(p.gpu_hours == Approx(1000 * step_s * 8 / 3600));
  CHECK(t.days == Approx(1000 * step_s / 86400));
  CHECK(t.cost_usd == Approx(2.5 * t.gpu_hours));
  CHECK(p.tokens_per_s_per_gpu == Approx(16 * 1024 / step_s / 8));
  // Full attention counts more FLOPs per token than causal; MFU is TFLOPS over the BF16 peak.
  CHECK(p.tflops_full > p.tflops_causal);
  CHECK(p.mfu_causal == Approx(p.tflops_causal / 989.4).epsilon(0.01));
}

TEST_CASE("training run: a batch ramp is summed increment by increment, steps affine in micro-batches") {
  const Scenario sc = load_scenario_text(scenario(R"(  phases:
    - name: ramped
      tokens: 4.0e8
      global_batch: {start: 8, end: 32, ramp_tokens: 1.0e8}
)"), "t.yaml");
  const TrainingResult t = predict(sc);
  const PhaseResult& p = t.phases[0];
  CHECK(p.fit_micro_batches == 4);  // 1F1B on 4 stages takes 4 micro-batches: the ramp's start
  CHECK_FALSE(p.extrapolated);
  CHECK(p.step_at_ramp_start < p.step);
  // The same run step by step: batch = start + floor(progress x (end - start) / 2) x 2.
  const double seq = 1024, fit = p.step_at_ramp_start.to_seconds(), full = p.step.to_seconds();
  double consumed = 0, seconds = 0;
  int64_t steps = 0;
  while (consumed < 4.0e8) {
    const double progress = std::min(1.0, consumed / 1.0e8);
    const int64_t batch = 8 + static_cast<int64_t>(std::floor(progress * 24 / 2 + 1e-12)) * 2;
    seconds += fit + (full - fit) * (batch / 2 - 4) / (16 - 4);
    consumed += batch * seq;
    ++steps;
  }
  CHECK(p.steps == steps);
  CHECK(p.tokens == Approx(consumed));
  CHECK(p.gpu_hours == Approx(seconds * 8 / 3600));
}

TEST_CASE("training run: a phase replaces workload keys and runs its own step") {
  const Scenario sc = load_scenario_text(scenario(R"(  phases:
    - {name: short, steps: 10, global_batch: 16}
    - {name: long, steps: 10, global_batch: 16, workload: {seq_len: 4096}}
)"), "t.yaml");
  const TrainingResult t = predict(sc);
  REQUIRE(t.phases.size() == 2);
  CHECK(t.phases[1].seq_len == 4096);
  CHECK(t.phases[1].step > t.phases[0].step);
  CHECK(t.gpu_hours == Approx(t.phases[0].gpu_hours + t.phases[1].gpu_hours));
}

TEST_CASE("training run: a phase's workload keys stay with that phase") {
  // The phases after an overriding one start again from the scenario's own workload.
  const Scenario sc = load_scenario_text(scenario(R"(  phases:
    - {name: long, steps: 10, global_batch: 16, workload: {seq_len: 4096}}
    - {name: short, steps: 10, global_batch: 16}
    - {name: deep, steps: 10, global_batch: 8, workload: {layout: {pp: 2, dp: 4, ep: 2}}}
    - {name: again, steps: 10, global_batch: 16}
)"), "t.yaml");
  REQUIRE(sc.training->phases.size() == 4);
  const auto& ph = sc.training->phases;
  CHECK(ph[0].workload->seq_len == 4096);
  CHECK(ph[1].workload->seq_len == 1024);
  CHECK(ph[2].workload->seq_len == 1024);
  CHECK(ph[2].workload->layout.pp == 2);
  CHECK(ph[3].workload->layout.pp == 4);
  CHECK(ph[3].workload->layout.dp == 2);
}

TEST_CASE("training run: mistakes in the training section are placed") {
  const auto phase = [](const std::string& p) { return scenario("  phases:\n    - {name: a, " + p + "}\n"); };
  CHECK(error_of(phase("steps: 10, global_batch: 15")) ==
        "t.yaml:21:42: a global batch of 15 sequences does not split over dp x micro_batch = 2 (every data-parallel "
        "rank runs whole micro-batches)");
  CHECK(error_of(phase("steps: 10, global_batch: 4, workload: {pipeline: {schedule: zb1p, micro_batches: 4}}"))
            .find("t.yaml:21:42: at the full batch of 4 sequences (2 micro-batches per pipeline): ") == 0);
  CHECK(error_of(phase("steps: 10, tokens: 5, global_batch: 16")) ==
        "t.yaml:21:36: 'steps' and 'tokens' cannot both be given in 'training.phases[0]'");
  CHECK(error_of(phase("steps: 10, global_batch: 16, workload: {seq_lne: 8}"))
            .find("t.yaml:21:57: unknown key 'seq_lne' in 'training.phases[0].workload'; did you mean 'seq_len'?") == 0);
  CHECK(error_of(phase("steps: 10, global_batch: 16, workload: {kind: ops}")).find("t.yaml:21:57: unknown key 'kind'") == 0);
  CHECK(error_of(phase("steps: 10, global_batch: 16, workload: {seq_len: 0}")).find("t.yaml:21:66: ") == 0);
  CHECK(error_of(phase("steps: 10, global_batch: {start: 32, end: 16, ramp_tokens: 1e9}")).find("t.yaml:21:59: ") == 0);
  CHECK(error_of(scenario("  phases: []\n")) == "t.yaml:20:11: 'training.phases' lists no phase");
}

}  // namespace CS_TEST_FILE
