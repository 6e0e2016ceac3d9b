// Point-to-point batches (PipelineSchedule::commits): where dualpipe.py (DualPipe, DualPipeV) and
// Megatron (1F1B, interleaved 1F1B) post each send and receive, against transcriptions of their programs; every
// boundary pass posted once on each side, no receive after its reader and no send before its
// maker; and the batches, run as rendezvous (a transfer moves once both sides reached their batch,
// a rank's batches at one point one after the other), finishing.
#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "models/pipeline_rendezvous.h"
#include "models/pipeline_schedule.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

// "sA3'": send the activations of micro-batch 3 of the reverse direction (DualPipe) or of a stage
// on the way back up (DualPipeV), as task_token primes them; "rG0": receive the input gradient of
// micro-batch 0 of the forward direction (on the way down).
std::string pass_token(const PipelineSchedule& s, char side, const PassRef& p) {
  const bool second =
      s.params.kind == ScheduleKind::kDualPipeV ? p.chunk.stage >= s.params.stages / 2 : p.chunk.direction == 1;
  return std::string{side} + (p.pass == ChunkPass::kForward ? "A" : "G") + std::to_string(p.chunk.micro_batch) +
         (second ? "'" : "");
}

// Each rank's tasks with its batches in brackets before the task they precede; `staged` names
// stages instead ("F3.s2": forward of micro-batch 3 through model stage 2; "sA3.s2": send its
// activations; "rG0.s1": receive the input gradient stage 1 made).
std::vector<std::string> program(const PipelineSchedule& s, bool staged = false) {
  const auto pass = [&](char side, const PassRef& p) {
    if (!staged) return pass_token(s, side, p);
    return std::string{side} + (p.pass == ChunkPass::kForward ? "A" : "G") + std::to_string(p.chunk.micro_batch) +
           ".s" + std::to_string(p.chunk.stage);
  };
  const auto task = [&](const ChunkTask& t) {
    if (!staged) return task_token(s, t);
    return (t.kind == ChunkTask::kForward ? "F" : "B") + std::to_string(t.chunk.micro_batch) + ".s" +
           std::to_string(t.chunk.stage);
  };
  std::vector<std::string> out;
  for (int r = 0; r < s.ranks; ++r) {
    std::string row;
    const auto add = [&](const std::string& t) { row += (row.empty() ? "" : " ") + t; };
    size_t next_batch = 0;
    for (int k = 0; k <= static_cast<int>(s.per_rank[r].size()); ++k) {
      for (; next_batch < s.commits[r].size() && s.commits[r][next_batch].before_task == k; ++next_batch) {
        const CommitBatch& batch = s.commits[r][next_batch];
        std::string b;
        for (const PassRef& p : batch.sends) b += (b.empty() ? "" : " ") + pass('s', p);
        for (const PassRef& p : batch.recvs) b += (b.empty() ? "" : " ") + pass('r', p);
        add("[" + b + "]");
      }
      if (k < static_cast<int>(s.per_rank[r].size())) add(task(s.per_rank[r][k]));
    }
    CHECK(next_batch == s.commits[r].size());  // every batch in task order
    out.push_back(row);
  }
  return out;
}

}  // namespace

