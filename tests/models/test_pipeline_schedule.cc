// Pipeline schedules as task orders: the DualPipe golden order, small hand-checkable orders of the
// other kinds, size constraints, validity over randomised sizes, activations in flight and the
// stages each rank holds (cross-checked with the memory model). Bubbles: test_schedule_bubbles.cc.
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/memory_model.h"
#include "models/pipeline_schedule.h"
#include "models/schedule_uniform_sim.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;
using cs::sim::Time;

namespace {

std::vector<std::string> orders(const PipelineSchedule& s) {
  std::vector<std::string> out;
  for (const auto& tasks : s.per_rank) {
    std::string row;
    for (const ChunkTask& t : tasks) {
      if (!row.empty()) row += ' ';
      row += task_token(s, t);
    }
    out.push_back(row);
  }
  return out;
}

PipelineSchedule make(ScheduleKind k, int pp, int m, int v = 1) { return make_schedule({k, pp, m, v}); }

}  // namespace

// Golden: DualPipe on 8 ranks with 20 micro-batches (10 per direction), the example of the
// deepseek-ai/DualPipe README ("Example DualPipe scheduling for 8 PP ranks and 20 micro-batches
// in two directions", images/schedules.png). The figure is an image that leaves out the reverse
// direction's batch ids, so the order below is transcribed from the program it depicts: the
// steps 1-8 of DualPipe.step() in dualpipe/dualpipe.py (commit bb214e8) for num_ranks=8,
// num_chunks=20, stepped rank by rank outside this code base (a separate Python transcription).
// Notation: F forward, B full backward, I input backward (zero-bubble B), W weight backward,
// FxBy an overlapped pair (forward x, backward y), ' the reverse direction.
TEST_CASE("schedule: GOLDEN DualPipe 8 ranks 20 micro-batches, the README figure's order") {
  const std::vector<std::string> golden = {
      "F0 F1 F2 F3 F4 F5 F6 F0' I0' W0' F1' I1' W1' F2' I2' W2' F3' F7B3' F4'B0 F8B4' F5'B1 F9B5' "
      "F6'B2 B6' F7'B3 B7' F8'B4 B8' F9'B5 B9' I6 W6 I7 W7 I8 W8 I9 W9",
      "F0 F1 F2 F3 F4 F0' F5 F1' I0' W0' F2' I1' W1' F3' F6B2' F4'B0 F7B3' F5'B1 F8B4' F6'B2 F9B5' "
      "F7'B3 B6' F8'B4 B7' F9'B5 B8' B6 I9' I7 W9' I8 W7 I9 W8 W9",
      "F0 F1 F2 F0' F3 F1' F4 F2' I0' W0' F3' F5B1' F4'B0 F6B2' F5'B1 F7B3' F6'B2 F8B4' F7'B3 F9B5' "
      "F8'B4 B6' F9'B5 B7' B6 B8' I7 I9' I8 W7 I9 W9' W8 W9",
      "F0 F0' F1 F1' F2 F2' F3 F3' F4 B0' F4'B0 F5B1' F5'B1 F6B2' F6'B2 F7B3' F7'B3 F8B4' F8'B4 "
      "F9B5' F9'B5 B6' B6 B7' B7 I8' I8 I9' I9 W8' W8 W9' W9",
      "F0' F0 F1' F1 F2' F2 F3' F3 F4' B0 F4B0' F5'B1 F5B1' F6'B2 F6B2' F7'B3 F7B3' F8'B4 F8B4' "
      "F9'B5 F9B5' B6 B6' B7 B7' I8 I8' I9 I9' W8 W8' W9 W9'",
      "F0' F1' F2' F0 F3' F1 F4' F2 I0 W0 F3 F5'B1 F4B0' F6'B2 F5B1' F7'B3 F6B2' F8'B4 F7B3' F9'B5 "
      "F8B4' B6 F9B5' B7 B6' B8 I7' I9 I8' W7' I9' W9 W8' W9'",
      "F0' F1' F2' F3' F4' F0 F5' F1 I0 W0 F2 I1 W1 F3 F6'B2 F4B0' F7'B3 F5B1' F8'B4 F6B2' F9'B5 "
      "F7B3' B6 F8B4' B7 F9B5' B8 B6' I9 I7' W9 I8' W7' I9' W8' W9'",
      "F0' F1' F2' F3' F4' F5' F6' F0 I0 W0 F1 I1 W1 F2 I2 W2 F3 F7'B3 F4B0' F8'B4 F5B1' F9'B5 F6B2' "
      "B6 F7B3' B7 F8B4' B8 F9B5' B9 I6' W6' I7' W7' I8' W8' I9' W9'",
  };
  const PipelineSchedule s = make(ScheduleKind::kDualPipe, 8, 20);
  REQUIRE(s.ranks == 8);
  CHECK(s.micro_batches_per_direction == 10);
  const auto got = orders(s);
  for (int r = 0; r < 8; ++r) {
    INFO("rank " << r);
    CHECK(got[r] == golden[r]);
  }
  CHECK(schedule_defect(s).empty());
}

