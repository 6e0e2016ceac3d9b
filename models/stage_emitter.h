// Emits chunks of layer ops for the GPUs of one pipeline stage (all its data-parallel replicas,
// one EP group when folded, one GPU per TP rank when mirrored) into an op graph: compute ops on
// each GPU's compute stream, MoE all-to-alls (all-to-all-v over the EP group), TP collectives and
// the context-parallel all-gathers on its communication stream.
//
// Mirrored fidelity: the one simulated GPU of an EP group runs each MoE all-to-all as a one-sided
// put (sim::OpGraph::add_put) of its own row of the all-to-all-v, the same transfer list the
// collective uses: every transfer whose source is its EP rank, InfiniBand sends and the NVLink
// forwards it performs as a relay alike, to the real GPU ids of its (unsimulated) peers. An
// all-to-all-v finishes when every GPU's transfers have finished; the put when this GPU's have.
// Under balanced routing every GPU sends and receives the same volumes over the same kind of
// links, so the two finish together. A context-parallel ring collective becomes the put of the
// bytes the GPU sends its ring successor. The ingress side comes from the links: the run routes
// the put over the simulated GPU's own links wherever it reaches a peer's (OpWorkload::stand_in,
// sim/stand_in_routing.h), so the bytes it writes into peers land on its own NVLink in, NIC and
// HBM, where the peers' writes into it would land. What it still leaves out is a switch uplink
// that its peers' flows would share with its own (an oversubscribed fabric across leaves).
//
// Data dependencies are tracked per chunk slot, so two chunks can be interleaved in one stream
// order (DualPipe's overlapped forward-and-backward pairs): an op waits for its own chunk's last
// collective (the shared expert excepted: it overlaps the dispatch; a weight gradient and a
// recomputation too, when that collective is an MoE all-to-all), and a collective waits for its
// own chunk's last routed-path input compute op (not a weight gradient). Stream order does the rest.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/layer_ops.h"
#include "models/model_workload.h"
#include "models/moe_routing.h"
#include "models/stand_in_images.h"
#include "sim/op_graph.h"

namespace cs::models {

// One op of a chunk: `slot` names the chunk among those being interleaved (0 or 1).
struct ChunkOp {
  std::string label;
  size_t index = 0;  // position in the per-EP-rank op lists the emitter was given
  int slot = 0;
};

class StageEmitter {
 public:
  // `gpus`: the GPUs that run, in (dp, tp) order; `compute`/`comm`: their streams.
  StageEmitter(sim::OpGraph& graph, const ModelWorkload& mw, const ClusterConfig& cl, std::vector<int> gpus,
               std::vector<sim::StreamId> compute, std::vector<sim::StreamId> comm);

  // Per EP rank (one list when routing is uniform), the LayerOps a chunk sequence refers to by index.
  // Kept by reference, not copied (a pipeline emits thousands of chunks from a few lists): the
  // lists must outlive the emits that use them.
  void set_ops(const std::vector<std::vector<LayerOp>>& per_ep_rank) { ops_ = &per_ep_rank; }
  // Emits ops in the given order on every GPU.
  void emit(const std::vector<ChunkOp>& order);
  // The next op of `slot` on GPU `i` also waits for `dep` (a pipeline receive, a previous chunk).
  void wait_for(int slot, size_t i, sim::OpId dep) { pending_[slot][i].push_back(dep); }
  // The last op a slot emitted on GPU `i` (compute or collective), if any; clears with reset().
  std::optional<sim::OpId> last(int slot, size_t i) const { return last_any_[slot][i]; }
  // The same, weight gradients left out: what the chunk's output (activations or input gradient) waits for.
  std::optional<sim::OpId> last_input(int slot, size_t i) const { return last_input_[slot][i]; }
  void reset(int slot);

  const std::vector<int>& gpus() const { return gpus_; }
  const std::vector<sim::StreamId>& comm_streams() const { return comm_; }

 private:
  const std::vector<sim::Transfer>& a2a(CommOp dir, double bytes_per_token);
  // Mirrored: what EP rank `ep_rank` sends in that all-to-all-v, per destination EP rank.
  struct Row {
    std::vector<int> dst_ep;
    std::vector<double> bytes;
  };
  const Row& a2a_row(CommOp dir, double bytes_per_token, int ep_rank);
  void emit_compute(const ChunkOp& c);
  void emit_comm(const ChunkOp& c);
  // `id` takes the slot's pending dependencies and becomes its last op (its last input op unless
  // `weight`: a weight gradient).
  void take_pending(int slot, size_t i, sim::OpId id, bool weight = false);

  sim::OpGraph& g_;
  const ModelWorkload& mw_;
  int gpn_;
  std::vector<int> gpus_;
  std::vector<RankCoords> coords_;  // per GPU index
  std::vector<int> ep_rank_;        // per GPU index
  std::vector<sim::StreamId> compute_, comm_;
  std::optional<MoeRoutingSetup> setup_;
  RoutingStats stats_;
  double tokens_ = 0;
  const std::vector<std::vector<LayerOp>>* ops_ = nullptr;
  std::map<std::pair<CommOp, double>, std::vector<sim::Transfer>> a2a_cache_;
  std::map<std::tuple<CommOp, double, int>, Row> row_cache_;
  std::map<int, std::vector<size_t>> ep_groups_, tp_groups_;  // members in rank order
  std::map<std::pair<int, int>, std::vector<size_t>> cp_groups_;  // by (replica / cp, tp)
  // Per slot (2) and GPU index.
  std::vector<std::vector<std::optional<sim::OpId>>> last_compute_, last_comm_, last_any_, last_input_;
  std::vector<std::vector<bool>> comm_consumed_;
  std::vector<std::vector<bool>> last_comm_moe_;  // the chunk's last collective is an MoE all-to-all
  std::vector<std::vector<std::vector<sim::OpId>>> pending_;
  StandInImages images_;  // of the mirrored puts
};

// The collective a tensor-parallel op runs.
sim::CollectiveKind tp_collective(CommOp c);
// The layer context of one micro-batch of the workload on one GPU (balanced routing).
LayerContext workload_context(const ModelWorkload& mw);
// The routing the workload's MoE layers use (none for a dense model or ep 1).
std::optional<MoeRoutingSetup> workload_routing(const ModelWorkload& mw, int gpus_per_node);

}  // namespace cs::models
