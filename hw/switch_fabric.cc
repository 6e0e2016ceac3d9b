#include "hw/switch_fabric.h"

#include <cassert>
#include <string>

namespace cs::hw {

SwitchFabric::SwitchFabric(sim::FlowNetwork& net, const SwitchFabricSpec& spec) {
  for (int g = 0; g < spec.gpus; ++g) {
    const std::string gpu = "gpu" + std::to_string(g);
    hbm_.push_back(net.add_link(gpu + ".hbm", spec.hbm_bw, sim::Time()));
    up_.push_back(net.add_link(gpu + "->switch", spec.link_bw, spec.link_lat));
    down_.push_back(net.add_link("switch->" + gpu, spec.link_bw, sim::Time()));
  }
}

void SwitchFabric::route(int src, int dst, std::vector<sim::LinkId>& out) const {
  assert(src != dst);
  out.push_back(up_[src]);
  out.push_back(down_[dst]);
}

std::vector<sim::Routing::KindedLink> SwitchFabric::gpu_links(int gpu) const {
  return {{"HBM", hbm_[gpu]}, {"switch out", up_[gpu]}, {"switch in", down_[gpu]}};
}

}  // namespace cs::hw
