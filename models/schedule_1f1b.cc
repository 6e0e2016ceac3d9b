// 1F1B and Megatron's interleaved 1F1B.
#include <algorithm>
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
// (v-1)*pp forwards, or all of them when m == pp (Megatron's special case), then 1F1B.
RankOrders interleaved_1f1b(int pp, int m, int v) {
  const int total = m * v;
  const auto mb = [&](int k) { return (k / (pp * v)) * pp + k % pp; };
  const auto chunk = [&](int k, bool fwd) {
    const int c = (k % (pp * v)) / pp;
    return fwd ? c : v - 1 - c;
  };
  RankOrders out(pp);
  for (int r = 0; r < pp; ++r) {
    auto& o = out[r];
    const int warmup = m == pp ? total : std::min((pp - r - 1) * 2 + (v - 1) * pp, total);
    const auto f = [&](int k) { o.push_back(forward(mb(k), chunk(k, true) * pp + r)); };
    const auto b = [&](int k) { o.push_back(backward(mb(k), chunk(k, false) * pp + r)); };
    for (int k = 0; k < warmup; ++k) f(k);
    for (int k = 0; k < total - warmup; ++k) {
      f(k + warmup);
      b(k);
    }
    for (int k = total - warmup; k < total; ++k) b(k);
  }
  return out;
}

}  // namespace cs::models::detail
