// The optimizer step that ends a training step, on the engine: each GPU's gradients reduced over
// its data-parallel group (dense parameters over dp, routed experts over their dp/ep replicas),
// AdamW on what it owns, and the updated BF16 weights gathered back. ZeRO-1 (zero_stage >= 1):
// reduce-scatter, AdamW on the 1/n shard, all-gather; ZeRO-0: all-reduce, AdamW on everything.
// The two groups' collectives run one after the other, as NCCL asks of different communicators
// (optimizer_step.cc).
//
// The reductions are rings the way NCCL builds them across nodes: one ring per GPU of a node in
// the group, each entering every node at a different GPU so the rings leave through different
// NICs, each ring carrying 1/rings of the buffer. A ring's n-1 steps are pipelined in NCCL; here
// each GPU sends its whole share, (n-1)/n of its ring's buffer, to its successor as one transfer
// (the bandwidth term exactly; the n-1 hop latencies, microseconds against the milliseconds the
// volume takes, are left out). Because a GPU only ever puts into its successors, the same ops run
// whether the peers are simulated or folded away, so full and folded fidelity agree.
#pragma once

#include <vector>

#include "models/model_workload.h"
#include "sim/op_graph.h"

namespace cs::models {

// A ring's members in ring order and how many parallel rings reduce over them.
struct RingSet {
  std::vector<std::vector<int>> rings;  // each ring: all members, in the order data flows
};
// The rings over `members` (GPU ids in group-rank order): one ring when they share a node, else one
// per member of a node (members per node must be equal), ring k rotating each node's members by k.
RingSet data_parallel_rings(const std::vector<int>& members, int gpus_per_node);

// The GPUs of each group a GPU reduces with: dense parameters over its dp group, routed experts
// over the same EP rank of every EP group of the stage.
std::vector<int> dense_dp_group(const ParallelLayout& l, int gpu, int gpus_per_node);
std::vector<int> expert_dp_group(const ParallelLayout& l, int gpu, int gpus_per_node);

// The simulated GPUs of one pipeline rank and their streams, in the same order.
struct RankStreams {
  std::vector<int> gpus;
  std::vector<sim::StreamId> compute, comm;
  // Per GPU (or empty), other ops its optimizer step waits for: the point-to-point transfers a
  // schedule posts after the rank's last task (models/pipeline_rendezvous.h).
  std::vector<std::vector<sim::OpId>> after;
};

// Appends every pipeline rank's optimizer step for its simulated GPUs, after everything already on
// their streams. Ops per GPU: the gradient reduction (one put to its ring successors per group,
// the dense group's, then the routed experts'), for DualPipe the sum with the mirror copy (one
// put), AdamW (HBM-bound, on the compute stream), and the weight gather (one put per group, in the
// same order); each waits for what its simulated ring predecessors (and mirror) put into it.
// Returns each rank's optimizer ops, ascending.
std::vector<std::vector<uint32_t>> emit_optimizer_step(sim::OpGraph& g, const ModelWorkload& mw, const ClusterConfig& cl,
                                                       const std::vector<RankStreams>& ranks);

}  // namespace cs::models
