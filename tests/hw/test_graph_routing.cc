// Routing by Boost.Graph search agrees with the closed forms where paths are unique.
#include <catch2/catch.hpp>

#include "hw/fabric/graph_routing.h"
#include "hw/gpu_catalog.h"
#include "hw/roofline_cost.h"
#include "sim/executor.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::hw;

namespace {

// Every GPU sends 64 MiB to the GPU of the same local index on the other node, all at once.
double rail_sends_seconds(const BuiltFabric& f, const cs::sim::Routing& routing, cs::sim::Engine& engine,
                          cs::sim::FlowNetwork& net) {
  const RooflineCost cost(*find_gpu("h800"), RooflineParams{});
  std::vector<cs::sim::SmPool> pools(f.gpu.size(), cs::sim::SmPool(132, {{"comm", 32}}));
  cs::sim::OpGraph g;
  const int n = static_cast<int>(f.gpu.size());
  for (int gpu = 0; gpu < n; ++gpu) g.add_send(g.add_stream(gpu, 0, "p2p"), (gpu + 8) % n, 64.0 * (1 << 20), "send");
  cs::sim::Executor exec(engine, net, routing, cost, pools, g);
  const auto r = exec.run();
  REQUIRE(r.stuck_ops.empty());
  return r.makespan.to_seconds();
}

FabricSpec two_nodes_one_leaf() {
  FabricSpec s;
  s.kind = FabricKind::kMultiRail;  // one leaf per rail: a same-rail path is unique (NIC, leaf, NIC)
  s.nodes = 2;
  s.switch_radix = 64;
  s.nvlink_GBps = 200;
  s.pcie_GBps = 63;
  s.nic_GBps = 50;
  s.hbm_GBps = 3350;
  s.nvlink_lat_ns = 3330;
  s.ib_base_lat_ns = 2350;
  s.ib_hop_lat_ns = 450;
  return s;
}

}  // namespace

TEST_CASE("search routing gives the closed form's paths where they are unique", "[fabric]") {
  const BuiltFabric f = build_fabric(two_nodes_one_leaf());
  cs::sim::Engine e;
  cs::sim::FlowNetwork net(e);
  const FabricRouting closed(net, f, PxnMode::kNone);
  const GraphRouting search(f, closed);
  const int n = static_cast<int>(f.gpu.size());
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b || a % 8 != b % 8) continue;  // same rail: one path only
      std::vector<cs::sim::LinkId> x, y;
      closed.route(a, b, x);
      search.route(a, b, y);
      CHECK(x == y);
    }
}

TEST_CASE("rail-aligned sends routed by search take as long as by the closed form", "[fabric]") {
  const BuiltFabric f = build_fabric(two_nodes_one_leaf());
  double closed_s, search_s;
  {
    cs::sim::Engine e;
    cs::sim::FlowNetwork net(e);
    const FabricRouting closed(net, f, PxnMode::kNone);
    closed_s = rail_sends_seconds(f, closed, e, net);
  }
  {
    cs::sim::Engine e;
    cs::sim::FlowNetwork net(e);
    const FabricRouting links(net, f, PxnMode::kNone);
    const GraphRouting search(f, links);
    search_s = rail_sends_seconds(f, search, e, net);
  }
  CHECK(closed_s > 0);
  CHECK(search_s == Approx(closed_s).epsilon(1e-12));
}

}  // namespace CS_TEST_FILE
