// 1F1B and Megatron's interleaved 1F1B.
#include <algorithm>

#include "models/schedule_generators.h"

namespace cs::models::detail {
namespace {

ChunkTask forward(int mb, int stage) { return {ChunkTask::kForward, {mb, stage, 0}, {}}; }
ChunkTask backward(int mb, int stage) { return {ChunkTask::kBackward, {mb, stage, 0}, {}}; }

}  // namespace

// Rank r runs pp-r-1 warm-up forwards (so that pp-r micro-batches are in flight once it starts
// alternating), then one forward and one full backward in turn, then drains the backwards.
RankOrders one_f_one_b(int pp, int m) {
  RankOrders out(pp);
  for (int r = 0; r < pp; ++r) {
    auto& o = out[r];
    const int warmup = std::min(pp - r - 1, m);
    int f = 0, b = 0;
    for (int i = 0; i < warmup; ++i) o.push_back(forward(f++, r));
    for (int i = 0; i < m - warmup; ++i) {
      o.push_back(forward(f++, r));
      o.push_back(backward(b++, r));
    }
    while (b < m) o.push_back(backward(b++, r));
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
