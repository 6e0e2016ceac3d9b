// 1F1B and Megatron's interleaved 1F1B.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "models/schedule_generators.h"

namespace cs::models::detail {
namespace {

ChunkTask forward(int mb, int stage) { return {ChunkTask::kForward, {mb, stage, 0}, {}}; }
ChunkTask backward(int mb, int stage) { return {ChunkTask::kBackward, {mb, stage, 0}, {}}; }

}  // namespace

// Rank r runs pp-r-1 warm-up forwards (so that pp-r micro-batches are in flight once it starts
// alternating), then one forward and one full backward in turn, then drains the backwards.
// With `commits`, the point-to-point calls of Megatron-LM's
// forward_backward_pipelining_without_interleaving, each one batch (batch_isend_irecv, every
// request waited for) posted one after the other: the warm-up's recv_forward and send_forward
// around each forward, recv_forward before the steady phase, send_forward_recv_backward and
// send_backward_recv_forward (send_backward after the last) around each steady backward, and
// recv_backward and send_backward around each cool-down backward. The first stage receives no
// activations and sends no gradients, the last the reverse; a call with nothing to move posts
// nothing.
RankOrders one_f_one_b(int pp, int m, std::vector<std::vector<CommitBatch>>* commits) {
  RankOrders out(pp);
  if (commits) commits->assign(pp, {});
  for (int r = 0; r < pp; ++r) {
    auto& o = out[r];
    const auto call = [&](std::vector<PassRef> sends, std::vector<PassRef> recvs) {
      if (commits && !(sends.empty() && recvs.empty()))
        (*commits)[r].push_back({static_cast<int>(o.size()), std::move(sends), std::move(recvs)});
    };
    const bool first = r == 0, last = r == pp - 1;
    const auto pass = [](ChunkPass kind, int mb, int stage) { return std::vector{PassRef{kind, {mb, stage, 0}}}; };
    const auto recv_forward = [&](int mb) {
      return first ? std::vector<PassRef>{} : pass(ChunkPass::kForward, mb, r - 1);
    };
    const auto send_forward = [&](int mb) { return last ? std::vector<PassRef>{} : pass(ChunkPass::kForward, mb, r); };
    const auto recv_backward = [&](int mb) {
      return last ? std::vector<PassRef>{} : pass(ChunkPass::kInputGrad, mb, r + 1);
    };
    const auto send_backward = [&](int mb) {
      return first ? std::vector<PassRef>{} : pass(ChunkPass::kInputGrad, mb, r);
    };
    const int warmup = std::min(pp - r - 1, m), remaining = m - warmup;
    int f = 0, b = 0;
    for (int i = 0; i < warmup; ++i, ++f) {
      call({}, recv_forward(f));
      o.push_back(forward(f, r));
      call(send_forward(f), {});
    }
    if (remaining > 0) call({}, recv_forward(f));
    for (int i = 0; i < remaining; ++i, ++b) {
      o.push_back(forward(f, r));
      call(send_forward(f), recv_backward(b));
      ++f;
      o.push_back(backward(b, r));
      call(send_backward(b), i + 1 < remaining ? recv_forward(f) : std::vector<PassRef>{});
    }
    for (; b < m; ++b) {
      call({}, recv_backward(b));
      o.push_back(backward(b, r));
      call(send_backward(b), {});
    }
  }
  return out;
}

// Megatron-LM's forward_backward_pipelining_with_interleaving: rank r holds model chunks
// c = 0..v-1, chunk c being model stage c*pp + r. Micro-batches go through in groups of pp: the
// k-th forward a rank runs is micro-batch (k / (pp v)) pp + k mod pp on chunk (k / pp) mod v; the
// k-th backward the same micro-batch on chunk v-1-((k / pp) mod v). Warm-up: (pp-r-1)*2 +
// (v-1)*pp forwards, or all of them when m == pp, then 1F1B: the loop as Megatron-Core had it
// before microbatch_group_size_per_vp_stage (m a multiple of pp; newer releases make only the ranks
// whose warm-up covers every forward all-warm-up, and take any m).
// With `commits`, its point-to-point calls with batch_p2p_comm and no overlap_p2p_comm (the
// training script's --no-overlap-p2p-communication; its default overlaps, through other calls
// not recorded here), each one batch:
// recv_forward before the first forward; after each warm-up forward send_forward_recv_forward (the
// last one, unless every forward is warm-up, send_forward_backward_recv_forward_backward, which
// also receives the first gradient); after each steady forward-and-backward one
// send_forward_backward_recv_forward_backward; recv_backward before the cool-down when every
// forward was warm-up; after each cool-down backward send_backward_recv_backward. Its recv_prev and
// recv_next flags say which calls receive; stage boundaries wrap from rank pp-1 to rank 0. What a
// receive gets is the peer's next send to this rank (NCCL matches a pair's operations in order);
// with pp > 2 a pair of ranks exchanges one kind each way, so the passes are matched to the
// receives by order per kind. At pp 2 (which Megatron refuses without overlap: both neighbours
// are one rank, and NCCL would pair a batch's gradient with its activation) the matching by kind
// keeps each tensor's identity; the batches pair the same either way.
RankOrders interleaved_1f1b(int pp, int m, int v, std::vector<std::vector<CommitBatch>>* commits) {
  const int total = m * v;
  const auto mb = [&](int k) { return (k / (pp * v)) * pp + k % pp; };
  // Python's modulo, as Megatron's get_model_chunk_id takes it: the last rank asks it of an
  // iteration pp-1 before its first.
  const auto chunk = [&](int k, bool fwd) {
    const int c = ((k % (pp * v) + pp * v) % (pp * v)) / pp;
    return fwd ? c : v - 1 - c;
  };
  RankOrders out(pp);
  if (commits) commits->assign(pp, {});
  // A receive posted in batch `batch` of `rank`, from rank `from`; its pass is matched below.
  struct Recv {
    int rank = 0, from = 0;
    size_t batch = 0;
    ChunkPass kind = ChunkPass::kForward;
  };
  std::vector<Recv> recvs;
  // (from, to, kind) -> the passes sent, in order
  std::map<std::tuple<int, int, ChunkPass>, std::vector<PassRef>> sent;
  const bool record = commits && pp > 1;
  for (int r = 0; r < pp; ++r) {
    auto& o = out[r];
    const int prev = (r + pp - 1) % pp, next = (r + 1) % pp;
    const bool first_rank = r == 0, last_rank = r == pp - 1;
    const bool all_warmup = m == pp;
    const int warmup = all_warmup ? total : std::min((pp - r - 1) * 2 + (v - 1) * pp, total);
    const int remaining = total - warmup;
    // One call: the forward output of iteration fk (-1: none) and the input gradient of iteration
    // bk (-1: none) sent, and receives from the previous and the next rank as flagged.
    const auto call = [&](int fk, int bk, bool recv_prev, bool recv_next) {
      if (!record) return;
      CommitBatch b{static_cast<int>(o.size()), {}, {}};
      // The last virtual stage sends no activations, the first no gradients.
      if (fk >= 0 && !(last_rank && chunk(fk, true) == v - 1)) {
        const PassRef p{ChunkPass::kForward, {mb(fk), chunk(fk, true) * pp + r, 0}};
        b.sends.push_back(p);
        sent[{r, next, ChunkPass::kForward}].push_back(p);
      }
      if (bk >= 0 && !(first_rank && chunk(bk, false) == 0)) {
        const PassRef p{ChunkPass::kInputGrad, {mb(bk), chunk(bk, false) * pp + r, 0}};
        b.sends.push_back(p);
        sent[{r, prev, ChunkPass::kInputGrad}].push_back(p);
      }
      const size_t index = (*commits)[r].size();
      if (recv_prev) recvs.push_back({r, prev, index, ChunkPass::kForward});
      if (recv_next) recvs.push_back({r, next, index, ChunkPass::kInputGrad});
      if (!b.sends.empty() || recv_prev || recv_next) (*commits)[r].push_back(std::move(b));
    };
    const auto f = [&](int k) { o.push_back(forward(mb(k), chunk(k, true) * pp + r)); };
    const auto b = [&](int k) { o.push_back(backward(mb(k), chunk(k, false) * pp + r)); };
    call(-1, -1, !first_rank, false);  // recv_forward: virtual stage 0 of rank 0 receives nothing
    for (int k = 0; k < warmup; ++k) {
      f(k);
      const bool recv_prev = !(first_rank && chunk(k + 1, true) == 0) && k != total - 1;
      if (k == warmup - 1 && !all_warmup)
        call(k, -1, recv_prev, !last_rank);
      else
        call(k, -1, recv_prev, false);
    }
    for (int k = 0; k < remaining; ++k) {
      const int fk = k + warmup;
      f(fk);
      b(k);
      // Megatron: the first stage is pp-1 iterations ahead of the last, so the activations it
      // receives now are what the last rank's forward of iteration fk-(pp-1) sent (none from its
      // last chunk); the last rank, as far ahead of the first in the backward, receives the
      // gradient of the first rank's backward of iteration k-(pp-1) (none from its first chunk).
      bool recv_prev = first_rank ? chunk(fk - (pp - 1), true) != v - 1 : true;
      const bool recv_next = last_rank ? chunk(k - (pp - 1), false) != 0 : true;
      if (k == remaining - 1) recv_prev = false;
      call(fk, k, recv_prev, recv_next);
    }
    if (all_warmup) call(-1, -1, false, !last_rank);  // recv_backward
    for (int k = remaining; k < total; ++k) {
      b(k);
      const bool recv_next = !(last_rank && chunk(k + 1, false) == v - 1) && k != total - 1;
      call(-1, k, false, recv_next);
    }
  }
  if (!record) return out;
  // Each receive gets its peer's next send of that kind to this rank.
  std::map<std::tuple<int, int, ChunkPass>, size_t> taken;
  for (const Recv& rv : recvs) {
    const auto key = std::make_tuple(rv.from, rv.rank, rv.kind);
    const std::vector<PassRef>& list = sent[key];
    size_t& i = taken[key];
    if (i == list.size()) throw std::logic_error("interleaved 1F1B receives more than its peer sends");
    (*commits)[rv.rank][rv.batch].recvs.push_back(list[i++]);
  }
  for (const auto& [key, list] : sent)
    if (taken[key] != list.size()) throw std::logic_error("interleaved 1F1B sends more than its peer receives");
  return out;
}

}  // namespace cs::models::detail
