// build_pipeline_workload: a whole pipeline step as an op graph, every rank's chunks in the order
// its schedule gives (model_workload.h).
#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "models/model_workload.h"
#include "models/optimizer_step.h"
#include "models/pipeline_rendezvous.h"
#include "models/pipeline_schedule.h"
#include "models/stage_emitter.h"
#include "models/stage_units.h"
#include "models/stand_in_images.h"

namespace cs::models {

namespace {

// One model stage's ops for one micro-batch, per EP rank (one list when routing is uniform):
// forward, input-backward (B with its recomputation), weight-backward and both backwards as the
// full backward runs them; `labels` and `blocks` index like the lists.
struct StageOps {
  struct Part {
    std::vector<std::vector<LayerOp>> per_rank;
    std::vector<std::string> labels;
    std::vector<int> unit;  // which unit of the stage each op belongs to
    std::vector<ChunkOp> order;  // the ops in list order, as a chunk of this part alone runs them
  };
  Part fwd, input, weight, full;
};

void append(StageOps::Part& p, size_t rank, const std::string& prefix, const LayerOp& o, int unit) {
  if (p.per_rank.size() <= rank) p.per_rank.resize(rank + 1);
  p.per_rank[rank].push_back(o);
  if (rank == 0) {
    p.labels.push_back(prefix + o.name);
    p.unit.push_back(unit);
  }
}

StageOps stage_ops(const ModelWorkload& mw, const std::vector<int>& split, int stage, const std::vector<LayerContext>& ctx) {
  StageOps s;
  for (size_t r = 0; r < ctx.size(); ++r) {
    const std::vector<UnitOps> units = stage_units(mw.model, split, stage, ctx[r]);
    for (size_t u = 0; u < units.size(); ++u)
      for (const LayerOp& o : units[u].fwd) append(s.fwd, r, units[u].prefix, o, static_cast<int>(u));
    // Backward runs the units in reverse; its unit numbers count from the last unit.
    for (size_t k = 0; k < units.size(); ++k) {
      const UnitOps& unit = units[units.size() - 1 - k];
      for (const LayerOp& o : unit.bwd) {
        append(s.full, r, unit.prefix, o, static_cast<int>(k));
        append(o.pass == Pass::kBackwardWeight ? s.weight : s.input, r, unit.prefix, o, static_cast<int>(k));
      }
    }
  }
  for (StageOps::Part* p : {&s.fwd, &s.input, &s.weight, &s.full})
    for (size_t i = 0; i < p->labels.size(); ++i) p->order.push_back(ChunkOp{p->labels[i], i, 0});
  return s;
}

// Where an op of a backward unit goes in an overlapped pair (DeepSeek-V3 sec. 3.2.1, Figure 4):
// 0 the combine's backward, 1 the MLP backward for input, 2 the dispatch's backward, 3 the
// attention backward for input, 4 the MLP's weight gradients, 5 the attention's, 6 the
// recomputation.
int backward_phase(const LayerOp& o) {
  if (o.pass == Pass::kBackwardWeight) return o.block == Block::kMlp ? 4 : 5;
  if (o.recompute) return 6;
  if (o.block == Block::kCombine) return 0;
  if (o.block == Block::kMlp) return 1;
  if (o.block == Block::kDispatch) return 2;
  return 3;
}
// Forward: 0 attention (and gating), 1 the dispatch, 2 the MLP, 3 the combine's all-to-all, 4 what
// consumes it (the residual add).
int forward_phase(const LayerOp& o) {
  switch (o.block) {
    case Block::kDispatch: return 1;
    case Block::kMlp: return 2;
    case Block::kCombine:
      return o.kind == LayerOpKind::kComm ? 3 : 4;
    default: return 0;
  }
}

// An overlapped pair: unit k of the forward beside unit k of the backward, their components
// interleaved as DeepSeek-V3's Figure 4 draws them, so that each chunk's all-to-alls run while the
// other computes (computation: ATTN(F), MLP(B), MLP(W), MLP(F), ATTN(B), ATTN(W); communication:
// DISPATCH(F) under MLP(B), DISPATCH(B) under MLP(W) and MLP(F), COMBINE(F) under ATTN(B), the
// next unit's COMBINE(B) under ATTN(W) and the next ATTN(F)):
//   B: recomputation | F: attention | F: dispatch | B: MLP(B) | B: dispatch(B) | B: MLP(W) |
//   F: MLP | F: combine | B: attention(B) | B: the next unit's combine(B) | F: the combine's
//   residual | B: ATTN(W)
// (the first unit's combine(B) opens the pair). The forward's residual waits for its combine;
// placed before ATTN(B), it would hold the compute stream idle for the whole combine. MindSpeed's
// fb_overlap, an open implementation of this overlap, runs its layers in this order
// (transformer_layer_forward_moe_backward_moe_overlaping), but the shared expert's weight
// gradients with the attention's.
std::vector<ChunkOp> pair_order(const StageOps::Part& f, const StageOps::Part& b, size_t b_offset) {
  std::vector<ChunkOp> out;
  const auto& fo = f.per_rank[0];
  const auto& bo = b.per_rank[0];
  const int units = std::max(f.unit.empty() ? 0 : f.unit.back() + 1, b.unit.empty() ? 0 : b.unit.back() + 1);
  const auto take_f = [&](int unit, int phase) {
    for (size_t i = 0; i < fo.size(); ++i)
      if (f.unit[i] == unit && forward_phase(fo[i]) == phase) out.push_back(ChunkOp{f.labels[i], i, 0});
  };
  const auto take_b = [&](int unit, int phase) {
    for (size_t i = 0; i < bo.size(); ++i)
      if (b.unit[i] == unit && backward_phase(bo[i]) == phase) out.push_back(ChunkOp{b.labels[i], b_offset + i, 1});
  };
  take_b(0, 0);
  for (int u = 0; u < units; ++u) {
    take_b(u, 6);
    take_f(u, 0);
    take_f(u, 1);
    take_b(u, 1);
    take_b(u, 2);
    take_b(u, 4);
    take_f(u, 2);
    take_f(u, 3);
    take_b(u, 3);
    if (u + 1 < units) take_b(u + 1, 0);
    take_f(u, 4);
    take_b(u, 5);
  }
  return out;
}


std::vector<std::vector<LayerOp>> joined(const StageOps::Part& a, const StageOps::Part& b) {
  std::vector<std::vector<LayerOp>> out(std::max(a.per_rank.size(), b.per_rank.size()));
  for (size_t r = 0; r < out.size(); ++r) {
    out[r] = a.per_rank[std::min(r, a.per_rank.size() - 1)];
    const auto& tail = b.per_rank[std::min(r, b.per_rank.size() - 1)];
    out[r].insert(out[r].end(), tail.begin(), tail.end());
  }
  return out;
}

}  // namespace

OpWorkload build_pipeline_workload(const ModelWorkload& mw, const ClusterConfig& cl) {
  const ParallelLayout& L = mw.layout;
  const PipelineSchedule sched = make_schedule(*mw.pipeline);
  const std::vector<int> split = workload_stage_layers(mw);

  // Contexts per EP rank: expert rows differ only when routing is skewed.
  const int gpn = gpus_per_node(cl);
  const std::optional<MoeRoutingSetup> setup = workload_routing(mw, gpn);
  std::vector<LayerContext> ctx{workload_context(mw)};
  if (setup && mw.zipf_exponent > 0) {
    const RoutingStats st = routing_stats(*setup);
    ctx.assign(L.ep, ctx.front());
    for (int r = 0; r < L.ep; ++r) ctx[r].expert_rows = st.rows_per_token[r] * static_cast<double>(ctx[r].tokens) * L.ep;
  }
  std::map<int, StageOps> ops_of;
  const auto stage = [&](int s) -> const StageOps& {
    auto it = ops_of.find(s);
    if (it == ops_of.end()) it = ops_of.emplace(s, stage_ops(mw, split, s, ctx)).first;
    return it->second;
  };
  // An overlapped pair's op lists and order depend only on its two stages, which repeat for
  // every micro-batch: built at the pair's first chunk. std::map keeps them in place while the
  // emitters refer to them.
  struct PairOps {
    std::vector<std::vector<LayerOp>> ops;
    std::vector<ChunkOp> order;
  };
  std::map<std::pair<int, int>, PairOps> pairs;
  const auto pair = [&](int fwd_stage, int bwd_stage) -> const PairOps& {
    auto it = pairs.find({fwd_stage, bwd_stage});
    if (it == pairs.end()) {
      const StageOps& f = stage(fwd_stage);
      const StageOps& b = stage(bwd_stage);
      it = pairs.emplace(std::pair{fwd_stage, bwd_stage},
                         PairOps{joined(f.fwd, b.full), pair_order(f.fwd, b.full, f.fwd.per_rank[0].size())})
               .first;
    }
    return it->second;
  };

  OpWorkload w;
  // Stage-boundary sends get their own streams on the communication partition, one per GPU, peer
  // and direction (as NCCL runs point-to-point operations to different peers on separate
  // channels). A send is issued when its consumer's chunk is emitted (under a rendezvous, below,
  // when the first of its two sides passes the batch that posts it): on a GPU's
  // comm stream it would queue behind later chunks' all-to-alls, and on one shared send stream
  // behind sends to other consumers emitted earlier but produced later, waiting for nothing it
  // needs.
  // By the copy engine (pipeline.p2p), the send streams only order their copies: they stay on that
  // partition, but no SM of it is held (results give such a stream's mover as copy_engine).
  const int comm_part = mw.comm_kernel_partition(cl);
  w.stream_names = {"compute", "comm", "pp_p2p"};
  w.stream_partitions = {cl.partitions[mw.compute_partition].name, cl.partitions[comm_part].name,
                         cl.partitions[comm_part].name};
  w.engine_streams.resize(3);
  // (producer GPU, consumer GPU, pass) -> its send stream, created at its first send.
  std::map<std::tuple<int, int, int>, sim::StreamId> p2p;
  const int dp_simulated = mw.simulated_dp();
  std::vector<StageEmitter> emitters;
  emitters.reserve(sched.ranks);
  std::vector<std::vector<int>> rank_gpus(sched.ranks);
  std::vector<RankStreams> rank_streams(sched.ranks);
  PipelineRecord rec;
  rec.schedule = schedule_kind_name(sched.params.kind);
  rec.ranks = sched.ranks;
  rec.streams.resize(sched.ranks);
  for (int r = 0; r < sched.ranks; ++r) {
    RankStreams& rs = rank_streams[r];
    for (int dp = 0; dp < dp_simulated; ++dp)
      for (int tp = 0; tp < L.tp; ++tp) {
        const int gpu = gpu_of(L, tp, dp, r);
        rank_gpus[r].push_back(gpu);
        rs.gpus.push_back(gpu);
        rs.compute.push_back(w.graph.add_stream(gpu, mw.compute_partition, "compute"));
        rs.comm.push_back(w.graph.add_stream(gpu, comm_part, "comm"));
        w.engine_streams[0].push_back(rs.compute.back().v);
        w.engine_streams[1].push_back(rs.comm.back().v);
        rec.streams[r].push_back(rs.compute.back().v);
        rec.streams[r].push_back(rs.comm.back().v);
      }
    emitters.emplace_back(w.graph, mw, cl, rank_gpus[r], rs.compute, rs.comm);
  }

  // What each emitted pass left on its rank's GPUs: the last op per GPU.
  struct Produced {
    int rank = 0;
    std::vector<sim::OpId> last;
  };
  std::map<PassRef, Produced> produced;
  const double boundary_bytes = static_cast<double>(ctx.front().tokens) * mw.model.hidden * 2;  // BF16
  // DualPipe's, DualPipeV's and 1F1B's sends are rendezvous where NCCL's kernels move them
  // (models/pipeline_rendezvous.h); the rest leave when their data is ready.
  PipelineRendezvous rendezvous(sched, mw.pipeline_p2p == sim::Mover::kSms);
  const auto record_heads = [&](int r) {
    if (!rendezvous.active()) return;
    std::vector<std::vector<sim::OpId>> last_ops(rank_gpus[r].size());
    for (size_t i = 0; i < last_ops.size(); ++i)
      for (const sim::StreamId st : {rank_streams[r].compute[i], rank_streams[r].comm[i]})
        if (const auto& ops = w.graph.streams()[st.v].ops; !ops.empty()) last_ops[i].push_back(sim::OpId{ops.back()});
    rendezvous.record_heads(r, std::move(last_ops));
  };
  for (int r = 0; r < sched.ranks; ++r) record_heads(r);
  // (pass, GPU index) -> the send that carries it to its consumer, made once.
  std::map<std::pair<PassRef, size_t>, sim::OpId> sent;
  StandInImages images(mw, cl);
  const auto send = [&](const PassRef& pass, size_t i, int consumer) -> sim::OpId {
    if (const auto it = sent.find({pass, i}); it != sent.end()) return it->second;
    const Produced& p = produced.at(pass);
    const int src = rank_gpus[p.rank][i], dst = rank_gpus[consumer][i];
    auto it = p2p.find({src, dst, static_cast<int>(pass.pass)});
    if (it == p2p.end()) {
      it = p2p.emplace(std::make_tuple(src, dst, static_cast<int>(pass.pass)),
                       w.graph.add_stream(src, comm_part,
                                          "pp_p2p to gpu " + std::to_string(dst) +
                                              (pass.pass == ChunkPass::kForward ? ", activations" : ", gradients")))
               .first;
      w.engine_streams[2].push_back(it->second.v);
    }
    // Folded or mirrored: it stands for the same send of every replica the GPU stands in for.
    const sim::OpId op = w.graph.add_send(
        it->second, dst, boundary_bytes, pass.pass == ChunkPass::kForward ? "pp.send_activation" : "pp.send_gradient",
        mw.pipeline_p2p, images.of(w.graph, StandInImages::Role::kSameReplica, src, dst));
    w.graph.add_dep(op, p.last[i]);
    for (const sim::OpId head : rendezvous.posted_after(pass, i)) w.graph.add_dep(op, head);
    for (const PassRef& earlier : rendezvous.posted_after_passes(pass)) w.graph.add_dep(op, sent.at({earlier, i}));
    return sent.emplace(std::pair{pass, i}, op).first->second;
  };
  const auto wait_for = [&](int r, int slot, const PassRef& need) {
    const Produced& p = produced.at(need);
    for (size_t i = 0; i < rank_gpus[r].size(); ++i)
      emitters[r].wait_for(slot, i, p.rank != r ? send(need, i, r) : p.last[i]);
  };
  // Per rank and GPU index, the transfers of the batches posted where the rank stands: what its
  // next task (every chunk slot of it, `slots`) or, after its last, its optimizer step waits for.
  std::vector<std::vector<std::vector<sim::OpId>>> batch_waits(sched.ranks);
  for (int r = 0; r < sched.ranks; ++r) batch_waits[r].resize(rank_gpus[r].size());
  const auto pass_batch = [&](int r) {
    const CommitBatch& b = *rendezvous.pending(r);
    for (const std::vector<PassRef>* list : {&b.sends, &b.recvs})
      for (const PassRef& p : *list)
        for (size_t i = 0; i < rank_gpus[r].size(); ++i)
          batch_waits[r][i].push_back(send(p, i, rendezvous.receiver(p)));
    rendezvous.pass(r);
  };
  const auto wait_for_batch = [&](int r, int slots) {
    for (size_t i = 0; i < rank_gpus[r].size(); ++i) {
      for (const sim::OpId op : batch_waits[r][i])
        for (int slot = 0; slot < slots; ++slot) emitters[r].wait_for(slot, i, op);
      batch_waits[r][i].clear();
    }
  };
  // `input_only`: the pass's data is its last op that is no weight gradient.
  const auto record = [&](int r, int slot, const std::vector<PassRef>& passes, bool input_only = false) {
    Produced p{r, {}};
    for (size_t i = 0; i < rank_gpus[r].size(); ++i) {
      const std::optional<sim::OpId> last = input_only ? emitters[r].last_input(slot, i) : emitters[r].last(slot, i);
      if (!last) throw std::logic_error("a pipeline chunk emitted no op");
      p.last.push_back(*last);
    }
    for (const PassRef& pass : passes) produced[pass] = p;
  };
  const auto emit = [&](int r, const ChunkTask& t) {
    StageEmitter& e = emitters[r];
    e.reset(0);
    e.reset(1);
    const StageOps& f = stage(t.chunk.stage);
    wait_for_batch(r, t.kind == ChunkTask::kForwardBackward ? 2 : 1);
    if (t.kind == ChunkTask::kForwardBackward) {
      const PairOps& both = pair(t.chunk.stage, t.bwd.stage);
      for (const PassRef& need : task_needs(sched, ChunkTask{ChunkTask::kForward, t.chunk, {}})) wait_for(r, 0, need);
      for (const PassRef& need : task_needs(sched, ChunkTask{ChunkTask::kBackward, t.bwd, {}})) wait_for(r, 1, need);
      e.set_ops(both.ops);
      e.emit(both.order);
      record(r, 0, task_provides(ChunkTask{ChunkTask::kForward, t.chunk, {}}));
      // The input gradient leaves once ATTN(B) made it; ATTN(W) runs under its send (Figure 4's PP).
      record(r, 1, task_provides(ChunkTask{ChunkTask::kBackward, t.bwd, {}}), true);
      return;
    }
    for (const PassRef& need : task_needs(sched, t)) wait_for(r, 0, need);
    const StageOps::Part& part = t.kind == ChunkTask::kForward          ? f.fwd
                                 : t.kind == ChunkTask::kBackward       ? f.full
                                 : t.kind == ChunkTask::kBackwardInput  ? f.input
                                                                        : f.weight;
    e.set_ops(part.per_rank);
    e.emit(part.order);
    record(r, 0, task_provides(t));
  };

  // Emit in an order that respects every dependency: each round, every rank runs as far as its
  // needs are met, passing each batch posted where it stands once the other sides reached theirs
  // (the schedule is deadlock-free, so each round makes progress).
  std::vector<size_t> next(sched.ranks, 0);
  const auto is_produced = [&](const PassRef& p) { return produced.count(p) > 0; };
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < sched.ranks; ++r)
      while (true) {
        while (rendezvous.pending_ready(r, is_produced)) {
          pass_batch(r);
          progress = true;
        }
        if (rendezvous.pending(r) || next[r] == sched.per_rank[r].size()) break;
        const ChunkTask& t = sched.per_rank[r][next[r]];
        std::vector<PassRef> needs = task_needs(sched, t);
        if (!std::all_of(needs.begin(), needs.end(), is_produced)) break;
        const auto first = static_cast<uint32_t>(w.graph.ops().size());
        emit(r, t);
        record_heads(r);
        rec.spans.push_back(ChunkSpan{r, t.kind, first, static_cast<uint32_t>(w.graph.ops().size())});
        ++next[r];
        progress = true;
      }
  }
  for (int r = 0; r < sched.ranks; ++r) {
    if (next[r] != sched.per_rank[r].size() || !rendezvous.all_passed(r))
      throw std::logic_error("pipeline schedule left rank " + std::to_string(r) +
                             " with tasks whose inputs never came");
    rank_streams[r].after = std::move(batch_waits[r]);  // the batches after its last task
  }
  rec.optimizer = emit_optimizer_step(w.graph, mw, cl, rank_streams);
  w.graph.shrink_to_fit();
  w.op_pos.assign(w.graph.ops().size(), mw.pos);
  w.pipeline = std::move(rec);
  w.stand_in = stand_in_gpus(mw, cl);
  return w;
}

}  // namespace cs::models
