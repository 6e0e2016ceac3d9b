// Routes for a run that simulates some GPUs on behalf of others (folded and mirrored fidelity):
// every link a GPU owns (sim::Routing::own_links) becomes the same-kind link of the GPU standing
// in for it, and so does its HBM. A simulated GPU's transfers to an unsimulated peer then load the
// simulated GPU's own ingress links and HBM, which is where its peers' transfers to it land when
// every GPU runs: each GPU of a class runs the same ops at the same times, so what one GPU's
// ingress takes from all its peers is what any one of them sends to all of its own. A path that
// crosses two links of one kind crosses the stand-in's link twice, and the flow counts twice in
// that link's fair share, as two copies of it would: a put into the sender's own peer reads and
// writes the same HBM. Links shared between GPUs (switch ports) stay as they are, and a put's images
// (sim::OpGraph::add_images) load them as the transfers it stands for would: a switch link that
// k of them cross carries the put's flow k times, which then gets the share of it that each of
// those transfers would get when every GPU runs.
#pragma once

#include <vector>

#include "sim/routing.h"

namespace cs::sim {

class StandInRouting : public Routing {
 public:
  // `stand_in[g]`: the GPU whose links stand in for GPU g's (g itself when simulated). The base
  // routing and its network's links must outlive this object.
  StandInRouting(const Routing& base, const FlowNetwork& net, std::vector<int> stand_in);

  int gpu_count() const override { return base_.gpu_count(); }
  LinkId hbm(int gpu) const override { return base_.hbm(stand_in_[gpu]); }
  void route(int src, int dst, std::vector<LinkId>& out) const override;
  std::vector<KindedLink> gpu_links(int gpu) const override { return base_.gpu_links(gpu); }
  std::vector<KindedLink> own_links(int gpu) const override { return base_.own_links(gpu); }
  int stand_in(int gpu) const override { return stand_in_[gpu]; }
  void image_links(int src, int dst, std::span<const GpuPair> images, std::vector<LinkId>& out) const override;

 private:
  const Routing& base_;
  std::vector<int> stand_in_;
  std::vector<LinkId> link_as_;  // per base link: the link that stands in for it
  std::vector<bool> owned_;      // per base link: some GPU's own (sim::Routing::own_links)
};

}  // namespace cs::sim
