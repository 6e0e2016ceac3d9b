// DeepSeek's step breakdown (warm-up forward, steady phase, input and weight backward, optimizer,
// bubble) read back from runs: exact on uniform chunk times, summing to the step on model runs.
#include <catch2/catch.hpp>

#include <string>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "models/optimizer_step.h"
#include "models/pipeline_schedule.h"
#include "models/schedule_uniform_sim.h"
#include "models/step_breakdown.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;
using cs::sim::Time;

namespace {

ChunkTimes uniform_times() {
  ChunkTimes t;
  t.forward = Time::us(100);
  t.backward = Time::us(230);
  t.weight = Time::us(70);
  t.forward_backward = Time::us(300);
  return t;
}

}  // namespace

TEST_CASE("step breakdown: 1F1B splits into pp-1-r warm-up forwards, m-(pp-1-r) pairs and pp-1-r backwards") {
  const ChunkTimes t = uniform_times();
  for (int pp : {2, 4, 8, 16})
    for (int m : {pp, 2 * pp + 1, 3 * pp}) {
      const PipelineSchedule s = make_schedule(ScheduleParams{ScheduleKind::k1f1b, pp, m, 1});
      const ScheduleRun run = simulate_uniform(s, t);
      REQUIRE(run.breakdown.ranks.size() == static_cast<size_t>(pp));
      for (int r = 0; r < pp; ++r) {
        INFO("pp " << pp << " m " << m << " rank " << r);
        const RankStepTimes& b = run.breakdown.ranks[r];
        const int w = pp - 1 - r;
        CHECK(b.warmup_forward == t.forward * w);
        CHECK(b.steady == (t.forward + t.backward) * (m - w));
        CHECK(b.input_backward == t.backward * w);
        CHECK(b.weight_backward == Time());
        CHECK(b.optimizer == Time());
        CHECK(b.bubble == (t.forward + t.backward) * (pp - 1));
        CHECK(b.total() == run.makespan);
      }
    }
}

TEST_CASE("step breakdown: every schedule's parts sum to the step and its bubble is the rank's idle time") {
  const ChunkTimes t = uniform_times();
  for (ScheduleKind k : {ScheduleKind::k1f1b, ScheduleKind::kInterleaved1f1b, ScheduleKind::kZb1p,
                         ScheduleKind::kDualPipe, ScheduleKind::kDualPipeV})
    for (int pp : {4, 8}) {
      ScheduleParams p{k, pp, 4 * pp, k == ScheduleKind::kInterleaved1f1b ? 2 : 1};
      const PipelineSchedule s = make_schedule(p);
      const ScheduleRun run = simulate_uniform(s, t);
      for (int r = 0; r < s.ranks; ++r) {
        INFO(schedule_kind_name(k) << " pp " << pp << " rank " << r);
        const RankStepTimes& b = run.breakdown.ranks[r];
        CHECK(b.total() == run.makespan);
        CHECK(b.bubble == run.bubble[r]);
        if (r == 0) CHECK(b.warmup_forward > Time());  // the first rank always warms up
        CHECK(b.steady > Time());
        // Split backwards leave weight chunks for the cool-down; full backwards leave none.
        const bool split = k == ScheduleKind::kZb1p || k == ScheduleKind::kDualPipe || k == ScheduleKind::kDualPipeV;
        if (!split) CHECK(b.weight_backward == Time());
      }
      if (k == ScheduleKind::kZb1p || k == ScheduleKind::kDualPipe) CHECK(run.breakdown.mean.weight_backward > Time());
    }
}

