// ZB1P: the ZB-H1 schedule of Qi et al. 2023, "Zero Bubble Pipeline Parallelism" (sec. 3.1,
// fig. 3, the uniform B/W split): 1F1B's memory (rank r holds at most pp-r micro-batches), with
// each backward split into B (input gradient, on the critical path) and W (weight gradient).
// Rank r defers its W passes by r micro-batches so that they fill the tail that 1F1B leaves idle:
//   F x (pp-r-1) | (F B) x r | (F B W) x (m-pp+1) | (B W) x (pp-r-1) | W x r
// which is the order of Megatron-DeepSpeed's ZeroBubbleH1Pipeline (F, FB, FBW, BW, W sections)
// with every B split (its first rank keeps B and W back to back, which times the same).
#include "models/schedule_generators.h"

namespace cs::models::detail {

RankOrders zb_h1(int pp, int m) {
  RankOrders out(pp);
  for (int r = 0; r < pp; ++r) {
    auto& o = out[r];
    int f = 0, b = 0, w = 0;
    const auto F = [&] { o.push_back({ChunkTask::kForward, {f++, r, 0}, {}}); };
    const auto B = [&] { o.push_back({ChunkTask::kBackwardInput, {b++, r, 0}, {}}); };
    const auto W = [&] { o.push_back({ChunkTask::kBackwardWeight, {w++, r, 0}, {}}); };
    for (int i = 0; i < pp - r - 1; ++i) F();
    for (int i = 0; i < r; ++i) F(), B();
    for (int i = 0; i < m - pp + 1; ++i) F(), B(), W();
    for (int i = 0; i < pp - r - 1; ++i) B(), W();
    for (int i = 0; i < r; ++i) W();
  }
  return out;
}

}  // namespace cs::models::detail