TEST_CASE("schedule: 1F1B, ZB1P and interleaved orders on small sizes") {
  // 1F1B, 3 stages, 4 micro-batches: rank r warms up with pp-r-1 forwards.
  CHECK(orders(make(ScheduleKind::k1f1b, 3, 4)) ==
        std::vector<std::string>{"F0 F1 F2 B0 F3 B1 B2 B3", "F0 F1 B0 F2 B1 F3 B2 B3", "F0 B0 F1 B1 F2 B2 F3 B3"});
  // ZB-H1 (Qi et al. fig. 3): the last rank defers its W by pp-1 micro-batches.
  CHECK(orders(make(ScheduleKind::kZb1p, 3, 4)) ==
        std::vector<std::string>{"F0 F1 F2 I0 W0 F3 I1 W1 I2 W2 I3 W3", "F0 F1 I0 F2 I1 W0 F3 I2 W1 I3 W2 W3",
                                 "F0 I0 F1 I1 F2 I2 W0 F3 I3 W1 W2 W3"});
  // Megatron interleaved, 2 ranks x 2 chunks, 4 micro-batches: groups of pp micro-batches per
  // chunk; rank 0 warms up with (pp-1)*2 + (v-1)*pp = 4 forwards. Letters: a = chunk 0, b = 1.
  CHECK(orders(make(ScheduleKind::kInterleaved1f1b, 2, 4, 2)) ==
        std::vector<std::string>{"F0a F1a F0b F1b F2a B0b F3a B1b F2b B0a F3b B1a B2b B3b B2a B3a",
                                 "F0a F1a F0b B0b F1b B1b F2a B0a F3a B1a F2b B2b F3b B3b B2a B3a"});
  // DualPipeV (dualpipev.py), 4 stages on 2 ranks, 4 micro-batches; rank 0 holds stages 0 and 3
  // (3 primed: on the way back up), rank 1 stages 1 and 2', the V's tip.
  CHECK(orders(make(ScheduleKind::kDualPipeV, 4, 4)) ==
        std::vector<std::string>{"F0 F1 F2 F0' I0' W0' F1' F3B1' F2'B0 B2' F3'B1 B3' I2 W2 I3 W3",
                                 "F0 F0' F1 F1' F2 B0' F2'B0 F3B1' F3'B1 B2' B2 I3' I3 W3' W3"});
}

// DualPipeV is DualPipe "cut in half" (Sea AI Lab's procedure, credited in the DualPipe README):
// the first pp/2 ranks of DualPipe with 2m micro-batches run exactly DualPipeV's order for m,
// the reverse copy's stage pp-1-r standing for the V's way back up.
TEST_CASE("schedule: DualPipeV is the first half of DualPipe with twice the micro-batches") {
  for (int pp = 2; pp <= 16; pp += 2)
    for (int m : {pp, pp + 2, 2 * pp + 4}) {
      INFO("pp " << pp << " m " << m);
      const auto v = orders(make(ScheduleKind::kDualPipeV, pp, m));
      const auto dual = orders(make(ScheduleKind::kDualPipe, pp, 2 * m));
      REQUIRE(v.size() == static_cast<size_t>(pp / 2));
      for (int r = 0; r < pp / 2; ++r) CHECK(v[r] == dual[r]);
    }
}

