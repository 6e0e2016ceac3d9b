// build_model_workload: one pipeline stage's micro-batches as an op graph (model_workload.h).
#include <map>
#include <optional>
#include <utility>

#include "models/layer_ops.h"
#include "models/model_workload.h"
#include "models/moe_routing.h"

namespace cs::models {

namespace {

// The ops of one unit (embedding, a layer, head, MTP) for one GPU, split into forward and the
// backward passes (input and weight gradients, in the order layer_ops gives them).
struct UnitOps {
  std::string prefix;
  std::vector<LayerOp> fwd, bwd;
};

UnitOps split_unit(std::string prefix, const std::vector<LayerOp>& ops) {
  UnitOps u;
  u.prefix = std::move(prefix);
  for (const LayerOp& o : ops) (o.pass == Pass::kForward ? u.fwd : u.bwd).push_back(o);
  return u;
}

std::vector<UnitOps> stage_units(const ModelWorkload& mw, const LayerContext& c) {
  const ModelSpec& m = mw.model;
  const std::vector<int> split = stage_layers(mw.layout, m, mw.seq_len);
  const int first = first_layer_of_stage(split, mw.stage);
  std::vector<UnitOps> units;
  if (mw.stage == 0) units.push_back(split_unit("", embedding_ops(m, c)));
  for (int l = first; l < first + split[mw.stage]; ++l) units.push_back(split_unit("L" + std::to_string(l) + ".", layer_ops(m, l, c)));
  if (mw.stage == mw.layout.pp - 1) {
    units.push_back(split_unit("", head_ops(m, c)));
    for (int d = 0; d < m.mtp_depth; ++d) units.push_back(split_unit(d == 0 ? "" : "mtp" + std::to_string(d) + ".", mtp_ops(m, c)));
  }
  return units;
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

sim::CollectiveKind tp_kind(CommOp c) {
  switch (c) {
    case CommOp::kTpReduceScatter: return sim::CollectiveKind::kReduceScatter;
    case CommOp::kTpAllGather: return sim::CollectiveKind::kAllGather;
    default: return sim::CollectiveKind::kAllReduce;
  }
}

bool is_shared_expert(const std::string& name) { return name.find(".shared_") != std::string::npos; }

}  // namespace

WorkloadSize model_workload_size(const ModelWorkload& mw) {
  const ParallelLayout& L = mw.layout;
  LayerContext c;
  c.tokens = mw.micro_batch * mw.seq_len;
  c.seq_len = mw.seq_len;
  c.tp = L.tp;
  c.tp_comm = L.tp_comm;
  c.ep = L.ep;
  const auto seq = sequence(stage_units(mw, c), mw.backward);
  const uint64_t gpus = static_cast<uint64_t>(L.tp) * (!mw.folded ? L.dp : mw.model.moe ? L.ep : 1), mbs = static_cast<uint64_t>(mw.micro_batches);
  WorkloadSize w;
  for (const auto& [label, op] : seq) {
    // An op and about one dependency each; a collective's transfers over its group.
    w.ops += 2 * gpus * mbs;
    if (op.kind != LayerOpKind::kComm) continue;
    const bool moe = op.comm == CommOp::kDispatch || op.comm == CommOp::kCombine;
    const uint64_t n = moe ? L.ep : L.tp, groups = gpus / n;
    w.transfers += groups * mbs * sim::collective_transfers(moe ? sim::CollectiveKind::kAllToAll : tp_kind(op.comm), n);
  }
  return w;
}

OpWorkload build_model_workload(const ModelWorkload& mw, const ClusterConfig& cl) {
  const ParallelLayout& L = mw.layout;
  const int gpn = gpus_per_node(cl);
  LayerContext base;
  base.tokens = mw.micro_batch * mw.seq_len;
  base.seq_len = mw.seq_len;
  base.tp = L.tp;
  base.tp_comm = L.tp_comm;
  base.ep = L.ep;
  base.fp8 = mw.fp8;
  base.recompute_norm = mw.recompute_norm;
  base.recompute_mla_up = mw.recompute_mla_up;

  std::optional<MoeRoutingSetup> setup;
  RoutingStats stats;
  if (mw.model.moe && L.ep > 1) {
    const MoeSpec& e = *mw.model.moe;
    setup = MoeRoutingSetup{e.routed_experts, e.top_k, e.groups, e.groups_per_token, L.ep, gpn, {}};
    if (mw.zipf_exponent > 0) setup->expert_weight = zipf_expert_weights(e.routed_experts, mw.zipf_exponent);
    stats = routing_stats(*setup);
  }
  const double tokens = static_cast<double>(base.tokens);

  // The GPUs of the stage, and each one's op sequence (expert GEMM rows differ per EP rank when
  // routing is skewed; everything else is the same).
  std::vector<int> gpus;
  const int dp_simulated = !mw.folded ? L.dp : mw.model.moe ? L.ep : 1;
  for (int dp = 0; dp < dp_simulated; ++dp)
    for (int tp = 0; tp < L.tp; ++tp) gpus.push_back(gpu_of(L, tp, dp, mw.stage));
  std::map<int, std::vector<std::pair<std::string, LayerOp>>> seq_by_ep;
  for (int r = 0; r < L.ep; ++r) {
    LayerContext c = base;
    if (setup) c.expert_rows = stats.rows_per_token[r] * tokens * L.ep;
    seq_by_ep[r] = sequence(stage_units(mw, c), mw.backward);
    if (!setup) break;  // one sequence serves every rank
  }

  OpWorkload w;
  w.stream_names = {"compute", "comm"};
  w.stream_partitions = {cl.partitions[mw.compute_partition].name, cl.partitions[mw.comm_partition].name};
  w.engine_streams.resize(2);
  std::vector<sim::StreamId> compute(gpus.size()), comm(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) {
    compute[i] = w.graph.add_stream(gpus[i], mw.compute_partition, "compute");
    comm[i] = w.graph.add_stream(gpus[i], mw.comm_partition, "comm");
    w.engine_streams[0].push_back(compute[i].v);
    w.engine_streams[1].push_back(comm[i].v);
  }
  std::map<std::pair<CommOp, double>, std::vector<sim::Transfer>> a2a_cache;
  const auto a2a = [&](CommOp dir, double bytes_per_token) -> const std::vector<sim::Transfer>& {
    auto [it, fresh] = a2a_cache.try_emplace({dir, bytes_per_token});
    if (fresh)
      it->second = dir == CommOp::kDispatch ? dispatch_transfers(*setup, stats, tokens, bytes_per_token)
                                            : combine_transfers(*setup, stats, tokens, bytes_per_token);
    return it->second;
  };

  const size_t n = gpus.size();
  std::vector<std::optional<sim::OpId>> last_compute(n), last_comm(n);
  std::vector<bool> comm_consumed(n, true);
  const auto& seq0 = seq_by_ep.begin()->second;
  for (int64_t mb = 0; mb < mw.micro_batches; ++mb) {
    for (size_t k = 0; k < seq0.size(); ++k) {
      const LayerOp& op0 = seq0[k].second;
      const std::string& label = seq0[k].first;
      if (op0.kind != LayerOpKind::kComm) {
        for (size_t i = 0; i < n; ++i) {
          const int r = rank_coords(L, gpus[i], gpn).ep;
          const LayerOp& op = setup ? seq_by_ep[r][k].second : op0;
          const sim::OpId id = op.kind == LayerOpKind::kGemm
                                   ? w.graph.add_gemm(compute[i], op.gemm, label)
                                   : w.graph.add_compute(compute[i], sim::GenericCompute{op.flops, op.hbm_bytes, sim::DType::kBf16}, label);
          // Data from the last collective: everything but the shared expert waits for it.
          if (last_comm[i] && !comm_consumed[i] && !is_shared_expert(label)) {
            w.graph.add_dep(id, *last_comm[i]);
            comm_consumed[i] = true;
          }
          // A collective waits for the routed path only, so the shared expert's forward overlaps
          // the dispatch and its backward overlaps the dispatch's backward.
          if (!is_shared_expert(label)) last_compute[i] = id;
        }
        continue;
      }
      const bool moe = op0.comm == CommOp::kDispatch || op0.comm == CommOp::kCombine;
      if (moe && !setup) continue;  // ep == 1: experts are local, nothing moves
      // Groups: EP ranks of one expert-data-parallel replica, or TP ranks of one DP rank.
      std::map<int, std::vector<size_t>> groups;
      for (size_t i = 0; i < n; ++i) {
        const RankCoords rc = rank_coords(L, gpus[i], gpn);
        groups[moe ? rc.edp : rc.dp].push_back(i);  // members in EP (or TP) rank order
      }
      for (const auto& [key, members] : groups) {
        std::vector<sim::StreamId> streams;
        for (size_t i : members) streams.push_back(comm[i]);
        const std::vector<sim::OpId> ids =
            moe ? w.graph.add_all_to_all_v(streams, a2a(op0.comm, op0.comm_bytes), label)
                : w.graph.add_collective(tp_kind(op0.comm), op0.comm_bytes, streams, label);
        for (size_t j = 0; j < members.size(); ++j) {
          const size_t i = members[j];
          if (last_compute[i]) w.graph.add_dep(ids[j], *last_compute[i]);
          last_comm[i] = ids[j];
          comm_consumed[i] = false;
        }
      }
    }
  }
  w.op_pos.assign(w.graph.ops().size(), mw.pos);
  return w;
}

}  // namespace cs::models
