#include "models/stage_emitter.h"

#include <algorithm>

namespace cs::models {

namespace {

constexpr int kSlots = 2;

bool is_shared_expert(const std::string& name) { return name.find(".shared_") != std::string::npos; }

}  // namespace

sim::CollectiveKind tp_collective(CommOp c) {
  switch (c) {
    case CommOp::kTpReduceScatter:
    case CommOp::kCpReduceScatter: return sim::CollectiveKind::kReduceScatter;
    case CommOp::kTpAllGather:
    case CommOp::kCpAllGather: return sim::CollectiveKind::kAllGather;
    default: return sim::CollectiveKind::kAllReduce;
  }
}

LayerContext workload_context(const ModelWorkload& mw) {
  LayerContext c;
  c.tokens = mw.tokens_per_gpu();
  c.seq_len = mw.seq_len;
  c.cp = mw.layout.cp;
  c.tp = mw.layout.tp;
  c.tp_comm = mw.layout.tp_comm;
  c.ep = mw.layout.ep;
  c.fp8 = mw.fp8;
  c.recompute_norm = mw.recompute_norm;
  c.recompute_mla_up = mw.recompute_mla_up;
  c.attention_layout_copies = mw.attention_layout_copies;
  return c;
}

std::optional<MoeRoutingSetup> workload_routing(const ModelWorkload& mw, int gpus_per_node) {
  if (!mw.model.moe || mw.layout.ep == 1) return std::nullopt;
  const MoeSpec& e = *mw.model.moe;
  MoeRoutingSetup s{e.routed_experts, e.top_k, e.groups, e.groups_per_token, mw.layout.ep, gpus_per_node, {}};
  if (mw.zipf_exponent > 0) s.expert_weight = zipf_expert_weights(e.routed_experts, mw.zipf_exponent);
  return s;
}

StageEmitter::StageEmitter(sim::OpGraph& graph, const ModelWorkload& mw, const ClusterConfig& cl, std::vector<int> gpus,
                           std::vector<sim::StreamId> compute, std::vector<sim::StreamId> comm)
    : g_(graph),
      mw_(mw),
      gpn_(gpus_per_node(cl)),
      gpus_(std::move(gpus)),
      compute_(std::move(compute)),
      comm_(std::move(comm)),
      images_(mw, cl) {
  setup_ = workload_routing(mw, gpn_);
  if (setup_) stats_ = routing_stats(*setup_);
  tokens_ = static_cast<double>(mw.tokens_per_gpu());
  const size_t n = gpus_.size();
  for (size_t i = 0; i < n; ++i) {
    const RankCoords rc = rank_coords(mw.layout, gpus_[i], gpn_);
    coords_.push_back(rc);
    ep_rank_.push_back(rc.ep);
    ep_groups_[rc.edp].push_back(i);
    tp_groups_[rc.dp].push_back(i);
    cp_groups_[{rc.dp / mw.layout.cp, rc.tp}].push_back(i);
  }
  last_compute_.assign(kSlots, std::vector<std::optional<sim::OpId>>(n));
  last_comm_ = last_any_ = last_input_ = last_compute_;
  comm_consumed_.assign(kSlots, std::vector<bool>(n, true));
  last_comm_moe_.assign(kSlots, std::vector<bool>(n, false));
  pending_.assign(kSlots, std::vector<std::vector<sim::OpId>>(n));
}

void StageEmitter::reset(int slot) {
  for (size_t i = 0; i < gpus_.size(); ++i) {
    last_compute_[slot][i].reset();
    last_comm_[slot][i].reset();
    last_any_[slot][i].reset();
    last_input_[slot][i].reset();
    comm_consumed_[slot][i] = true;
    last_comm_moe_[slot][i] = false;
  }
}

const std::vector<sim::Transfer>& StageEmitter::a2a(CommOp dir, double bytes_per_token) {
  auto [it, fresh] = a2a_cache_.try_emplace({dir, bytes_per_token});
  if (fresh)
    it->second = dir == CommOp::kDispatch ? dispatch_transfers(*setup_, stats_, tokens_, bytes_per_token)
                                          : combine_transfers(*setup_, stats_, tokens_, bytes_per_token);
  return it->second;
}

const StageEmitter::Row& StageEmitter::a2a_row(CommOp dir, double bytes_per_token, int ep_rank) {
  auto [it, fresh] = row_cache_.try_emplace({dir, bytes_per_token, ep_rank});
  if (fresh)
    for (const sim::Transfer& t : a2a(dir, bytes_per_token))
      if (t.src == static_cast<uint32_t>(ep_rank)) {
        it->second.dst_ep.push_back(static_cast<int>(t.dst));
        it->second.bytes.push_back(t.bytes);
      }
  return it->second;
}

void StageEmitter::take_pending(int slot, size_t i, sim::OpId id, bool weight) {
  for (sim::OpId d : pending_[slot][i]) g_.add_dep(id, d);
  pending_[slot][i].clear();
  last_any_[slot][i] = id;
  if (!weight) last_input_[slot][i] = id;
}

void StageEmitter::emit(const std::vector<ChunkOp>& order) {
  for (const ChunkOp& c : order) {
    if (ops_->front()[c.index].kind == LayerOpKind::kComm)
      emit_comm(c);
    else
      emit_compute(c);
  }
}

void StageEmitter::emit_compute(const ChunkOp& c) {
  const bool shared = is_shared_expert(c.label);
  // A weight gradient reads what its layer's input-gradient ops before it on the stream produced
  // and the forward saved, never an all-to-all's output, and no collective reads it: it neither
  // waits for the chunk's MoE all-to-all nor holds the next one back (DualPipe runs MLP(W) while
  // the dispatch's backward is in flight, DeepSeek-V3 Figure 4).
  const bool weight = ops_->front()[c.index].pass == Pass::kBackwardWeight;
  // A recomputation reads the activations the forward saved: it does not wait for the combine's
  // backward that DualPipe's pair issues before it either.
  const bool recompute = ops_->front()[c.index].recompute;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    // Expert GEMM rows differ per EP rank when routing is skewed; everything else is the same.
    const LayerOp& op = (*ops_)[ops_->size() == 1 ? 0 : ep_rank_[i]][c.index];
    const sim::OpId id =
        op.kind == LayerOpKind::kGemm
            ? g_.add_gemm(compute_[i], op.gemm, c.label)
            : g_.add_compute(compute_[i],
                             sim::GenericCompute{op.flops, op.hbm_bytes, sim::DType::kBf16, compute_kind(op), op.form,
                                                 op.head_dim_qk, op.head_dim_v},
                             c.label);
    take_pending(c.slot, i, id, weight);
    // Data from the chunk's last collective: everything but the shared expert waits for it.
    const bool independent = shared || ((weight || recompute) && last_comm_moe_[c.slot][i]);
    if (last_comm_[c.slot][i] && !comm_consumed_[c.slot][i] && !independent) {
      g_.add_dep(id, *last_comm_[c.slot][i]);
      comm_consumed_[c.slot][i] = true;
    }
    // A collective waits for the routed path only, so the shared expert's forward overlaps the
    // dispatch and its backward overlaps the dispatch's backward.
    if (!shared && !weight) last_compute_[c.slot][i] = id;
  }
}