// Golden: DualPipe.step() of deepseek-ai/DualPipe dualpipe/dualpipe.py (commit bb214e8) for
// num_ranks=4, num_chunks=8, its _recv_*/_send_* calls and each _commit_and_wait_comm recorded by
// a mock of the class stepped outside this code base (a separate Python transcription). Rank 0's
// step 1 sends each F0 at the next chunk's commit; step 3 receives F1's input with the W before
// it; the middle ranks (1 and 2) hold their first step-4 sends until both chunks ran.
TEST_CASE("schedule: GOLDEN DualPipe 4 ranks 8 micro-batches, dualpipe.py's point-to-point batches") {
  const std::vector<std::string> golden = {
      "F0 [sA0] F1 [sA1] F2 [rA0'] F0' [sA2] I0' [sG0' rA1'] W0' F1' F3B1' [sA3 sG1' rA2' rG0] F2'B0 B2' [sG2' rA3' "
      "rG1] F3'B1 B3' [sG3' rG2] I2 W2 [rG3] I3 W3",
      "[rA0] F0 [sA0 rA1 rA0'] F0' [sA0'] F1 [sA1 rA2 rA1'] F1' F2 [sA1' rG0'] B0' [sA2 sG0' rA2' rG0] F2'B0 [sA2' sG0 "
      "rA3 rG1'] F3B1' [sA3 sG1' rA3' rG1] F3'B1 [sA3' sG1 rG2'] B2' [sG2' rG2] B2 [sG2 rG3'] I3' [sG3' rG3] I3 [sG3] "
      "W3' W3",
      "[rA0'] F0' [sA0' rA1' rA0] F0 [sA0] F1' [sA1' rA2' rA1] F1 F2' [sA1 rG0] B0 [sA2' sG0 rA2 rG0'] F2B0' [sA2 sG0' "
      "rA3' rG1] F3'B1 [sA3' sG1 rA3 rG1'] F3B1' [sA3 sG1' rG2] B2 [sG2 rG2'] B2' [sG2' rG3] I3 [sG3 rG3'] I3' [sG3'] "
      "W3 W3'",
      "F0' [sA0'] F1' [sA1'] F2' [rA0] F0 [sA2'] I0 [sG0 rA1] W0 F1 F3'B1 [sA3' sG1 rA2 rG0'] F2B0' B2 [sG2 rA3 rG1'] "
      "F3B1' B3 [sG3 rG2'] I2' W2' [rG3'] I3' W3'",
  };
  const PipelineSchedule s = make_schedule({ScheduleKind::kDualPipe, 4, 8});
  REQUIRE(s.commits.size() == 4);
  const auto got = program(s);
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    CHECK(got[r] == golden[r]);
  }
}

// Golden: DualPipeV 4 stages on 2 ranks, 4 micro-batches, from a mock of pithtrain's DualPipeV.step
// (pithtrain/dualpipe/dualpipev.py, whose step and point-to-point methods are "closely adapted"
// from deepseek-ai/DualPipe's dualpipev.py), stepped the same way. Rank 1 holds the V's turn
// (stages 1 and 2): what passes between those two stays on it, with no send.
TEST_CASE("schedule: GOLDEN DualPipeV 2 ranks 4 micro-batches, the point-to-point batches") {
  const std::vector<std::string> golden = {
      "F0 [sA0] F1 [sA1] F2 [rA0'] F0' [sA2] I0' [sG0' rA1'] W0' F1' F3B1' [sA3 sG1' rA2' rG0] F2'B0 B2' [sG2' rA3' "
      "rG1] F3'B1 B3' [sG3' rG2] I2 W2 [rG3] I3 W3",
      "[rA0] F0 [rA1] F0' [sA0'] F1 [rA2] F1' F2 [sA1' rG0'] B0' F2'B0 [sA2' sG0 rA3 rG1'] F3B1' F3'B1 [sA3' sG1 rG2'] "
      "B2' B2 [sG2 rG3'] I3' I3 [sG3] W3' W3",
  };
  const auto got = program(make_schedule({ScheduleKind::kDualPipeV, 4, 4}));
  REQUIRE(got.size() == 2);
  CHECK(got[0] == golden[0]);
  CHECK(got[1] == golden[1]);
}

// Golden: 1F1B on 3 ranks, 4 micro-batches, from a mock of the point-to-point calls of Megatron-LM's
// forward_backward_pipelining_without_interleaving, each call one batch. Rank 1 posts two batches
// between F0 and F1 (send_forward, then recv_forward); ranks 1 and 2 post one after their last
// backward (send_backward), which the optimizer step waits for.
TEST_CASE("schedule: GOLDEN 1F1B 3 ranks 4 micro-batches, Megatron's point-to-point calls") {
  const std::vector<std::string> golden = {
      "F0 [sA0] F1 [sA1] F2 [sA2 rG0] B0 F3 [sA3 rG1] B1 [rG2] B2 [rG3] B3",
      "[rA0] F0 [sA0] [rA1] F1 [sA1 rG0] B0 [sG0 rA2] F2 [sA2 rG1] B1 [sG1 rA3] F3 [sA3 rG2] B2 [sG2] [rG3] B3 [sG3]",
      "[rA0] F0 B0 [sG0 rA1] F1 B1 [sG1 rA2] F2 B2 [sG2 rA3] F3 B3 [sG3]",
  };
  CHECK(program(make_schedule({ScheduleKind::k1f1b, 3, 4})) == golden);
}

