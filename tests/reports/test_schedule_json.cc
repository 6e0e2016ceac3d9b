// `clustersim schedule show --json` (reports/schedule_json.h): the schedule a real run executes
// (kernels/torch/pipeline_step.py), so it must be the generator's, complete and runnable in order.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "models/pipeline_schedule.h"
#include "reports/schedule_json.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::models::ScheduleKind;

namespace {

using Pass = std::tuple<std::string, int, int, int>;  // pass, micro-batch, stage, direction

Pass pass_of(const nlohmann::json& p) {
  return {p.at("pass").get<std::string>(), p.at("micro_batch").get<int>(), p.at("stage").get<int>(),
          p.at("direction").get<int>()};
}

// Runs the JSON as pipeline_step.py does (each rank in its order, a task once every pass it
// needs was provided) and returns how many tasks ran; every pass must be provided once.
int run_in_order(const nlohmann::json& j) {
  const auto& tasks = j.at("tasks");
  std::vector<size_t> pos(tasks.size(), 0);
  std::set<Pass> provided;
  int ran = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t r = 0; r < tasks.size(); ++r)
      while (pos[r] < tasks[r].size()) {
        const auto& t = tasks[r][pos[r]];
        bool ready = true;
        for (const auto& n : t.at("needs")) ready = ready && provided.count(pass_of(n)) > 0;
        if (!ready) break;
        for (const auto& p : t.at("provides")) CHECK(provided.insert(pass_of(p)).second);
        ++pos[r], ++ran, moved = true;
      }
  }
  return ran;
}

}  // namespace

TEST_CASE("a schedule as JSON is the generator's, rank by rank, and runs to its end in order", "[reports][schedule]") {
  const std::tuple<ScheduleKind, int, int, int> cases[] = {
      {ScheduleKind::k1f1b, 2, 8, 1},    {ScheduleKind::kZb1p, 2, 8, 1},      {ScheduleKind::kDualPipe, 2, 8, 1},
      {ScheduleKind::kDualPipeV, 4, 8, 1}, {ScheduleKind::kInterleaved1f1b, 2, 8, 2}, {ScheduleKind::kDualPipe, 8, 20, 1}};
  for (const auto& [kind, stages, micro_batches, virt] : cases) {
    const cs::models::PipelineSchedule s = cs::models::make_schedule({kind, stages, micro_batches, virt});
    const nlohmann::json j = cs::reports::schedule_json(s);
    INFO(j.at("kind").get<std::string>() << " pp " << stages << " m " << micro_batches);
    CHECK(j.at("kind") == cs::models::schedule_kind_name(kind));
    CHECK(j.at("ranks") == s.ranks);
    CHECK(j.at("model_stages") == s.model_stages);
    CHECK(j.at("micro_batches_per_direction") == s.micro_batches_per_direction);
    REQUIRE(j.at("tasks").size() == static_cast<size_t>(s.ranks));
    size_t total = 0;
    for (int r = 0; r < s.ranks; ++r) {
      const auto& list = j.at("tasks")[static_cast<size_t>(r)];
      REQUIRE(list.size() == s.per_rank[static_cast<size_t>(r)].size());
      total += list.size();
      for (size_t i = 0; i < list.size(); ++i)
        CHECK(list[i].at("token") == cs::models::task_token(s, s.per_rank[static_cast<size_t>(r)][i]));
      // The stages a rank holds are where rank_of puts them.
      for (const auto& st : j.at("rank_stages")[static_cast<size_t>(r)])
        CHECK(s.rank_of(st.at("stage").get<int>(), st.at("direction").get<int>()) == r);
    }
    CHECK(run_in_order(j) == static_cast<int>(total));
  }
}

TEST_CASE("a DualPipe pair in JSON carries both halves and both halves' needs", "[reports][schedule]") {
  const cs::models::PipelineSchedule s = cs::models::make_schedule({ScheduleKind::kDualPipe, 2, 8, 1});
  const nlohmann::json j = cs::reports::schedule_json(s);
  int pairs = 0;
  for (const auto& rank : j.at("tasks"))
    for (const auto& t : rank)
      if (t.at("kind") == "forward_backward") {
        ++pairs;
        REQUIRE(t.contains("bwd"));
        // The backward half provides the input and weight gradients of its chunk, the forward half
        // its activations: three passes.
        CHECK(t.at("provides").size() == 3);
      } else {
        CHECK_FALSE(t.contains("bwd"));
      }
  CHECK(pairs == 10);  // 5 a rank, as `clustersim schedule show dualpipe --stages 2 --microbatches 8` draws
}

TEST_CASE("a schedule in JSON lists each rank's point-to-point batches where its source posts them",
          "[reports][schedule]") {
  // 1F1B on 3 ranks, 4 micro-batches: Megatron's calls (tests/models/test_pipeline_batches.cc's
  // golden). Rank 1 first receives micro-batch 0's activations before its first task, and last
  // sends micro-batch 3's input gradient after its last one.
  const cs::models::PipelineSchedule s = cs::models::make_schedule({ScheduleKind::k1f1b, 3, 4, 1});
  const nlohmann::json j = cs::reports::schedule_json(s);
  REQUIRE(j.at("batches").size() == 3u);
  for (int r = 0; r < 3; ++r) CHECK(j.at("batches")[r].size() == s.commits[r].size());
  const auto& rank1 = j.at("batches")[1];
  CHECK(rank1.front().at("before_task") == 0);
  CHECK(rank1.front().at("sends").empty());
  CHECK(rank1.front().at("recvs") ==
        nlohmann::json::parse(R"([{"pass": "forward", "micro_batch": 0, "stage": 0, "direction": 0}])"));
  CHECK(rank1.back().at("before_task") == s.per_rank[1].size());
  CHECK(rank1.back().at("sends") ==
        nlohmann::json::parse(R"([{"pass": "input_grad", "micro_batch": 3, "stage": 1, "direction": 0}])"));
  // A schedule that records none still lists every rank, each empty.
  const nlohmann::json zb = cs::reports::schedule_json(cs::models::make_schedule({ScheduleKind::kZb1p, 2, 4, 1}));
  CHECK(zb.at("batches") == nlohmann::json::parse("[[], []]"));
}

}  // namespace CS_TEST_FILE