TEST_CASE("step breakdown by chunk kind: each task kind's count times its time, wherever it runs") {
  const ChunkTimes t = uniform_times();
  for (ScheduleKind k : {ScheduleKind::k1f1b, ScheduleKind::kZb1p, ScheduleKind::kDualPipe, ScheduleKind::kDualPipeV})
    for (int pp : {4, 16}) {
      const PipelineSchedule s = make_schedule(ScheduleParams{k, pp, 8 * pp, 1});
      const ScheduleRun run = simulate_uniform(s, t);
      REQUIRE(run.breakdown.by_chunk.size() == static_cast<size_t>(s.ranks));
      for (int r = 0; r < s.ranks; ++r) {
        INFO(schedule_kind_name(k) << " pp " << pp << " rank " << r);
        Time f, b, w, fb;  // each kind's count times its uniform time
        for (const ChunkTask& task : s.per_rank[r])
          (task.kind == ChunkTask::kForward           ? f
           : task.kind == ChunkTask::kForwardBackward ? fb
           : task.kind == ChunkTask::kBackwardWeight  ? w
                                                      : b) += t.of(task);
        const RankChunkTimes& c = run.breakdown.by_chunk[r];
        CHECK(c.rank == r);
        CHECK(c.forward == f);
        CHECK(c.backward == b);
        CHECK(c.weight == w);
        CHECK(c.forward_backward == fb);
        CHECK(c.bubble == run.breakdown.ranks[r].bubble);
        CHECK(c.optimizer == run.breakdown.ranks[r].optimizer);
        CHECK(c.total() == run.makespan);
      }
    }
  // DualPipe at PP16 and 120 micro-batches (DeepSeek-V3's): 29 of rank 0's 61 lone chunks run in
  // its steady phase. Of its 23 lone forwards, 15 warm up (the 16th opens the steady phase) and 7
  // sit in input-weight-forward triples right after it; of its 23 lone backwards, 7 input ones are
  // in those triples, 7 full ones among its last pairs, the 8th after them; 7 of its 15 weight
  // chunks are in the triples.
  const PipelineSchedule s = make_schedule(ScheduleParams{ScheduleKind::kDualPipe, 16, 120, 1});
  const ScheduleRun run = simulate_uniform(s, t);
  const RankChunkTimes& c = run.breakdown.by_chunk[0];
  CHECK(c.forward == t.forward * 23);
  CHECK(c.backward == t.backward * 8 + t.backward_input() * 15);
  CHECK(c.weight == t.weight * 15);
  CHECK(c.forward_backward == t.forward_backward * 97);
  const RankStepTimes& p = run.breakdown.ranks[0];
  CHECK(p.warmup_forward == t.forward * 15);
  CHECK(p.input_backward == t.backward + t.backward_input() * 8);  // the last lone full backward, then 8 input ones
  CHECK(p.weight_backward == t.weight * 8);
  // Means round each part down to the picosecond: the two splits' means agree within a few.
  CHECK(std::llabs((run.breakdown.mean.total() - run.breakdown.by_chunk_mean.total()).ps_count()) <= 8);
}

TEST_CASE("optimizer rings: one per GPU of a node, each leaving every node through another GPU") {
  // 16 GPUs on 2 nodes of 8: 8 rings; ring k enters and leaves each node at local GPU k and k-1.
  std::vector<int> members;
  for (int g = 0; g < 16; ++g) members.push_back(g);
  const RingSet rs = data_parallel_rings(members, 8);
  REQUIRE(rs.rings.size() == 8);
  for (size_t k = 0; k < 8; ++k) {
    INFO("ring " << k);
    const auto& ring = rs.rings[k];
    REQUIRE(ring.size() == 16);
    CHECK(ring.front() == static_cast<int>(k));
    CHECK(ring[8] == 8 + static_cast<int>(k));  // the hop into node 1 lands on local GPU k
    std::vector<int> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == members);  // every member once
  }
  // One node: a single ring; two GPUs on two nodes (experts' replicas): one ring of two.
  CHECK(data_parallel_rings({0, 1, 2, 3}, 8).rings.size() == 1);
  const RingSet pair = data_parallel_rings({3, 67}, 8);
  REQUIRE(pair.rings.size() == 1);
  CHECK(pair.rings[0] == std::vector<int>{3, 67});
  CHECK_THROWS(data_parallel_rings({0, 1, 8}, 8));  // unequal GPUs per node
}

}  // namespace CS_TEST_FILE
