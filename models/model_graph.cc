// build_model_workload: one pipeline stage's micro-batches as an op graph (model_workload.h).
#include <map>
#include <optional>
#include <utility>

#include "models/layer_ops.h"
#include "models/model_workload.h"
#include "models/moe_routing.h"
#include "models/stage_emitter.h"
#include "models/stage_units.h"

namespace cs::models {

namespace {

std::vector<UnitOps> stage_units(const ModelWorkload& mw, const LayerContext& c) {
  return stage_units(mw.model, stage_layers(mw.layout, mw.model, mw.seq_len), mw.stage, c);
}

// The ops of one micro-batch in execution order: every unit's forward, then every unit's
// backward in reverse.
std::vector<std::pair<std::string, LayerOp>> sequence(const std::vector<UnitOps>& units, bool backward) {
  std::vector<std::pair<std::string, LayerOp>> out;
  for (const UnitOps& u : units)
    for (const LayerOp& o : u.fwd) out.emplace_back(u.prefix + o.name, o);
  if (backward)
    for (auto it = units.rbegin(); it != units.rend(); ++it)
      for (const LayerOp& o : it->bwd) out.emplace_back(it->prefix + o.name, o);
  return out;
}

}  // namespace

WorkloadSize model_workload_size(const ModelWorkload& mw) {
  const ParallelLayout& L = mw.layout;
  const LayerContext c = workload_context(mw);
  std::vector<std::pair<std::string, LayerOp>> seq;
  uint64_t mbs = static_cast<uint64_t>(mw.micro_batches);
  uint64_t stages = 1;
  if (!mw.pipeline) {
    seq = sequence(stage_units(mw, c), mw.backward);
  } else {
    // Every stage's forward and backward once per micro-batch (and direction), plus the sends.
    const ScheduleParams& p = *mw.pipeline;
    const std::vector<int> split = workload_stage_layers(mw);
    for (int s = 0; s < static_cast<int>(split.size()); ++s) {
      const auto part = sequence(stage_units(mw.model, split, s, c), true);
      seq.insert(seq.end(), part.begin(), part.end());
    }
    mbs = static_cast<uint64_t>(p.micro_batches);
    stages = split.size();
  }
  const uint64_t gpus = static_cast<uint64_t>(L.tp) * static_cast<uint64_t>(mw.simulated_dp());
  WorkloadSize w;
  w.ops += 4 * stages * gpus * mbs;  // the sends at stage boundaries and their dependencies
  for (const auto& [label, op] : seq) {
    // An op and about one dependency each; a collective's transfers over its group.
    w.ops += 2 * gpus * mbs;
    if (op.kind != LayerOpKind::kComm) continue;
    const bool moe = is_moe_comm(op.comm);
    const bool cp = is_cp_comm(op.comm);
    const uint64_t n = moe ? L.ep : cp ? L.cp : L.tp, groups = gpus / n;
    if (cp && mw.mirrored()) {  // the ring's n-1 puts to the successor, each an op
      w.transfers += gpus * mbs * (n - 1);
      w.ops += 2 * gpus * mbs * (n - 2);
    }
    else if (moe && mw.mirrored())  // one put per GPU: its row, at most one transfer per peer
      w.transfers += gpus * mbs * (n - 1);
    else
      w.transfers += groups * mbs * sim::collective_transfers(moe ? sim::CollectiveKind::kAllToAll : tp_collective(op.comm), n);
  }
  return w;
}

OpWorkload build_model_workload(const ModelWorkload& mw, const ClusterConfig& cl) {
  if (mw.pipeline) return build_pipeline_workload(mw, cl);
  const ParallelLayout& L = mw.layout;
  const int gpn = gpus_per_node(cl);
  const LayerContext base = workload_context(mw);

  // The GPUs of the stage (one replica when folded, one GPU per TP rank when mirrored).
  std::vector<int> gpus;
  const int dp_simulated = mw.simulated_dp();
  for (int dp = 0; dp < dp_simulated; ++dp)
    for (int tp = 0; tp < L.tp; ++tp) gpus.push_back(gpu_of(L, tp, dp, mw.stage));

  OpWorkload w;
  w.stream_names = {"compute", "comm"};
  const int comm_part = mw.comm_kernel_partition(cl);
  w.stream_partitions = {cl.partitions[mw.compute_partition].name, cl.partitions[comm_part].name};
  w.engine_streams.resize(2);
  std::vector<sim::StreamId> compute, comm;
  for (int gpu : gpus) {
    compute.push_back(w.graph.add_stream(gpu, mw.compute_partition, "compute"));
    comm.push_back(w.graph.add_stream(gpu, comm_part, "comm"));
    w.engine_streams[0].push_back(compute.back().v);
    w.engine_streams[1].push_back(comm.back().v);
  }
  StageEmitter emitter(w.graph, mw, cl, gpus, compute, comm);

  // Each EP rank's op sequence: expert GEMM rows differ per rank when routing is skewed.
  const std::optional<MoeRoutingSetup> setup = workload_routing(mw, gpn);
  const RoutingStats stats = setup ? routing_stats(*setup) : RoutingStats{};
  std::vector<std::vector<LayerOp>> per_rank;
  std::vector<ChunkOp> order;
  for (int r = 0; r < (setup && mw.zipf_exponent > 0 ? L.ep : 1); ++r) {
    LayerContext c = base;
    if (setup) c.expert_rows = stats.rows_per_token[r] * static_cast<double>(base.tokens) * L.ep;
    const auto seq = sequence(stage_units(mw, c), mw.backward);
    per_rank.emplace_back();
    for (size_t k = 0; k < seq.size(); ++k) {
      per_rank.back().push_back(seq[k].second);
      if (r == 0) order.push_back(ChunkOp{seq[k].first, k, 0});
    }
  }
  emitter.set_ops(per_rank);
  for (int64_t mb = 0; mb < mw.micro_batches; ++mb) emitter.emit(order);
  w.op_pos.assign(w.graph.ops().size(), mw.pos);
  w.stand_in = stand_in_gpus(mw, cl);
  return w;
}

}  // namespace cs::models