TEST_CASE("schedule: impossible sizes are reported, not generated") {
  const auto problem = [](ScheduleKind k, int pp, int m, int v = 1) { return schedule_problem({k, pp, m, v}); };
  CHECK(problem(ScheduleKind::k1f1b, 4, 1).empty());
  CHECK(problem(ScheduleKind::kDualPipe, 8, 20).empty());
  CHECK(problem(ScheduleKind::kDualPipe, 7, 20) == "DualPipe needs an even number of stages, not 7");
  CHECK(problem(ScheduleKind::kDualPipe, 8, 21).find("even number of micro-batches") != std::string::npos);
  CHECK(problem(ScheduleKind::kDualPipe, 8, 14).find("at least twice as many micro-batches as stages") != std::string::npos);
  CHECK(problem(ScheduleKind::kDualPipeV, 8, 8).empty());
  CHECK(problem(ScheduleKind::kDualPipeV, 8, 7).find("at least as many micro-batches as stages") != std::string::npos);
  CHECK(problem(ScheduleKind::kDualPipeV, 5, 10).find("even number of stages") != std::string::npos);
  CHECK(problem(ScheduleKind::kInterleaved1f1b, 4, 6, 2).find("multiple of the stages") != std::string::npos);
  CHECK(problem(ScheduleKind::kInterleaved1f1b, 4, 8, 1).find("2 to 26 virtual stages") != std::string::npos);
  CHECK(problem(ScheduleKind::k1f1b, 4, 8, 2).find("interleaved schedule only") != std::string::npos);
  CHECK(problem(ScheduleKind::kZb1p, 4, 3).find("at least as many micro-batches as stages") != std::string::npos);
  CHECK(problem(ScheduleKind::k1f1b, 0, 8).find("stages must be 1 to") != std::string::npos);
  CHECK(problem(ScheduleKind::k1f1b, 4, 0).find("micro-batches must be 1 to") != std::string::npos);
  CHECK_THROWS_AS(make_schedule({ScheduleKind::kDualPipe, 6, 10, 1}), std::invalid_argument);
  CHECK(schedule_kind_from_name("DualPipeV") == ScheduleKind::kDualPipeV);
  CHECK(schedule_kind_from_name("zb-h1") == ScheduleKind::kZb1p);
  CHECK(!schedule_kind_from_name("gpipe"));
}

// A random valid size for each kind; fixed seed, so the same sizes every run.
ScheduleParams random_params(std::mt19937& rng, ScheduleKind k) {
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  switch (k) {
    case ScheduleKind::k1f1b: return {k, pick(1, 24), pick(1, 40), 1};
    case ScheduleKind::kInterleaved1f1b: {
      const int pp = pick(1, 12);
      return {k, pp, pp * pick(1, 4), pick(2, 4)};
    }
    case ScheduleKind::kZb1p: {
      const int pp = pick(1, 24);
      return {k, pp, pp + pick(0, 30), 1};
    }
    case ScheduleKind::kDualPipe: {
      const int pp = 2 * pick(1, 12);
      return {k, pp, 2 * pp + 2 * pick(0, 20), 1};
    }
    case ScheduleKind::kDualPipeV: {
      const int pp = 2 * pick(1, 12);
      return {k, pp, pp + pick(0, 40), 1};
    }
  }
  return {};
}

TEST_CASE("schedule: PROPERTY every schedule is valid over randomised sizes") {
  std::mt19937 rng(20250611);
  const ChunkTimes times{Time::ps(3), Time::ps(5), Time::ps(2), Time::ps(7)};
  for (ScheduleKind k : {ScheduleKind::k1f1b, ScheduleKind::kInterleaved1f1b, ScheduleKind::kZb1p,
                         ScheduleKind::kDualPipe, ScheduleKind::kDualPipeV}) {
    for (int trial = 0; trial < 40; ++trial) {
      const ScheduleParams p = random_params(rng, k);
      INFO(schedule_kind_name(k) << " stages " << p.stages << " micro-batches " << p.micro_batches << " v "
                                 << p.virtual_stages);
      REQUIRE(schedule_problem(p).empty());
      const PipelineSchedule s = make_schedule(p);
      // Every chunk's F, input gradient and W exactly once, on its rank; no deadlock in order.
      REQUIRE(schedule_defect(s) == "");
      // On the engine: nothing stuck, and on every stage each micro-batch's forward ends before
      // its backward (or the backward half of a pair) starts, its input backward before its W.
      const ScheduleRun run = simulate_uniform(s, times);
      REQUIRE(run.stuck_tasks == 0);
      std::map<ChunkRef, Time> fwd_end, bwd_end;
      for (int r = 0; r < s.ranks; ++r)
        for (size_t i = 0; i < s.per_rank[r].size(); ++i) {
          const ChunkTask& t = s.per_rank[r][i];
          if (t.kind == ChunkTask::kForward || t.kind == ChunkTask::kForwardBackward) fwd_end[t.chunk] = run.timing[r][i].end;
          if (t.kind == ChunkTask::kBackward || t.kind == ChunkTask::kBackwardInput) bwd_end[t.chunk] = run.timing[r][i].end;
          if (t.kind == ChunkTask::kForwardBackward) bwd_end[t.bwd] = run.timing[r][i].end;
        }
      for (int r = 0; r < s.ranks; ++r)
        for (size_t i = 0; i < s.per_rank[r].size(); ++i) {
          const ChunkTask& t = s.per_rank[r][i];
          const Time start = run.timing[r][i].start;
          if (t.kind == ChunkTask::kBackward || t.kind == ChunkTask::kBackwardInput) CHECK(fwd_end.at(t.chunk) <= start);
          if (t.kind == ChunkTask::kForwardBackward) CHECK(fwd_end.at(t.bwd) <= start);
          if (t.kind == ChunkTask::kBackwardWeight) CHECK(bwd_end.at(t.chunk) <= start);
        }
      const size_t chunks = static_cast<size_t>(s.model_stages) * s.micro_batches_per_direction * s.directions;
      CHECK(fwd_end.size() == chunks);
      CHECK(bwd_end.size() == chunks);
    }
  }
}

