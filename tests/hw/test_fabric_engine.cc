// All-to-alls over built fabrics, run through the engine with the H800 datasheet roofline.
#include <catch2/catch.hpp>

#include "hw/fabric/fabric_routing.h"
#include "hw/catalog.h"
#include "hw/gpu_catalog.h"
#include "hw/roofline_cost.h"
#include "sim/executor.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::hw;
using cs::sim::Time;

namespace {

struct A2A {
  double seconds;
  double ib_bytes_per_gpu;
};

// One all-to-all of `bytes` per GPU over every GPU of the fabric, on a 32-SM comm partition
// (32 x 7.65 = 245 GB/s of copy rate: above NVLink's 200, so the fabric is what binds).
A2A all_to_all(int nodes, int radix, int over, double bytes, FabricKind kind = FabricKind::kMultiPlane) {
  const GpuSpec& h800 = *find_gpu("h800");
  FabricSpec s;
  s.kind = kind;
  s.nodes = nodes;
  s.switch_radix = radix;
  s.oversubscription = over;
  s.nvlink_GBps = h800.nvlink_bw_GBps_per_direction;
  // The catalog's HGX node, ConnectX-7 and 64-port switch (each figure sourced there).
  s.pcie_GBps = find_node("hgx-8gpu")->pcie_bw_GBps_per_direction;
  s.nic_GBps = find_nic("cx7-400g")->bw_GBps_per_direction;
  s.hbm_GBps = h800.hbm_bw_GBps;
  s.nvlink_lat_ns = h800.nvlink_lat_ns;
  s.ib_base_lat_ns = find_switch("ib-64x400g")->base_lat_ns;
  s.ib_hop_lat_ns = find_switch("ib-64x400g")->hop_lat_ns;
  const BuiltFabric f = build_fabric(s);
  cs::sim::Engine engine;
  cs::sim::FlowNetwork net(engine);
  FabricRouting routing(net, f, PxnMode::kAtDestination);
  const RooflineCost cost(h800, RooflineParams{});
  std::vector<cs::sim::SmPool> pools(f.gpu.size(), cs::sim::SmPool(132, {{"compute", 100}, {"comm", 32}}));
  cs::sim::OpGraph g;
  std::vector<cs::sim::StreamId> streams;
  for (int gpu = 0; gpu < static_cast<int>(f.gpu.size()); ++gpu) streams.push_back(g.add_stream(gpu, 1, "a2a"));
  g.add_collective(cs::sim::CollectiveKind::kAllToAll, bytes, streams, "a2a");
  cs::sim::Executor exec(engine, net, routing, cost, pools, g);
  const auto r = exec.run();
  REQUIRE(r.stuck_ops.empty());
  const double n = static_cast<double>(f.gpu.size());
  return {r.makespan.to_seconds(), bytes * (n - 8) / n};
}

}  // namespace

TEST_CASE("an all-to-all inside one H800 node is bounded by NVLink", "[fabric][engine]") {
  const double S = 256.0 * (1 << 20);
  const A2A a = all_to_all(1, 64, 1, S);
  // Each GPU sends 7/8 of its buffer through its 200 GB/s NVLink port, after 3.33 us of latency.
  CHECK(a.seconds == Approx(7.0 / 8 * S / 200e9 + 3.33e-6).epsilon(1e-6));
}

TEST_CASE("across 2, 4 and 8 nodes the all-to-all is bounded by the NICs", "[fabric][engine]") {
  const double S = 256.0 * (1 << 20);
  for (int nodes : {2, 4, 8}) {
    const A2A a = all_to_all(nodes, 64, 1, S);
    const double per_gpu_GBps = a.ib_bytes_per_gpu / a.seconds * 1e-9;
    INFO(nodes << " nodes: " << per_gpu_GBps << " GB/s of InfiniBand traffic per GPU");
    // Near the 50 GB/s line rate (DeepEP's internode table: 43 to 58 GB/s per GPU on H800).
    CHECK(per_gpu_GBps <= 50.0);
    CHECK(per_gpu_GBps > 45.0);
  }
}

TEST_CASE("a 1:2 and a 1:4 oversubscribed fabric slow the all-to-all as their uplinks say", "[fabric][engine]") {
  // Radix 8: 4 nodes per leaf, so 8 nodes put half of every plane on each of 2 leaves.
  const double S = 64.0 * (1 << 20);
  const double t1 = all_to_all(8, 8, 1, S).seconds;
  const double t2 = all_to_all(8, 8, 2, S).seconds;
  const double t4 = all_to_all(8, 8, 4, S).seconds;
  CHECK(t2 > t1);
  CHECK(t4 > t2);
  // Cross-leaf bytes of one leaf in one plane: 4 NICs x (4 remote nodes x 8 GPUs) x S/64 each.
  // With 1:4 its single 50 GB/s uplink carries them all: that sets the time.
  const double cross = 4.0 * 32 * S / 64;
  CHECK(t4 == Approx(cross / 50e9).epsilon(0.02));
}

TEST_CASE("a 1:2 and a 1:4 oversubscribed three-layer fabric slow the all-to-all as their leaf uplinks say",
          "[fabric][engine]") {
  // Radix 8, 16 nodes: 4 nodes per leaf, 8 pods of 4 leaves, cores above. With PXN at the
  // destination every flow stays on its rail. A leaf's 4 NICs send to 12 nodes beyond it (8 GPUs
  // each, S/128 per pair) and to 3 nodes on it: 384 crossing flows, 3S bytes, through U = 4, 2 or 1
  // uplinks of 50 GB/s; the aggs are not oversubscribed.
  const double S = 32.0 * (1 << 20);
  const A2A a1 = all_to_all(16, 8, 1, S, FabricKind::kThreeLayer);
  const double t2 = all_to_all(16, 8, 2, S, FabricKind::kThreeLayer).seconds;
  const double t4 = all_to_all(16, 8, 4, S, FabricKind::kThreeLayer).seconds;
  // Full: NIC-bound (120 flows of S/128 per NIC at 50 GB/s), the 200 GB/s of uplinks not binding.
  const double per_gpu_GBps = a1.ib_bytes_per_gpu / a1.seconds * 1e-9;
  INFO("full three-layer: " << per_gpu_GBps << " GB/s of InfiniBand traffic per GPU");
  CHECK(per_gpu_GBps <= 50.0);
  CHECK(per_gpu_GBps > 45.0);
  CHECK(t2 > a1.seconds);
  CHECK(t4 > t2);
  CHECK(t2 == Approx(3 * S / 100e9).epsilon(0.02));
  CHECK(t4 == Approx(3 * S / 50e9).epsilon(0.02));
}

}  // namespace CS_TEST_FILE