// Golden: Megatron-Core's forward_backward_pipelining_with_interleaving (megatron/core/
// pipeline_parallel/schedules.py, before microbatch_group_size_per_vp_stage; batch_p2p_comm, no
// overlap_p2p_comm) for pp 3, 6 micro-batches, 2 model chunks: its p2p calls with their
// recv_prev/recv_next flags, recorded by a mock of the loop (virtual pipeline rank and all)
// stepped outside this code base, receives matched to the peer's sends in order; the mock and the
// generator also agree on 105 sizes (pp 2 to 16, m up to 8 pp, v 2 to 4). Rank 2's last virtual
// stage (s5) sends no activations, rank 0's first (s0) no gradients; stage 2 to 3 wraps from
// rank 2 to rank 0.
TEST_CASE("schedule: GOLDEN interleaved 1F1B 3 ranks 6 micro-batches 2 chunks, Megatron's point-to-point calls") {
  const std::vector<std::string> golden = {
      "F0.s0 [sA0.s0] F1.s0 [sA1.s0] F2.s0 [sA2.s0 rA0.s2] F0.s3 [sA0.s3 rA1.s2] F1.s3 [sA1.s3 rA2.s2] "
      "F2.s3 [sA2.s3] F3.s0 [sA3.s0 rG0.s4] F4.s0 B0.s3 [sA4.s0 sG0.s3 rG1.s4] F5.s0 B1.s3 [sA5.s0 sG1.s3 "
      "rA3.s2 rG2.s4] F3.s3 B2.s3 [sA3.s3 sG2.s3 rA4.s2 rG0.s1] F4.s3 B0.s0 [sA4.s3 rA5.s2 rG1.s1] F5.s3 "
      "B1.s0 [sA5.s3 rG2.s1] B2.s0 [rG3.s4] B3.s3 [sG3.s3 rG4.s4] B4.s3 [sG4.s3 rG5.s4] B5.s3 [sG5.s3 "
      "rG3.s1] B3.s0 [rG4.s1] B4.s0 [rG5.s1] B5.s0",
      "[rA0.s0] F0.s1 [sA0.s1 rA1.s0] F1.s1 [sA1.s1 rA2.s0] F2.s1 [sA2.s1 rA0.s3] F0.s4 [sA0.s4 rA1.s3] "
      "F1.s4 [sA1.s4 rA2.s3 rG0.s5] F2.s4 B0.s4 [sA2.s4 sG0.s4 rA3.s0 rG1.s5] F3.s1 B1.s4 [sA3.s1 sG1.s4 "
      "rA4.s0 rG2.s5] F4.s1 B2.s4 [sA4.s1 sG2.s4 rA5.s0 rG0.s2] F5.s1 B0.s1 [sA5.s1 sG0.s1 rA3.s3 rG1.s2] "
      "F3.s4 B1.s1 [sA3.s4 sG1.s1 rA4.s3 rG2.s2] F4.s4 B2.s1 [sA4.s4 sG2.s1 rA5.s3 rG3.s5] F5.s4 B3.s4 "
      "[sA5.s4 sG3.s4 rG4.s5] B4.s4 [sG4.s4 rG5.s5] B5.s4 [sG5.s4 rG3.s2] B3.s1 [sG3.s1 rG4.s2] B4.s1 "
      "[sG4.s1 rG5.s2] B5.s1 [sG5.s1]",
      "[rA0.s1] F0.s2 [sA0.s2 rA1.s1] F1.s2 [sA1.s2 rA2.s1] F2.s2 [sA2.s2 rA0.s4] F0.s5 B0.s5 [sG0.s5 "
      "rA1.s4] F1.s5 B1.s5 [sG1.s5 rA2.s4] F2.s5 B2.s5 [sG2.s5 rA3.s1 rG0.s3] F3.s2 B0.s2 [sA3.s2 sG0.s2 "
      "rA4.s1 rG1.s3] F4.s2 B1.s2 [sA4.s2 sG1.s2 rA5.s1 rG2.s3] F5.s2 B2.s2 [sA5.s2 sG2.s2 rA3.s4] F3.s5 "
      "B3.s5 [sG3.s5 rA4.s4] F4.s5 B4.s5 [sG4.s5 rA5.s4] F5.s5 B5.s5 [sG5.s5 rG3.s3] B3.s2 [sG3.s2 rG4.s3] "
      "B4.s2 [sG4.s2 rG5.s3] B5.s2 [sG5.s2]",
  };
  CHECK(program(make_schedule({ScheduleKind::kInterleaved1f1b, 3, 6, 2}), true) == golden);
}

