#include "sim/stand_in_routing.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace cs::sim {

StandInRouting::StandInRouting(const Routing& base, const FlowNetwork& net, std::vector<int> stand_in)
    : base_(base), stand_in_(std::move(stand_in)) {
  const int n = base_.gpu_count();
  if (static_cast<int>(stand_in_.size()) != n) throw std::invalid_argument("stand-in map: one entry per GPU");
  link_as_.resize(net.link_slots());
  for (uint32_t l = 0; l < link_as_.size(); ++l) link_as_[l] = LinkId{l};
  owned_.assign(net.link_slots(), false);
  for (int g = 0; g < n; ++g)
    for (const KindedLink& k : base_.own_links(g))
      if (k.link.v < owned_.size()) owned_[k.link.v] = true;
  for (int g = 0; g < n; ++g) {
    const int s = stand_in_[g];
    if (s < 0 || s >= n) throw std::invalid_argument("stand-in map: GPU " + std::to_string(s) + " out of range");
    // A stand-in is simulated, so it stands for itself; else its peers' bytes would land on the
    // links of a GPU that runs nothing.
    if (stand_in_[s] != s)
      throw std::invalid_argument("stand-in map: GPU " + std::to_string(s) + " stands in for GPU " + std::to_string(g) +
                                  " but not for itself");
    if (s == g) continue;
    const std::vector<KindedLink> mine = base_.own_links(g), theirs = base_.own_links(s);
    for (const KindedLink& k : mine)
      for (const KindedLink& t : theirs)
        if (t.kind == k.kind) link_as_[k.link.v] = t.link;
  }
}

void StandInRouting::route(int src, int dst, std::vector<LinkId>& out) const {
  const size_t first = out.size();
  base_.route(src, dst, out);
  for (size_t i = first; i < out.size(); ++i)
    if (out[i].v < link_as_.size()) out[i] = link_as_[out[i].v];
}

void StandInRouting::image_links(int src, int dst, std::span<const GpuPair> images, std::vector<LinkId>& out) const {
  bool own_route = false;  // the transfer itself: its route is the caller's
  std::vector<LinkId> route;
  for (const GpuPair& p : images) {
    if (!own_route && p.src == src && p.dst == dst) {
      own_route = true;
      continue;
    }
    if (p.src == p.dst) continue;  // a local copy crosses no switch
    route.clear();
    base_.route(p.src, p.dst, route);
    for (const LinkId l : route)
      if (l.v >= owned_.size() || !owned_[l.v]) out.push_back(l);
  }
}

}  // namespace cs::sim
