// DualPipe and DualPipeV, step for step as deepseek-ai/DualPipe's DualPipe.step (dualpipe.py) and
// DualPipeV.step (dualpipev.py) order their chunks. Both run the same eight steps on each rank;
// they differ in what a rank's two "phases" are and in the step counts:
//
//   DualPipe, pp ranks, m/2 micro-batches per direction, h = min(r, pp-1-r), n = pp/2:
//     phase 0 = this rank's stage of the forward-direction copy on the first half of the ranks,
//     of the reverse copy on the second half (phase ^= is_in_second_half); phase 1 the other.
//     Rank r holds stage r of direction 0 and stage pp-1-r of direction 1.
//   DualPipeV, pp/2 ranks, m micro-batches, one model of pp stages, h = r, n = pp/2:
//     phase 0 = stage r (down the V), phase 1 = stage pp-1-r (back up).
//
//   1  F0 x 2(n-h-1)                     5  (B1, F1&B0) x (n-h-1)
//   2  (F0, F1) x (h+1)                  6  (B1, B0) x (h+1), zero-bubble from the middle on
//   3  (B1 input, W, F1) x (n-h-1)       7  (W, B0 input) x (n-h-1)
//   4  (F0&B1, F1&B0) x step_4           8  W x (h+1)
// step_4 = m/2 - pp + h + 1 (DualPipe), m - pp + h + 1 (DualPipeV). In step 4's first round the
// middle ranks (DualPipe: pp/2-1 and pp/2; DualPipeV: the last rank) run F0 and a full B1 apart
// instead of overlapped ("We don't overlap these two chunks to further reduce bubble size").
// A backward with enable_zb computes input gradients only and queues its weight gradient; each
// _weight_chunk pops the oldest (WeightGradStore is FIFO).
//
// Around the chunks, dualpipe.py queues sends and receives and commits them in batches
// (_commit_and_wait_comm: dist.batch_isend_irecv, then every request waited for) at the start of
// each chunk and once after the last. With `commits`, the generator records those batches call
// for call: which receives a chunk posts early (recv=False further on), which sends wait past
// the next chunk (the middle ranks' first step-4 round). The order of computation is the same
// either way. DualPipeV's step makes the same calls (read in pithtrain's DualPipeV, whose step
// and point-to-point methods are "closely adapted" from dualpipev.py; its step 2 sends each F0
// after the F1 on every rank, which is dualpipe.py's order here because the one rank that
// differs, the V's turn, passes F0 to itself), and where the V turns the rank passes to itself.
#include <algorithm>
#include <array>
#include <cassert>
#include <deque>
#include <functional>
#include <utility>

#include "models/schedule_generators.h"

namespace cs::models::detail {
namespace {

// One rank's calls, named as in the sources: f is _forward_chunk, b _backward_chunk, fb
// _forward_backward_chunk, w _weight_chunk; recv_forward, send_forward, recv_backward,
// send_backward and commit queue and post point-to-point operations (recorded only into
// `commits`, when given).
class RankSteps {
 public:
  // `stages`: the stages of one direction (the first receives no activations, the last sends none);
  // `rank_of`: which rank holds a stage of a direction (a neighbour on this rank needs no send).
  RankSteps(std::vector<ChunkTask>& out, std::array<StageRef, 2> phases, int stages, int rank,
            std::function<int(int stage, int direction)> rank_of, std::vector<CommitBatch>* commits)
      : out_(out), phases_(phases), stages_(stages), rank_(rank), rank_of_(std::move(rank_of)), commits_(commits) {}

  void f(int phase, bool recv = true, bool send = true) {
    if (recv) recv_forward(phase);
    commit();
    out_.push_back({ChunkTask::kForward, next_forward(phase), {}});
    if (send) send_forward(phase);
  }
  void b(int phase, bool zero_bubble = false, bool recv = true, bool send = true) {
    if (recv) recv_backward(phase);
    commit();
    const ChunkRef c = next_backward(phase);
    if (!zero_bubble) {
      out_.push_back({ChunkTask::kBackward, c, {}});
    } else {
      out_.push_back({ChunkTask::kBackwardInput, c, {}});
      weight_queue_.push_back(c);
    }
    if (send) send_backward(phase);
  }
  void w() {
    assert(!weight_queue_.empty());
    commit();
    out_.push_back({ChunkTask::kBackwardWeight, weight_queue_.front(), {}});
    weight_queue_.pop_front();
  }
  void fb(int forward_phase, int backward_phase, bool recv_forward_input = true) {
    if (recv_forward_input) recv_forward(forward_phase);
    recv_backward(backward_phase);
    commit();
    const ChunkRef fwd = next_forward(forward_phase);
    out_.push_back({ChunkTask::kForwardBackward, fwd, next_backward(backward_phase)});
    send_forward(forward_phase);
    send_backward(backward_phase);
  }
  bool weights_done() const { return weight_queue_.empty(); }