TEST_CASE("schedule: DualPipe, DualPipeV, 1F1B and interleaved 1F1B record point-to-point batches, ZB1P does not") {
  CHECK(make_schedule({ScheduleKind::kZb1p, 4, 8}).commits.empty());
  CHECK(make_schedule({ScheduleKind::kInterleaved1f1b, 2, 4, 2}).commits.size() == 2);
  CHECK(make_schedule({ScheduleKind::k1f1b, 4, 8}).commits.size() == 4);
}

TEST_CASE("schedule: batches post every boundary pass once on each side and run as rendezvous") {
  for (const auto& [kind, pp, m, v] :
       std::vector<std::tuple<ScheduleKind, int, int, int>>{{ScheduleKind::kDualPipe, 2, 4, 1},
                                                            {ScheduleKind::kDualPipe, 4, 8, 1},
                                                            {ScheduleKind::kDualPipe, 4, 14, 1},
                                                            {ScheduleKind::kDualPipe, 8, 16, 1},
                                                            {ScheduleKind::kDualPipe, 8, 20, 1},
                                                            {ScheduleKind::kDualPipe, 16, 32, 1},
                                                            {ScheduleKind::kDualPipe, 16, 120, 1},
                                                            {ScheduleKind::kDualPipeV, 4, 4, 1},
                                                            {ScheduleKind::kDualPipeV, 8, 10, 1},
                                                            {ScheduleKind::kDualPipeV, 16, 16, 1},
                                                            {ScheduleKind::kDualPipeV, 16, 60, 1},
                                                            {ScheduleKind::k1f1b, 1, 3, 1},
                                                            {ScheduleKind::k1f1b, 2, 1, 1},
                                                            {ScheduleKind::k1f1b, 4, 3, 1},
                                                            {ScheduleKind::k1f1b, 4, 8, 1},
                                                            {ScheduleKind::k1f1b, 16, 120, 1},
                                                            {ScheduleKind::kInterleaved1f1b, 2, 2, 2},
                                                            {ScheduleKind::kInterleaved1f1b, 2, 4, 2},
                                                            {ScheduleKind::kInterleaved1f1b, 3, 3, 3},
                                                            {ScheduleKind::kInterleaved1f1b, 4, 4, 2},
                                                            {ScheduleKind::kInterleaved1f1b, 4, 8, 2},
                                                            {ScheduleKind::kInterleaved1f1b, 4, 12, 3},
                                                            {ScheduleKind::kInterleaved1f1b, 8, 32, 4},
                                                            {ScheduleKind::kInterleaved1f1b, 16, 128, 2}}) {
    INFO(schedule_kind_name(kind) << ", pp " << pp << ", m " << m << ", v " << v);
    const PipelineSchedule s = make_schedule({kind, pp, m, v});
    std::map<PassRef, TaskRef> producer, consumer;  // consumer: the reader on another rank
    for (int r = 0; r < s.ranks; ++r)
      for (int k = 0; k < static_cast<int>(s.per_rank[r].size()); ++k)
        for (const PassRef& p : task_provides(s.per_rank[r][k])) producer[p] = {r, k};
    for (int r = 0; r < s.ranks; ++r)
      for (int k = 0; k < static_cast<int>(s.per_rank[r].size()); ++k)
        for (const PassRef& p : task_needs(s, s.per_rank[r][k]))
          if (producer.at(p).rank != r) CHECK(consumer.emplace(p, TaskRef{r, k}).second);
    // pass -> (rank, position in the rank's batches) of the batch that sends and that receives it
    std::map<PassRef, std::pair<int, size_t>> sent, received;
    for (int r = 0; r < s.ranks; ++r)
      for (size_t j = 0; j < s.commits[r].size(); ++j) {
        const CommitBatch& b = s.commits[r][j];
        CHECK((j == 0 || s.commits[r][j - 1].before_task <= b.before_task));
        CHECK(!(b.sends.empty() && b.recvs.empty()));
        for (const PassRef& p : b.sends) CHECK(sent.emplace(p, std::pair{r, j}).second);
        for (const PassRef& p : b.recvs) CHECK(received.emplace(p, std::pair{r, j}).second);
      }
    const auto at = [&](const std::pair<int, size_t>& b) { return s.commits[b.first][b.second].before_task; };
    for (const auto& [p, c] : consumer) {
      const TaskRef& made = producer.at(p);
      REQUIRE(sent.count(p) == 1);
      REQUIRE(received.count(p) == 1);
      CHECK(sent.at(p).first == made.rank);
      CHECK(at(sent.at(p)) > made.index);  // posted after the task that made it
      CHECK(received.at(p).first == c.rank);
      CHECK(at(received.at(p)) <= c.index);  // posted no later than the task that reads it
    }
    CHECK(sent.size() == consumer.size());
    CHECK(received.size() == consumer.size());
    // Rendezvous, run by the class the pipeline graph uses (no ops: the heads are empty): a rank
    // passes its next batch once it has run the tasks before it and, for each transfer, the other
    // side has reached (or passed) the batch that posts it; it runs a task once its inputs exist.
    PipelineRendezvous rv(s, true);
    REQUIRE(rv.active());
    if (pp == 1) CHECK(s.commits[0].empty());  // one stage posts nothing
    std::set<PassRef> made;
    const auto is_made = [&](const PassRef& p) { return made.count(p) > 0; };
    std::vector<size_t> tasks(s.ranks, 0);
    for (int r = 0; r < s.ranks; ++r) rv.record_heads(r, {});
    for (bool progress = true; progress;) {
      progress = false;
      for (int r = 0; r < s.ranks; ++r)
        while (true) {
          if (rv.pending_ready(r, is_made)) {
            rv.pass(r);
          } else if (!rv.pending(r) && tasks[r] < s.per_rank[r].size()) {
            const std::vector<PassRef> needs = task_needs(s, s.per_rank[r][tasks[r]]);
            if (!std::all_of(needs.begin(), needs.end(), is_made)) break;
            for (const PassRef& p : task_provides(s.per_rank[r][tasks[r]])) made.insert(p);
            ++tasks[r];
            rv.record_heads(r, {});
          } else {
            break;
          }
          progress = true;
        }
    }
    for (int r = 0; r < s.ranks; ++r) {
      INFO("rank " << r);
      CHECK(tasks[r] == s.per_rank[r].size());
      CHECK(rv.all_passed(r));
      CHECK(rv.pending(r) == nullptr);
      // DualPipe's ranks end on weight chunks, which commit what is queued and queue nothing; a
      // 1F1B rank that sends gradients back posts its last one after its last backward.
      const bool after_last =
          !s.commits[r].empty() && s.commits[r].back().before_task == static_cast<int>(s.per_rank[r].size());
      CHECK(after_last == ((kind == ScheduleKind::k1f1b || kind == ScheduleKind::kInterleaved1f1b) && r > 0));
    }
  }
}

