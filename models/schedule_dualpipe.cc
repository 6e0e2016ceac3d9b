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
// The sends and receives around the chunks (which dualpipe.py batches and places with care) do
// not change the order of computation; the dependencies they carry are task_needs()'.
#include <algorithm>
#include <array>
#include <cassert>
#include <deque>

#include "models/schedule_generators.h"

namespace cs::models::detail {
namespace {

class RankSteps {
 public:
  RankSteps(std::vector<ChunkTask>& out, std::array<StageRef, 2> phases) : out_(out), phases_(phases) {}

  void f(int phase) { out_.push_back({ChunkTask::kForward, next_forward(phase), {}}); }
  void b(int phase, bool zero_bubble = false) {
    const ChunkRef c = next_backward(phase);
    if (!zero_bubble) {
      out_.push_back({ChunkTask::kBackward, c, {}});
      return;
    }
    out_.push_back({ChunkTask::kBackwardInput, c, {}});
    weight_queue_.push_back(c);
  }
  void w() {
    assert(!weight_queue_.empty());
    out_.push_back({ChunkTask::kBackwardWeight, weight_queue_.front(), {}});
    weight_queue_.pop_front();
  }
  void fb(int forward_phase, int backward_phase) {
    const ChunkRef fwd = next_forward(forward_phase);
    out_.push_back({ChunkTask::kForwardBackward, fwd, next_backward(backward_phase)});
  }
  bool weights_done() const { return weight_queue_.empty(); }

 private:
  // Chunk ids count up per phase (current_f_chunk_id / current_b_chunk_id in the sources).
  ChunkRef next_forward(int phase) { return {forward_id_[phase]++, phases_[phase].stage, phases_[phase].direction}; }
  ChunkRef next_backward(int phase) { return {backward_id_[phase]++, phases_[phase].stage, phases_[phase].direction}; }

  std::vector<ChunkTask>& out_;
  std::array<StageRef, 2> phases_;
  std::array<int, 2> forward_id_{0, 0}, backward_id_{0, 0};
  std::deque<ChunkRef> weight_queue_;
};

// The eight steps shared by both sources; n, h, step_4 and `middle` as in the file comment.
void eight_steps(RankSteps& s, int n, int h, int step_4, bool middle) {
  for (int i = 0; i < (n - h - 1) * 2; ++i) s.f(0);
  for (int i = 0; i < h + 1; ++i) s.f(0), s.f(1);
  for (int i = 0; i < n - h - 1; ++i) s.b(1, true), s.w(), s.f(1);
  for (int i = 0; i < step_4; ++i) {
    if (i == 0 && middle) s.f(0), s.b(1);
    else s.fb(0, 1);
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
}

}  // namespace

RankOrders dualpipe(int pp, int m) {
  RankOrders out(pp);
  const int n = pp / 2, half_chunks = m / 2;
  for (int r = 0; r < pp; ++r) {
    const int h = std::min(r, pp - 1 - r);
    const bool second_half = r >= n;
    const StageRef forward_copy{r, 0}, reverse_copy{pp - 1 - r, 1};
    RankSteps s(out[r], second_half ? std::array{reverse_copy, forward_copy} : std::array{forward_copy, reverse_copy});
    eight_steps(s, n, h, half_chunks - pp + h + 1, r == n - 1 || r == n);
  }
  return out;
}

RankOrders dualpipe_v(int pp, int m) {
  const int ranks = pp / 2;
  RankOrders out(ranks);
  for (int r = 0; r < ranks; ++r) {
    RankSteps s(out[r], {StageRef{r, 0}, StageRef{pp - 1 - r, 0}});
    eight_steps(s, ranks, r, m - pp + r + 1, r == ranks - 1);
  }
  return out;
}

}  // namespace cs::models::detail
