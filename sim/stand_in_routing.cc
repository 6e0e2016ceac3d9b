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

}  // namespace cs::sim