TEST_CASE("schedule: a rendezvous refuses batches that post a pass on one side only or out of order") {
  const auto error_of = [](const PipelineSchedule& s) -> std::string {
    try {
      PipelineRendezvous rv(s, true);
    } catch (const std::logic_error& e) {
      return e.what();
    }
    return "";
  };
  const PipelineSchedule good = make_schedule({ScheduleKind::kDualPipe, 4, 8});
  CHECK(error_of(good).empty());
  PipelineSchedule one_sided = good;
  one_sided.commits[1].front().recvs.pop_back();
  CHECK(error_of(one_sided) == "a pipeline pass is posted by its sender or its receiver only");
  PipelineRendezvous inactive(one_sided, false);  // copy-engine sends: nothing is checked or kept
  CHECK_FALSE(inactive.active());
  CHECK(inactive.pending(1) == nullptr);
  CHECK(inactive.all_passed(1));
  PipelineSchedule swapped = good;
  std::swap(swapped.commits[0][0], swapped.commits[0][1]);
  CHECK(error_of(swapped) == "pipeline rank 0 commits a batch out of its tasks' order");
  PipelineSchedule late = good;
  late.commits[0].push_back({static_cast<int>(late.per_rank[0].size()) + 1, {}, {}});
  CHECK(error_of(late) == "pipeline rank 0 commits a batch out of its tasks' order");
}

}  // namespace CS_TEST_FILE
