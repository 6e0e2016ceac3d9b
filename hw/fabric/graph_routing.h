// Routing by search: the fewest-hop path between two GPUs found by breadth-first search over the
// fabric's Boost.Graph, for graphs without a closed form, and to cross-check the closed forms
// (fabric_routing.h). It routes over the engine links another router created from the same graph.
// Paths are searched once per GPU pair and kept.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "hw/fabric/fabric_routing.h"

namespace cs::hw {

class GraphRouting : public sim::Routing {
 public:
  // `links` supplies the engine link of each graph edge and the HBM links; both must outlive this.
  GraphRouting(const BuiltFabric& fabric, const FabricRouting& links) : f_(fabric), links_(links) {}
  int gpu_count() const override { return links_.gpu_count(); }
  sim::LinkId hbm(int gpu) const override { return links_.hbm(gpu); }
  void route(int src, int dst, std::vector<sim::LinkId>& out) const override;

 private:
  const BuiltFabric& f_;
  const FabricRouting& links_;
  mutable std::map<std::pair<int, int>, std::vector<sim::LinkId>> cache_;
};

}  // namespace cs::hw
