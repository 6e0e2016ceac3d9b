#include "models/stand_in_images.h"

#include <algorithm>

#include "models/parallel_layout.h"

namespace cs::models {

StandInImages::StandInImages(const ModelWorkload& mw, const ClusterConfig& c)
    : mw_(mw), gpn_(gpus_per_node(c)), simulated_(mw.simulated_dp()) {}

std::vector<int> StandInImages::stood_for(int gpu) const {
  // stand_in_gpus: replica dp stands in for every replica congruent to it mod simulated_dp().
  const ParallelLayout& l = mw_.layout;
  const RankCoords rc = rank_coords(l, gpu, gpn_);
  std::vector<int> out;
  for (int dp = rc.dp; dp < l.replicas(); dp += simulated_) out.push_back(gpu_of(l, rc.tp, dp, rc.pp));
  return out;
}

uint32_t StandInImages::of(sim::OpGraph& g, int src, const std::function<int(int)>& peer) const {
  if (!active()) return sim::OpGraph::kNoImages;
  std::vector<sim::GpuPair> pairs;
  for (const int gpu : stood_for(src)) pairs.push_back({gpu, peer(gpu)});
  return g.add_images(std::move(pairs));
}

uint32_t StandInImages::of(sim::OpGraph& g, Role role, int src, int dst) {
  if (!active()) return sim::OpGraph::kNoImages;
  const auto [it, fresh] = known_.try_emplace({role, src, dst}, sim::OpGraph::kNoImages);
  if (!fresh) return it->second;
  const ParallelLayout& l = mw_.layout;
  const RankCoords s = rank_coords(l, src, gpn_), d = rank_coords(l, dst, gpn_);
  it->second = of(g, src, [&](int gpu) {
    const RankCoords a = rank_coords(l, gpu, gpn_);
    switch (role) {
      case Role::kSameReplica:
        return gpu_of(l, a.tp, a.dp, d.pp);
      case Role::kEpOffset:
        return gpu_of(l, a.tp, a.edp * l.ep + peer_rank(a.ep, s.ep, d.ep, l.ep), d.pp);
      case Role::kCpOffset:
        return gpu_of(l, a.tp, a.dp - a.cp + peer_rank(a.cp, s.cp, d.cp, l.cp), d.pp);
    }
    return dst;
  });
  return it->second;
}

void StandInImages::relabel(sim::OpGraph& g, sim::OpId op, const std::vector<int>& gpus) {
  if (!active()) return;
  auto it = relabelings_.find(gpus);
  if (it == relabelings_.end()) {
    std::vector<std::vector<int>> r;
    for (const int gpu : gpus) {
      const std::vector<int> members = stood_for(gpu);
      r.resize(members.size() - 1);
      for (size_t k = 1; k < members.size(); ++k) r[k - 1].push_back(members[k]);
    }
    it = relabelings_.emplace(gpus, std::move(r)).first;
  }
  g.set_image_relabelings(op, it->second);
}

int StandInImages::peer_rank(int rank, int src_rank, int dst_rank, int group) const {
  // A group's ranks fill its nodes in order (rank_coords: consecutive replicas, consecutive GPUs).
  // A group within a node is symmetric under rotation; one over several nodes under moving to
  // another node and rotating within the node, which keeps a hop within a node or across nodes
  // what it is (plain rotation would turn a node's last GPU's hop to the next node into its own
  // node's first GPU's hop for the others).
  const int per_node = std::max(1, gpn_ / mw_.layout.tp);
  if (group <= per_node || group % per_node != 0) return (rank + dst_rank - src_rank + group) % group;
  const int nodes = group / per_node;
  const int node = (rank / per_node + dst_rank / per_node - src_rank / per_node + nodes) % nodes;
  return node * per_node + (rank % per_node + dst_rank % per_node - src_rank % per_node + per_node) % per_node;
}

}  // namespace cs::models
