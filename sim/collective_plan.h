// How a collective becomes flows: a sequence of identical phases, each a set of point-to-point
// transfers that run concurrently; a phase starts when the previous one has fully finished. The
// plan holds one phase and its count, so a ring over n GPUs costs n transfers of memory, not 2n^2.
//
// Algorithms (n ranks, per-GPU buffer S bytes, nccl-tests size conventions):
//   all_to_all      1 phase: every rank sends S/n to every other rank.
//   all_reduce      ring: 2(n-1) phases, rank i sends S/n to rank i+1 in each
//                   (reduce-scatter then all-gather) -> 2(n-1)/n * S / B + 2(n-1) latencies.
//   reduce_scatter  ring: n-1 phases of S/n.
//   all_gather      ring: n-1 phases of S/n (S is each rank's output).
//   send            1 phase: rank 0 sends S to rank 1.
// Phases are synchronous (no chunk pipelining), which gives the textbook bandwidth term exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/op_graph.h"

namespace cs::sim {

struct Transfer {
  uint32_t src = 0;  // rank index in the collective
  uint32_t dst = 0;
  double bytes = 0;
};

struct CollectivePlan {
  std::vector<Transfer> phase;  // the transfers of every phase
  uint32_t phases = 0;
  // Point-to-point transfers over the whole collective.
  uint64_t transfers() const { return static_cast<uint64_t>(phase.size()) * phases; }
};

CollectivePlan plan_collective(CollectiveKind kind, uint32_t ranks, double bytes);
// Transfers a collective over `ranks` makes, without building the plan (for input limits).
uint64_t collective_transfers(CollectiveKind kind, uint64_t ranks);

// Bus-bandwidth factor of nccl-tests: busbw = algbw * factor.
double busbw_factor(CollectiveKind kind, uint32_t ranks);

}  // namespace cs::sim