void StageEmitter::emit_comm(const ChunkOp& c) {
  const LayerOp& op = ops_->front()[c.index];
  const bool moe = is_moe_comm(op.comm);
  if (moe && !setup_) return;  // ep == 1: experts are local, nothing moves
  const auto chain = [&](size_t i, sim::OpId id) {
    take_pending(c.slot, i, id);
    if (last_compute_[c.slot][i]) g_.add_dep(id, *last_compute_[c.slot][i]);
    last_comm_[c.slot][i] = id;
    comm_consumed_[c.slot][i] = false;
    last_comm_moe_[c.slot][i] = moe;
  };
  // An EP group over several nodes runs DeepEP's internode kernels, at their own pace. Sharing the
  // compute partition (no SMs reserved for communication), they launch on DeepEP's default grid and
  // take those SMs from the GEMMs as they run, not every SM the partition has.
  const double paced = moe ? internode_paced_bytes(*setup_, stats_, tokens_, op.comm_bytes) : 0.0;
  const auto grid = [&](size_t i, sim::OpId id) {
    if (moe && g_.streams()[comm_[i].v].partition == g_.streams()[compute_[i].v].partition)
      g_.set_grid_sms(id, kDeepEpDefaultSms);
    return id;
  };
  if (moe && mw_.mirrored()) {
    // This GPU's row of the all-to-all-v, put into its peers of the EP group (see the header).
    for (size_t i = 0; i < gpus_.size(); ++i) {
      const RankCoords& rc = coords_[i];
      const Row& row = a2a_row(op.comm, op.comm_bytes, rc.ep);
      std::vector<int> dst;
      std::vector<uint32_t> images;  // each destination's: its offset in every EP group stood for
      dst.reserve(row.dst_ep.size());
      for (int e : row.dst_ep) {
        dst.push_back(gpu_of(mw_.layout, rc.tp, rc.edp * mw_.layout.ep + e, rc.pp));
        if (images_.active()) images.push_back(images_.of(g_, StandInImages::Role::kEpOffset, gpus_[i], dst.back()));
      }
      chain(i, grid(i, g_.add_put(comm_[i], dst, row.bytes, c.label, paced, images)));
    }
    return;
  }
  const bool cp = is_cp_comm(op.comm);
  if (cp && mw_.mirrored()) {
    // The ring collective's phases as seen from this GPU: cp-1 puts of a chunk, one after another
    // on its stream (each phase pays its latency, as the ring's do). A ring phase lasts as long as
    // its slowest hop: when the group spans nodes, the hop from a node's last GPU to the next
    // node's first, which changes rail and is forwarded inside the node. The put makes a hop of
    // that kind: to the next node's GPU of the next local index. Else it goes to the successor.
    const int n = mw_.layout.cp, per_node = std::max(1, gpn_ / mw_.layout.tp);
    int step = n > per_node ? (per_node + 1) % n : 1;
    if (step == 0) step = per_node;  // a group of per_node + 1 ranks: its predecessor is a node away
    for (size_t i = 0; i < gpus_.size(); ++i) {
      const RankCoords& rc = coords_[i];
      const std::vector<int> next = {gpu_of(mw_.layout, rc.tp, rc.dp - rc.cp + (rc.cp + step) % n, rc.pp)};
      const std::vector<double> chunk = {op.comm_bytes / n};
      std::vector<uint32_t> images;  // the same hop of every CP group stood for
      if (images_.active()) images = {images_.of(g_, StandInImages::Role::kCpOffset, gpus_[i], next[0])};
      for (int k = 0; k + 1 < n; ++k) {
        const sim::OpId id = g_.add_put(comm_[i], next, chunk, c.label, 0, images);
        if (k == 0) {
          take_pending(c.slot, i, id);
          if (last_compute_[c.slot][i]) g_.add_dep(id, *last_compute_[c.slot][i]);
        }
        if (k + 2 == n) chain(i, id);
      }
    }
    return;
  }
  const auto run = [&](const std::vector<size_t>& members) {
    std::vector<sim::StreamId> streams;
    for (size_t i : members) streams.push_back(comm_[i]);
    const std::vector<sim::OpId> ids = moe ? g_.add_all_to_all_v(streams, a2a(op.comm, op.comm_bytes), c.label, paced)
                                           : g_.add_collective(tp_collective(op.comm), op.comm_bytes, streams, c.label);
    if (images_.active() && !ids.empty()) {  // the same collective of the replicas its GPUs stand in for
      std::vector<int> gpus;
      for (size_t i : members) gpus.push_back(gpus_[i]);
      images_.relabel(g_, ids.front(), gpus);
    }
    for (size_t j = 0; j < members.size(); ++j) chain(members[j], grid(members[j], ids[j]));
  };
  if (cp)
    for (const auto& [key, members] : cp_groups_) run(members);
  else
    for (const auto& [key, members] : moe ? ep_groups_ : tp_groups_) run(members);
}

}  // namespace cs::models
