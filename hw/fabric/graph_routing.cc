#include "hw/fabric/graph_routing.h"

#include <stdexcept>

namespace cs::hw {

void GraphRouting::route(int src, int dst, std::vector<sim::LinkId>& out) const {
  auto it = cache_.find({src, dst});
  if (it == cache_.end()) {
    const std::vector<FabricVertexId> path = bfs_path(f_.graph, f_.gpu[src], f_.gpu[dst]);
    if (path.empty()) throw std::logic_error("the fabric graph has no path between two of its GPUs");
    std::vector<sim::LinkId> links;
    for (size_t i = 1; i < path.size(); ++i) links.push_back(links_.link(path[i - 1], path[i]));
    it = cache_.emplace(std::make_pair(src, dst), std::move(links)).first;
  }
  out.insert(out.end(), it->second.begin(), it->second.end());
}

}  // namespace cs::hw
