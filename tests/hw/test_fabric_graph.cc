#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>

#include "hw/fabric/fabric_graph.h"

using namespace cs::hw;

namespace {

FabricSpec spec(FabricKind kind, int nodes, int radix = 64, int over = 1) {
  FabricSpec s;
  s.kind = kind;
  s.nodes = nodes;
  s.switch_radix = radix;
  s.oversubscription = over;
  s.nvlink_GBps = 160;
  s.pcie_GBps = 64;
  s.nic_GBps = 50;
  s.hbm_GBps = 3350;
  return s;
}

std::map<VertexKind, int> vertex_counts(const FabricGraph& g) {
  std::map<VertexKind, int> c;
  for (auto v : boost::make_iterator_range(boost::vertices(g))) ++c[g[v].kind];
  return c;
}

}  // namespace

TEST_CASE("DeepSeek's 2048-GPU fabric: 8 planes of two-layer trees of 64-port switches", "[fabric]") {
  const auto f = build_fabric(spec(FabricKind::kMultiPlane, 256));
  const auto& c = f.counts;
  CHECK(c.gpus == 2048);
  CHECK(c.trees == 8);
  CHECK(c.leaves_per_tree == 8);   // 256 NICs per plane / 32 per leaf
  CHECK(c.spines_per_tree == 4);   // 8 leaves x 32 uplinks / 64 ports
  CHECK(c.switch_links == 8 * 8 * 32);  // every leaf uplink is cabled
  CHECK(c.bisection_GBps == 8 * 128 * 50.0);  // full bisection: half of each plane's NICs
  auto vc = vertex_counts(f.graph);
  CHECK(vc[VertexKind::kGpu] == 2048);
  CHECK(vc[VertexKind::kNic] == 2048);
  CHECK(vc[VertexKind::kNvSwitch] == 256);
  CHECK(vc[VertexKind::kLeaf] == 64);
  CHECK(vc[VertexKind::kSpine] == 32);
  // Directed edges: GPU<->NVSwitch, GPU<->NIC, NIC<->leaf (2 x 3 x 2048), leaf<->spine (2 x 8 x 8 x 4).
  CHECK(boost::num_edges(f.graph) == 2 * 3 * 2048 + 2 * 8 * 8 * 4);
}

TEST_CASE("the multi-plane fabric reaches 16,384 GPUs with 64-port switches, and no further", "[fabric]") {
  const auto c = fabric_counts(spec(FabricKind::kMultiPlane, 2048));
  CHECK(c.gpus == 16384);
  CHECK(c.leaves_per_tree == 64);
  CHECK(c.spines_per_tree == 32);
  CHECK(c.switch_links == 8 * 64 * 32);
  CHECK_THROWS_AS(fabric_counts(spec(FabricKind::kMultiPlane, 2049)), std::invalid_argument);
}

TEST_CASE("a multi-rail tree has rail-aligned leaves under one shared spine layer", "[fabric]") {
  const auto c = fabric_counts(spec(FabricKind::kMultiRail, 256));
  CHECK(c.trees == 1);
  CHECK(c.leaves_per_tree == 64);  // 8 rails x 8 leaves
  CHECK(c.spines_per_tree == 32);
  CHECK(c.switch_links == 64 * 32);
  CHECK(c.bisection_GBps == 1024 * 50.0);
  CHECK_THROWS_AS(fabric_counts(spec(FabricKind::kMultiRail, 257)), std::invalid_argument);
}

TEST_CASE("oversubscription thins the uplinks and the bisection", "[fabric]") {
  const auto full = fabric_counts(spec(FabricKind::kMultiPlane, 256, 64, 1));
  const auto half = fabric_counts(spec(FabricKind::kMultiPlane, 256, 64, 2));
  CHECK(half.spines_per_tree == 2);  // 8 leaves x 16 uplinks / 64
  CHECK(half.switch_links == full.switch_links / 2);
  CHECK(half.bisection_GBps == full.bisection_GBps / 2);
  CHECK_THROWS_AS(fabric_counts(spec(FabricKind::kMultiPlane, 4, 64, 3)), std::invalid_argument);
}

TEST_CASE("small fabrics: one leaf needs no spine, one node needs no switch at all", "[fabric]") {
  const auto c8 = fabric_counts(spec(FabricKind::kMultiPlane, 8));
  CHECK(c8.leaves_per_tree == 1);
  CHECK(c8.spines_per_tree == 0);
  CHECK(c8.switch_links == 0);
  CHECK(c8.bisection_GBps == 8 * 4 * 50.0);
  const auto c1 = fabric_counts(spec(FabricKind::kMultiPlane, 1));
  CHECK(c1.bisection_GBps == 4 * 160.0);  // the NVSwitch: 4 GPUs' NVLink each way
}
