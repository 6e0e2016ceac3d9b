#include "models/optimizer_step.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "models/memory_model.h"
#include "models/stand_in_images.h"

namespace cs::models {

namespace {

// AdamW's element-wise work per parameter as torch.optim.AdamW computes it: the two moment
// updates (3 + 4), bias corrections (2), sqrt and eps (2), the division (1), weight decay (2) and
// the step (2). It is HBM-bound by two orders of magnitude; the count only keeps it honest.
constexpr double kAdamwFlopsPerParam = 16;

// The successor of `gpu` in each ring that holds it, with the bytes it sends there and the place it
// holds in its node's block on that ring (see successor_at).
void ring_sends(const RingSet& rs, int gpu, double bytes_per_ring, std::vector<int>& dst, std::vector<double>& bytes,
                std::vector<size_t>& places) {
  for (const std::vector<int>& ring : rs.rings) {
    const auto it = std::find(ring.begin(), ring.end(), gpu);
    if (it == ring.end() || ring.size() < 2) continue;
    dst.push_back(*(std::next(it) == ring.end() ? ring.begin() : std::next(it)));
    bytes.push_back(bytes_per_ring);
    places.push_back(static_cast<size_t>(it - ring.begin()) % rs.rings.size());
  }
}

// The successor of `gpu` on the ring of `rs` where it holds place `place` of its node's block:
// data_parallel_rings' ring k lists each node's members from the k-th on, so a member holds each
// place on one ring, the last place being its hop to the next node (a single ring: place 0).
// -1 when it is on none.
int successor_at(const RingSet& rs, int gpu, size_t place) {
  for (const std::vector<int>& ring : rs.rings) {
    const auto it = std::find(ring.begin(), ring.end(), gpu);
    if (it == ring.end() || ring.size() < 2 || static_cast<size_t>(it - ring.begin()) % rs.rings.size() != place)
      continue;
    return *(std::next(it) == ring.end() ? ring.begin() : std::next(it));
  }
  return -1;
}

void ring_preds(const RingSet& rs, int gpu, std::vector<int>& out) {
  for (const std::vector<int>& ring : rs.rings) {
    const auto it = std::find(ring.begin(), ring.end(), gpu);
    if (it == ring.end() || ring.size() < 2) continue;
    out.push_back(it == ring.begin() ? ring.back() : *std::prev(it));
  }
}

}  // namespace

RingSet data_parallel_rings(const std::vector<int>& members, int gpn) {
  RingSet rs;
  if (members.empty()) return rs;
  std::vector<std::vector<int>> nodes;  // members by node, in order of first appearance
  std::map<int, size_t> node_index;
  for (int g : members) {
    const auto [it, fresh] = node_index.emplace(g / gpn, nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(g);
  }
  if (nodes.size() == 1) {
    rs.rings.push_back(members);
    return rs;
  }
  const size_t per_node = nodes.front().size();
  for (const auto& n : nodes)
    if (n.size() != per_node) throw std::logic_error("data-parallel group with unequal GPUs per node");
  for (size_t k = 0; k < per_node; ++k) {
    std::vector<int> ring;
    for (const auto& n : nodes)
      for (size_t j = 0; j < per_node; ++j) ring.push_back(n[(j + k) % per_node]);
    rs.rings.push_back(std::move(ring));
  }
  return rs;
}

std::vector<int> dense_dp_group(const ParallelLayout& l, int gpu, int gpn) {
  const RankCoords c = rank_coords(l, gpu, gpn);
  std::vector<int> out;
  for (int d = 0; d < l.replicas(); ++d) out.push_back(gpu_of(l, c.tp, d, c.pp));
  return out;
}

std::vector<int> expert_dp_group(const ParallelLayout& l, int gpu, int gpn) {
  const RankCoords c = rank_coords(l, gpu, gpn);
  std::vector<int> out;
  for (int e = 0; e < l.expert_dp(); ++e) out.push_back(gpu_of(l, c.tp, e * l.ep + c.ep, c.pp));
  return out;
}

std::vector<std::vector<uint32_t>> emit_optimizer_step(sim::OpGraph& g, const ModelWorkload& mw, const ClusterConfig& cl,
                                                       const std::vector<RankStreams>& ranks) {
  const ParallelLayout& l = mw.layout;
  const int gpn = gpus_per_node(cl);
  const bool zero = l.zero_stage >= 1;
  // DualPipe keeps two copies of every stage, on ranks r and pp-1-r (the same two stages on each):
  // their gradients are summed between the mirror GPUs before the update.
  const bool two_copies = mw.pipeline && mw.pipeline->kind == ScheduleKind::kDualPipe;

  struct PerGpu {
    int rank = 0;
    int gpu = 0;
    size_t local = 0;  // position among its rank's GPUs
    sim::StreamId compute, comm;
    RingSet dense, expert;
    std::vector<size_t> preds;  // ring predecessors that are simulated
    std::optional<size_t> mirror_gpu;
    std::vector<std::optional<sim::OpId>> ready;
    std::optional<sim::OpId> reduce, mirror, adam, gather;  // each the last of its kind on the GPU
    std::vector<sim::OpId> earlier;  // the dense group's reduction and gather, where the experts' follow
  };
  std::vector<PerGpu> st;
  std::map<int, size_t> index;  // simulated GPU -> position in `st`
  std::vector<RankParamCounts> params;
  std::vector<PrecisionRecipe> precision;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const MemoryInputs in = memory_inputs(mw, cl, static_cast<int>(r));
    params.push_back(rank_param_counts(in));
    precision.push_back(in.precision);
    for (size_t i = 0; i < ranks[r].gpus.size(); ++i) {
      index[ranks[r].gpus[i]] = st.size();
      PerGpu& s = st.emplace_back();
      s.rank = static_cast<int>(r);
      s.gpu = ranks[r].gpus[i];
      s.local = i;
      s.compute = ranks[r].compute[i];
      s.comm = ranks[r].comm[i];
    }
  }
  const auto last_op = [&](sim::StreamId s) -> std::optional<sim::OpId> {
    const auto& ops = g.streams()[s.v].ops;
    if (ops.empty()) return std::nullopt;
    return sim::OpId{ops.back()};
  };
  // Every member of a group shares its rings: build them once per group.
  std::map<std::vector<int>, RingSet> rings;
  const auto rings_of = [&](std::vector<int> group) -> const RingSet& {
    auto it = rings.find(group);
    if (it == rings.end()) it = rings.emplace(group, data_parallel_rings(group, gpn)).first;
    return it->second;
  };
  for (PerGpu& s : st) {
    s.dense = rings_of(dense_dp_group(l, s.gpu, gpn));
    if (params[s.rank].expert > 0) s.expert = rings_of(expert_dp_group(l, s.gpu, gpn));
    std::vector<int> preds;
    ring_preds(s.dense, s.gpu, preds);
    ring_preds(s.expert, s.gpu, preds);
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    for (int q : preds)
      if (const auto it = index.find(q); it != index.end()) s.preds.push_back(it->second);
    if (two_copies) {
      const RankCoords c = rank_coords(l, s.gpu, gpn);
      if (const auto it = index.find(gpu_of(l, c.tp, c.dp, l.pp - 1 - c.pp)); it != index.end()) s.mirror_gpu = it->second;
    }
    s.ready = {last_op(s.compute), last_op(s.comm)};
    if (s.local < ranks[s.rank].after.size())
      for (const sim::OpId op : ranks[s.rank].after[s.local]) s.ready.push_back(op);
  }
  const auto wait_preds = [&](const PerGpu& s, sim::OpId op, std::optional<sim::OpId> PerGpu::*which) {
    for (size_t q : s.preds)
      if (const auto dep = st[q].*which) g.add_dep(op, *dep);
  };
  const auto group_size = [](const RingSet& rs) { return rs.rings.empty() ? 1.0 : double(rs.rings.front().size()); };
  // Bytes one GPU sends per ring: (n-1)/n of the ring's share, twice for an all-reduce.
  const auto share = [&](const RingSet& rs, double buffer, double passes) {
    const double n = group_size(rs);
    return n < 2 ? 0.0 : passes * (n - 1) / n * buffer / static_cast<double>(rs.rings.size());
  };
  // What a GPU updates: its shard under ZeRO-1, else everything.
  const auto owned = [&](const PerGpu& s) {
    const RankParamCounts& n = params[s.rank];
    return zero ? n.dense / group_size(s.dense) + n.expert / group_size(s.expert) : n.dense + n.expert;
  };

  // One put per group with anything to send, the dense group's first, on the GPU's communication
  // stream: the experts' collective runs once the dense one has ended. Each group is its own NCCL
  // communicator, and NCCL's user guide ("Using multiple NCCL communicators concurrently") has
  // operations on different communicators used at different epochs, one after the other: NCCL
  // kernels wait for their peers, so two communicators' kernels in flight at once can deadlock.
  // Megatron-Core reduces its dense bucket groups, then its expert ones, the same way.
  // Folded or mirrored: each ring step the GPU makes stands for the same step of the GPUs it stands
  // in for, on their own groups' rings (the same ring's for the dense group, since they share it).
  StandInImages stand_in(mw, cl);
  const auto ring_images = [&](int gpu, const std::vector<size_t>& places, bool expert) {
    std::vector<uint32_t> out;
    if (!stand_in.active()) return out;
    for (const size_t place : places)
      out.push_back(stand_in.of(g, gpu, [&](int peer) {
        return successor_at(rings_of(expert ? expert_dp_group(l, peer, gpn) : dense_dp_group(l, peer, gpn)), peer,
                            place);
      }));
    return out;
  };
  const auto put_per_group = [&](PerGpu& s, double bytes_per_param, double passes, const char* dense_label,
                                 const char* expert_label, std::optional<sim::OpId>& last) {
    const std::pair<const RingSet*, double> groups[] = {{&s.dense, params[s.rank].dense},
                                                        {&s.expert, params[s.rank].expert}};
    std::vector<sim::OpId> ops;
    for (size_t k = 0; k < 2; ++k) {
      std::vector<int> dst;
      std::vector<double> bytes;
      std::vector<size_t> places;
      const RingSet& rs = *groups[k].first;
      ring_sends(rs, s.gpu, share(rs, groups[k].second * bytes_per_param, passes), dst, bytes, places);
      if (dst.empty()) continue;
      if (last) s.earlier.push_back(*last);
      last = g.add_put(s.comm, dst, bytes, k == 0 ? dense_label : expert_label, 0, ring_images(s.gpu, places, k == 1));
      ops.push_back(*last);
    }
    return ops;
  };

  // 1. Gradients: reduce-scatter (ZeRO-1) or all-reduce (ZeRO-0) over each group.
  for (PerGpu& s : st) {
    const double grad = precision[s.rank].grad_bytes;
    const auto ops =
        put_per_group(s, grad, zero ? 1 : 2, zero ? "optimizer.reduce_scatter_grads" : "optimizer.all_reduce_grads",
                      zero ? "optimizer.reduce_scatter_expert_grads" : "optimizer.all_reduce_expert_grads", s.reduce);
    // A ring starts once every member has joined: the first put waits for the GPU's own work and
    // its simulated ring predecessors'; the experts' put, behind it on the stream, with it.
    if (ops.empty()) continue;
    for (const auto& r : s.ready)
      if (r) g.add_dep(ops.front(), *r);
    for (size_t q : s.preds)
      for (const auto& r : st[q].ready)
        if (r) g.add_dep(ops.front(), *r);
  }
  // 2. DualPipe: the reduced gradients summed with the mirror copy's.
  for (PerGpu& s : st) {
    if (!two_copies) break;
    const RankCoords c = rank_coords(l, s.gpu, gpn);
    const int mirror = gpu_of(l, c.tp, c.dp, l.pp - 1 - c.pp);
    std::vector<uint32_t> images;  // the same replicas' mirrors
    if (stand_in.active()) images = {stand_in.of(g, StandInImages::Role::kSameReplica, s.gpu, mirror)};
    s.mirror = g.add_put(s.comm, {mirror}, {owned(s) * precision[s.rank].grad_bytes}, "optimizer.sum_dualpipe_copies",
                         0, images);
    for (const auto& r : s.ready)
      if (r) g.add_dep(*s.mirror, *r);
    wait_preds(s, *s.mirror, &PerGpu::reduce);
  }
  // 3. AdamW on what this GPU owns: read the gradient, read and write master weights and both
  //    moments, write the working weights. It waits for what its peers put into it.
  for (PerGpu& s : st) {
    const PrecisionRecipe& p = precision[s.rank];
    const double n = owned(s), bytes_per_param = p.grad_bytes + 2 * p.master_bytes + 2 * p.moment_bytes + p.weight_bytes;
    s.adam = g.add_compute(s.compute, sim::GenericCompute{n * kAdamwFlopsPerParam, n * bytes_per_param, sim::DType::kFp32},
                           "optimizer.adamw");
    for (const auto* dep : {&s.reduce, &s.mirror})
      if (*dep) g.add_dep(*s.adam, **dep);
    // With nothing to reduce (one replica), the update still waits for everything before it.
    if (!s.reduce)
      for (const auto& r : s.ready)
        if (r) g.add_dep(*s.adam, *r);
    wait_preds(s, *s.adam, &PerGpu::reduce);
    if (s.mirror_gpu && st[*s.mirror_gpu].mirror) g.add_dep(*s.adam, *st[*s.mirror_gpu].mirror);
  }
  // 4. ZeRO-1: every GPU gathers the updated working weights of the others' shards, a group at a
  //    time as the reduction.
  for (PerGpu& s : st) {
    if (!zero) break;
    const auto ops = put_per_group(s, precision[s.rank].weight_bytes, 1, "optimizer.all_gather_weights",
                                   "optimizer.all_gather_expert_weights", s.gather);
    if (ops.empty()) continue;
    g.add_dep(ops.front(), *s.adam);  // the experts' gather waits behind it on the stream
    wait_preds(s, ops.front(), &PerGpu::adam);
  }
  std::vector<std::vector<uint32_t>> out(ranks.size());
  for (const PerGpu& s : st) {
    for (const auto* op : {&s.reduce, &s.mirror, &s.adam, &s.gather})
      if (*op) out[s.rank].push_back((*op)->v);
    for (const sim::OpId op : s.earlier) out[s.rank].push_back(op.v);
  }
  for (auto& ops : out) std::sort(ops.begin(), ops.end());
  return out;
}

}  // namespace cs::models