  // The first stage of a direction receives no activations, the last no gradients; the last
  // sends no activations on, the first no gradients back; and where the next stage is on this
  // rank (DualPipeV's turn), the pass stays here (the sources skip it before counting it).
  void recv_forward(int phase) {
    const StageRef& p = phases_[phase];
    if (p.stage > 0 && remote(p.stage - 1, p.direction))
      recv_.push_back({ChunkPass::kForward, {recv_forward_id_[phase]++, p.stage - 1, p.direction}});
  }
  void send_forward(int phase) {
    const StageRef& p = phases_[phase];
    if (p.stage + 1 < stages_ && remote(p.stage + 1, p.direction))
      send_.push_back({ChunkPass::kForward, {send_forward_id_[phase]++, p.stage, p.direction}});
  }
  void recv_backward(int phase) {
    const StageRef& p = phases_[phase];
    if (p.stage + 1 < stages_ && remote(p.stage + 1, p.direction))
      recv_.push_back({ChunkPass::kInputGrad, {recv_backward_id_[phase]++, p.stage + 1, p.direction}});
  }
  void send_backward(int phase) {
    const StageRef& p = phases_[phase];
    if (p.stage > 0 && remote(p.stage - 1, p.direction))
      send_.push_back({ChunkPass::kInputGrad, {send_backward_id_[phase]++, p.stage, p.direction}});
  }
  // Posts what was queued, before the next task (an empty queue posts nothing).
  void commit() {
    if (send_.empty() && recv_.empty()) return;
    if (commits_) commits_->push_back({static_cast<int>(out_.size()), std::move(send_), std::move(recv_)});
    send_.clear();
    recv_.clear();
  }

 private:
  // Chunk ids count up per phase (current_f_chunk_id / current_b_chunk_id in the sources).
  ChunkRef next_forward(int phase) { return {forward_id_[phase]++, phases_[phase].stage, phases_[phase].direction}; }
  ChunkRef next_backward(int phase) { return {backward_id_[phase]++, phases_[phase].stage, phases_[phase].direction}; }
  bool remote(int stage, int direction) const { return rank_of_(stage, direction) != rank_; }

  std::vector<ChunkTask>& out_;
  std::array<StageRef, 2> phases_;
  int stages_;
  int rank_;
  std::function<int(int, int)> rank_of_;
  std::vector<CommitBatch>* commits_;
  std::array<int, 2> forward_id_{0, 0}, backward_id_{0, 0};
  // current_{recv,send}_{f,b}_chunk_id in the sources.
  std::array<int, 2> recv_forward_id_{0, 0}, send_forward_id_{0, 0}, recv_backward_id_{0, 0}, send_backward_id_{0, 0};
  std::vector<PassRef> send_, recv_;
  std::deque<ChunkRef> weight_queue_;
};

// The eight steps shared by both sources; n, h, step_4 and `middle` as in the file comment.
void eight_steps(RankSteps& s, int n, int h, int step_4, bool middle) {
  for (int i = 0; i < (n - h - 1) * 2; ++i) s.f(0);
  // Step 2 receives each F0's input a chunk early, with the F1 before it.
  s.recv_forward(0);
  for (int i = 0; i < h + 1; ++i) {
    s.f(0, false, middle);
    s.recv_forward(0);
    s.f(1, true, !middle || i < h);
    if (!middle) s.send_forward(0);
  }
  for (int i = 0; i < n - h - 1; ++i) {
    s.b(1, true);
    s.recv_forward(1);
    s.w();
    s.f(1, false);
  }
  for (int i = 0; i < step_4; ++i) {
    if (i == 0 && middle) {
      // The middle ranks' F0 and full B1 run apart, their sends held back to go out together.
      s.f(0, false, false);
      s.send_forward(1);
      s.b(1, false, true, false);
      s.send_forward(0);
      s.send_backward(1);
    } else {
      s.fb(0, 1, i > 0);
    }
    s.fb(1, 0);
  }
  for (int i = 0; i < n - h - 1; ++i) s.b(1), s.fb(1, 0);
  // Step 6 turns zero-bubble on half way, before B1 when h is odd and between B1 and B0 when h
  // is even, so that h+1 of its 2(h+1) backwards leave their W for steps 7 and 8.
  const int step_6 = h + 1;
  bool zb = false;
  for (int i = 0; i < step_6; ++i) {
    if (i == step_6 / 2 && h % 2 == 1) zb = true;
    s.b(1, zb);
    if (i == step_6 / 2 && h % 2 == 0) zb = true;
    s.b(0, zb);
  }
  for (int i = 0; i < n - h - 1; ++i) s.w(), s.b(0, true);
  for (int i = 0; i < h + 1; ++i) s.w();
  assert(s.weights_done());
  s.commit();  // the sources' last commit: empty here, step 8's weight chunks committed everything
}

}  // namespace

RankOrders dualpipe(int pp, int m, std::vector<std::vector<CommitBatch>>* commits) {
  RankOrders out(pp);
  if (commits) commits->assign(pp, {});
  const int n = pp / 2, half_chunks = m / 2;
  for (int r = 0; r < pp; ++r) {
    const int h = std::min(r, pp - 1 - r);
    const bool second_half = r >= n;
    const StageRef forward_copy{r, 0}, reverse_copy{pp - 1 - r, 1};
    RankSteps s(
        out[r], second_half ? std::array{reverse_copy, forward_copy} : std::array{forward_copy, reverse_copy}, pp, r,
        [pp](int stage, int direction) { return direction == 0 ? stage : pp - 1 - stage; },
        commits ? &(*commits)[r] : nullptr);
    eight_steps(s, n, h, half_chunks - pp + h + 1, r == n - 1 || r == n);
  }
  return out;
}

RankOrders dualpipe_v(int pp, int m, std::vector<std::vector<CommitBatch>>* commits) {
  const int ranks = pp / 2;
  RankOrders out(ranks);
  if (commits) commits->assign(ranks, {});
  for (int r = 0; r < ranks; ++r) {
    RankSteps s(
        out[r], {StageRef{r, 0}, StageRef{pp - 1 - r, 0}}, pp, r,
        [pp](int stage, int) { return stage < pp / 2 ? stage : pp - 1 - stage; }, commits ? &(*commits)[r] : nullptr);
    eight_steps(s, ranks, r, m - pp + r + 1, r == ranks - 1);
  }
  return out;
}

}  // namespace cs::models::detail
