// The smallest real topology: N GPUs on one non-blocking switch (an NVSwitch node). Each GPU has
// an up-link and a down-link to the switch at its per-direction bandwidth, and its HBM as a
// shared link. A GPU-to-GPU route is {up(src), down(dst)}; the one-way latency sits on the up-link.
#pragma once

#include <vector>

#include "sim/flow_network.h"
#include "sim/routing.h"

namespace cs::hw {

struct SwitchFabricSpec {
  int gpus = 0;
  sim::Bandwidth link_bw;   // per direction, per GPU
  sim::Time link_lat;       // GPU to GPU through the switch
  sim::Bandwidth hbm_bw;
};

class SwitchFabric : public sim::Routing {
 public:
  SwitchFabric(sim::FlowNetwork& net, const SwitchFabricSpec& spec);
  int gpu_count() const override { return static_cast<int>(hbm_.size()); }
  sim::LinkId hbm(int gpu) const override { return hbm_[gpu]; }
  void route(int src, int dst, std::vector<sim::LinkId>& out) const override;
  // HBM, and the up- and down-link as "switch out" and "switch in".
  std::vector<KindedLink> gpu_links(int gpu) const override;
  sim::LinkId up(int gpu) const { return up_[gpu]; }
  sim::LinkId down(int gpu) const { return down_[gpu]; }

 private:
  std::vector<sim::LinkId> hbm_, up_, down_;
};

}  // namespace cs::hw