TEST_CASE("schedule: a defective order is caught") {
  PipelineSchedule s = make(ScheduleKind::k1f1b, 2, 2);
  std::swap(s.per_rank[1][0], s.per_rank[1][1]);  // B0 before F0 on the last rank
  CHECK(schedule_defect(s) == "deadlock: rank 0 waits at B0 (task 2) for the input gradient of micro-batch 0 on stage 1");
  s = make(ScheduleKind::kZb1p, 2, 2);
  s.per_rank[0].pop_back();  // a W never runs
  CHECK(schedule_defect(s) == "the weight gradient of micro-batch 1 on stage 0 never runs");
}

// REFERENCE.md's table: activations per device PP for 1F1B and ZB1P (rank 0 holds the most),
// PP+1 for DualPipe and DualPipeV (every rank); DualPipe(V) parameters 2x (two stages a rank).
TEST_CASE("schedule: activations in flight and stages held match the table and the memory model") {
  for (int pp = 2; pp <= 32; pp += 2)
    for (int mult : {1, 2, 3}) {
      INFO("pp " << pp << " x" << mult);
      ParallelLayout layout;
      layout.pp = pp;
      for (ScheduleKind k : {ScheduleKind::k1f1b, ScheduleKind::kZb1p}) {
        const PipelineSchedule s = make(k, pp, pp * mult);
        CHECK(activation_peak(s, 0).total == pp);
        for (int r = 0; r < pp; ++r) {
          const ActivationPeak a = activation_peak(s, r);
          const auto held = held_stages(layout, ScheduleMemory::k1f1b, r);
          REQUIRE(a.per_stage.size() == 1);
          REQUIRE(held.size() == 1);
          CHECK(a.per_stage[0].first == StageRef{held[0].stage, 0});
          CHECK(a.per_stage[0].second == held[0].chunks);  // pp - r
          CHECK(a.total == pp - r);
        }
      }
      const PipelineSchedule dual = make(ScheduleKind::kDualPipe, pp, 2 * pp * mult);
      for (int r = 0; r < pp; ++r) {
        const ActivationPeak a = activation_peak(dual, r);
        CHECK(a.total == pp + 1);
        // Two parameter copies: stage r of the forward-direction model, pp-1-r of the reverse one,
        // each with memory_model's held_stages() count (written from dualpipe.py independently).
        const auto held = held_stages(layout, ScheduleMemory::kDualPipe, r);
        REQUIRE(a.per_stage.size() == 2);
        REQUIRE(held.size() == 2);
        CHECK(a.per_stage[0].first == StageRef{held[0].stage, 0});
        CHECK(a.per_stage[1].first == StageRef{held[1].stage, 1});
        CHECK(a.per_stage[0].second == held[0].chunks);
        CHECK(a.per_stage[1].second == held[1].chunks);
      }
      const PipelineSchedule v = make(ScheduleKind::kDualPipeV, pp, pp * mult);
      REQUIRE(v.ranks == pp / 2);
      for (int r = 0; r < pp / 2; ++r) {
        CHECK(activation_peak(v, r).total == pp + 1);
        CHECK(v.rank_stages(r) == std::vector<StageRef>{{r, 0}, {pp - 1 - r, 0}});
      }
    }
  // Interleaved keeps more in flight on rank 0: (pp-1)*2 + (v-1)*pp warm-up forwards, plus one.
  const PipelineSchedule il = make(ScheduleKind::kInterleaved1f1b, 4, 8, 2);
  CHECK(activation_peak(il, 0).total == 3 * 2 + 4 + 1);
  CHECK(il.rank_stages(1) == std::vector<StageRef>{{1, 0}, {5, 0}});
}

}  // namespace CS_TEST_FILE
