// The step capture of a whole-step pipeline run (a tiny MoE model, DualPipe on 4 ranks): one role
// per pipeline rank whose parts add up to the step, the optimizer as DeepSeek's breakdown counts it,
// a timeline of at most four ranks in two tracks each, and collectives grouped as nccl-tests does.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "reports/step_capture.h"
#include "../models/tiny_moe_scenario.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using nlohmann::json;

namespace {

std::string dualpipe_scenario() {
  return R"(schema_version: 1
name: pipe
)" + cs::test::kEightH800OnASwitch + R"(workload:
  kind: model
)" + cs::test::kTinyMoeModel + R"(  layout: {pp: 4, dp: 2, ep: 2}
  seq_len: 1024
  pipeline: {schedule: dualpipe, micro_batches: 8}
)";
}

}  // namespace

TEST_CASE("step capture of a DualPipe step: per-rank parts sum to the step, a four-rank timeline") {
  const cs::models::Scenario sc = cs::models::load_scenario_text(dualpipe_scenario(), "p.yaml");
  json cap;
  cs::models::RunOptions options;
  options.inspect = [&](const cs::models::OpWorkload& w, const cs::sim::ExecResult& ex) {
    cap = cs::reports::capture_step(w, ex);
  };
  const cs::models::RunResult r = cs::models::run_scenario(sc, options);
  REQUIRE(r.step);
  CHECK(cap["role_kind"] == "pipeline rank");
  REQUIRE(cap["roles"].size() == 4);
  const int64_t step = cap["step_ns"].get<int64_t>();
  CHECK(step == (r.makespan.ps_count() + 500) / 1000);
  for (size_t i = 0; i < 4; ++i) {
    const json& role = cap["roles"][i];
    INFO(role.dump());
    int64_t sum = role["compute_ns"].get<int64_t>() + role["optimizer_ns"].get<int64_t>() +
                  role["bubble_ns"].get<int64_t>() + role["idle_ns"].get<int64_t>();
    for (const auto& [k, v] : role["exposed_ns"].items()) sum += v.get<int64_t>();
    CHECK(std::abs(sum - step) <= 16);
    CHECK(role["label"] == "rank " + std::to_string(i));
    CHECK(role["compute_ns"].get<int64_t>() > 0);
    // The optimizer's own kernels, its gradient communication included, take at least as long as
    // its share of the step breakdown when nothing else runs beside it: here, close to it.
    const double breakdown_opt_ns = r.step->ranks[i].optimizer.to_seconds() * 1e9;
    CHECK(role["optimizer_ns"].get<double>() <= breakdown_opt_ns * 1.0001 + 16);
    CHECK(role["optimizer_ns"].get<double>() > 0.5 * breakdown_opt_ns);
  }
  const json& tl = cap["timeline"];
  CHECK(tl["rows"].size() == 8);  // ranks 0, 1, 2 and 3: compute and comm tracks
  std::set<std::string> used;
  for (const auto& row : tl["rows"])
    for (const auto& b : row["bars"]) {
      CHECK(b[0].get<int64_t>() <= b[1].get<int64_t>());
      CHECK(b[1].get<int64_t>() <= step);
      used.insert(tl["categories"][b[2].get<int>()].get<std::string>());
    }
  CHECK(used.count("forward & backward (overlapped)") == 1);  // DualPipe's paired chunks
  CHECK(used.count("optimizer") == 1);
  CHECK_FALSE(cap["collectives"].empty());
  for (const auto& c : cap["collectives"]) {
    CHECK(c["count"].get<int64_t>() > 0);
    CHECK(c["exposed_ns"].get<int64_t>() + c["overlapped_ns"].get<int64_t>() <= step);  // per GPU, within the step
  }
}

}  // namespace CS_TEST_FILE
