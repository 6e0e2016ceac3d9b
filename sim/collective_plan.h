// How a collective becomes flows: a sequence of identical phases, each a set of point-to-point
// transfers that run concurrently; a phase starts when the previous one has fully finished. The
// plan holds one phase and its count, so a ring over n GPUs costs n transfers of memory, not 2n^2.
//
// Algorithms (n ranks, per-GPU buffer S bytes, nccl-tests size conventions):
//   all_to_all      1 phase: every rank sends S/n to every rank, itself included: the kernel
//                   copies its own chunk on its SMs and in its HBM too, as nccl-tests and DeepEP do
//                   (over one rank: a copy of S, as our bench's one-GPU overlap runs measured).
//   (the other kinds over one rank move nothing)
//   all_reduce      ring: 2(n-1) phases, rank i sends S/n to rank i+1 in each
//                   (reduce-scatter then all-gather) -> 2(n-1)/n * S / B + 2(n-1) latencies.
//   reduce_scatter  ring: n-1 phases of S/n.
//   all_gather      ring: n-1 phases of S/n (S is each rank's output).
//   send            1 phase: rank 0 sends S to rank 1.
//   all_to_all_v    1 phase: the collective's own transfers (OpGraph::add_all_to_all_v), all
//                   concurrent, so a relay's forward runs alongside the transfer it relays.
// Phases are synchronous (no chunk pipelining), which gives the textbook bandwidth term exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/op_graph.h"

namespace cs::sim {

struct CollectivePlan {
  std::vector<Transfer> phase;  // the transfers of every phase
  uint32_t phases = 0;
  // Point-to-point transfers over the whole collective.
  uint64_t transfers() const { return static_cast<uint64_t>(phase.size()) * phases; }
};

// Not for kAllToAllV (its transfers live in the graph): that kind gets an empty plan.
CollectivePlan plan_collective(CollectiveKind kind, uint32_t ranks, double bytes);
// Any collective of `graph`, kAllToAllV included (its one phase is a copy of its transfers).
CollectivePlan plan_collective(const OpGraph& graph, const Collective& c);
// Transfers a collective over `ranks` makes, without building the plan (for input limits).
// kAllToAllV: at most ranks^2, as normalize_transfers keeps one transfer per pair.
uint64_t collective_transfers(CollectiveKind kind, uint64_t ranks);
// Exactly the transfers a collective of `graph` makes (a stored kAllToAllV's count).
uint64_t collective_transfers(const OpGraph& graph, const Collective& c);

// Bus-bandwidth factor of nccl-tests: busbw = algbw * factor. kAllToAllV: 1, because its bytes
// (the busiest rank's total to others) already leave out the rank's share to itself that
// all_to_all's (n-1)/n removes; a uniform matrix thus reports all_to_all's busbw.
double busbw_factor(CollectiveKind kind, uint32_t ranks);

}  // namespace cs::sim
