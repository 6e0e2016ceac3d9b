#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>
#include <string>

#include "fabric_fixture.h"
#include "hw/fabric/fabric_graph.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::hw;

namespace {

using cs::test::fabric_spec;

std::map<VertexKind, int> vertex_counts(const FabricGraph& g) {
  std::map<VertexKind, int> c;
  for (auto v : boost::make_iterator_range(boost::vertices(g))) ++c[g[v].kind];
  return c;
}

}  // namespace

TEST_CASE("DeepSeek's 2048-GPU fabric: 8 planes of two-layer trees of 64-port switches", "[fabric]") {
  const auto f = build_fabric(fabric_spec(FabricKind::kMultiPlane, 256));
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
  const auto c = fabric_counts(fabric_spec(FabricKind::kMultiPlane, 2048));
  CHECK(c.gpus == 16384);
  CHECK(c.leaves_per_tree == 64);
  CHECK(c.spines_per_tree == 32);
  CHECK(c.switch_links == 8 * 64 * 32);
  CHECK_THROWS_AS(fabric_counts(fabric_spec(FabricKind::kMultiPlane, 2049)), std::invalid_argument);
}

TEST_CASE("a multi-rail tree has rail-aligned leaves under one shared spine layer", "[fabric]") {
  const auto c = fabric_counts(fabric_spec(FabricKind::kMultiRail, 256));
  CHECK(c.trees == 1);
  CHECK(c.leaves_per_tree == 64);  // 8 rails x 8 leaves
  CHECK(c.spines_per_tree == 32);
  CHECK(c.switch_links == 64 * 32);
  CHECK(c.bisection_GBps == 1024 * 50.0);
  CHECK_THROWS_AS(fabric_counts(fabric_spec(FabricKind::kMultiRail, 257)), std::invalid_argument);
}

TEST_CASE("oversubscription thins the uplinks and the bisection", "[fabric]") {
  const auto full = fabric_counts(fabric_spec(FabricKind::kMultiPlane, 256, 64, 1));
  const auto half = fabric_counts(fabric_spec(FabricKind::kMultiPlane, 256, 64, 2));
  CHECK(half.spines_per_tree == 2);  // 8 leaves x 16 uplinks / 64
  CHECK(half.switch_links == full.switch_links / 2);
  CHECK(half.bisection_GBps == full.bisection_GBps / 2);
  CHECK_THROWS_AS(fabric_counts(fabric_spec(FabricKind::kMultiPlane, 4, 64, 3)), std::invalid_argument);
}

TEST_CASE("small fabrics: one leaf needs no spine, one node needs no switch at all", "[fabric]") {
  const auto c8 = fabric_counts(fabric_spec(FabricKind::kMultiPlane, 8));
  CHECK(c8.leaves_per_tree == 1);
  CHECK(c8.spines_per_tree == 0);
  CHECK(c8.switch_links == 0);
  CHECK(c8.bisection_GBps == 8 * 4 * 50.0);
  const auto c1 = fabric_counts(fabric_spec(FabricKind::kMultiPlane, 1));
  CHECK(c1.bisection_GBps == 4 * 160.0);  // the NVSwitch: 4 GPUs' NVLink each way
}

namespace {

FabricSpec three(int nodes, int radix = 64, int over = 1, int gpus_per_node = 8) {
  FabricSpec s = fabric_spec(FabricKind::kThreeLayer, nodes, radix, over);
  s.gpus_per_node = gpus_per_node;
  return s;
}

}  // namespace

TEST_CASE("a three-layer tree of 64-port switches: 1,024 nodes make 8 pods", "[fabric]") {
  const auto f = build_fabric(three(1024));
  const auto& c = f.counts;
  CHECK(std::string(fabric_kind_name(FabricKind::kThreeLayer)) == "three_layer_fat_tree");
  CHECK(c.gpus == 8192);
  CHECK(c.trees == 1);
  CHECK(c.leaves_per_tree == 256);  // 8 rails x 1024 / 32 node groups
  CHECK(c.leaves_per_pod == 32);
  CHECK(c.pods == 8);               // 256 leaves / 32: 128 nodes, all their rails, per pod
  CHECK(c.aggs_per_pod == 32);      // one per leaf uplink
  CHECK(c.spines_per_tree == 8 * 32);
  CHECK(c.core_groups == 32);
  CHECK(c.cores_per_group == 4);    // 8 aggs x 32 uplinks / 64 ports
  CHECK(c.cores == 128);
  CHECK(c.links_per_agg_core == 8); // 32 uplinks over 4 cores
  CHECK(c.core_links == 256 * 32);
  CHECK(c.switch_links == 256 * 32 + 256 * 32);  // leaf-agg and agg-core: every uplink cabled
  CHECK(c.switches == 256 + 256 + 128);
  CHECK(c.bisection_GBps == 4096 * 50.0);        // full bisection: half the NICs
  auto vc = vertex_counts(f.graph);
  CHECK(vc[VertexKind::kGpu] == 8192);
  CHECK(vc[VertexKind::kNic] == 8192);
  CHECK(vc[VertexKind::kNvSwitch] == 1024);
  CHECK(vc[VertexKind::kLeaf] == 256);
  CHECK(vc[VertexKind::kSpine] == 256);
  CHECK(vc[VertexKind::kCore] == 128);
  CHECK(f.core.size() == 128u);
  // Directed edges: node-internal and NIC<->leaf (2 x 3 x 8192), leaf<->agg (2 x 256 x 32),
  // agg<->core with 8 parallel cables merged (2 x 256 aggs x 4 cores).
  CHECK(boost::num_edges(f.graph) == 2 * 3 * 8192 + 2 * 256 * 32 + 2 * 256 * 4);
  // Every NIC of node n, rail i on leaf (n / 32) x 8 + i; the leaf's rail is its plane field.
  for (auto e : boost::make_iterator_range(boost::out_edges(f.nic[77 * 8 + 5], f.graph))) {
    const auto& v = f.graph[boost::target(e, f.graph)];
    if (v.kind != VertexKind::kLeaf) continue;
    CHECK(v.index == (77 / 32) * 8 + 5);
    CHECK(v.plane == 5);
  }
}

TEST_CASE("the three-layer tree reaches 65,536 GPUs with 64-port switches, and no further", "[fabric]") {
  const auto c = fabric_counts(three(8192));
  CHECK(c.gpus == 65536);
  CHECK(c.leaves_per_tree == 2048);
  CHECK(c.pods == 64);
  CHECK(c.spines_per_tree == 2048);
  CHECK(c.cores_per_group == 32);
  CHECK(c.cores == 1024);                  // (k/2)^2 of the k-ary fat-tree
  CHECK(c.links_per_agg_core == 1);
  CHECK(c.switch_links == 2 * 2048 * 32);  // 65,536 cables at each layer
  CHECK(c.switches == 2048 + 2048 + 1024);
  CHECK(c.bisection_GBps == 32768 * 50.0);
  CHECK_THROWS_AS(fabric_counts(three(8193)), std::invalid_argument);  // 65 pods
  // 1:2 at the leaves: half the aggs and cores, half the cables, half the bisection; the same limit.
  const auto h = fabric_counts(three(8192, 64, 2));
  CHECK(h.aggs_per_pod == 16);
  CHECK(h.cores == 16 * 32);
  CHECK(h.switch_links == 2048 * 16 + 64 * 16 * 32);
  CHECK(h.bisection_GBps == c.bisection_GBps / 2);
  CHECK_THROWS_AS(fabric_counts(three(8193, 64, 2)), std::invalid_argument);
}

TEST_CASE("three-layer trees at partial sizes", "[fabric]") {
  SECTION("one pod is a two-layer leaf/agg tree without cores") {
    const auto f = build_fabric(three(128));
    const auto& c = f.counts;
    CHECK(c.leaves_per_tree == 32);
    CHECK(c.pods == 1);
    CHECK(c.aggs_per_pod == 32);
    CHECK(c.cores == 0);
    CHECK(c.core_links == 0);
    CHECK(c.switch_links == 32 * 32);
    CHECK(c.bisection_GBps == 512 * 50.0);
    CHECK(vertex_counts(f.graph)[VertexKind::kCore] == 0);
    CHECK(boost::num_edges(f.graph) == 2 * 3 * 1024 + 2 * 32 * 32);
  }
  SECTION("129 nodes open a second pod and the cores") {
    const auto c = fabric_counts(three(129));
    CHECK(c.leaves_per_tree == 40);  // 5 node groups x 8 rails
    CHECK(c.pods == 2);              // 32 + 8 leaves
    CHECK(c.cores_per_group == 1);
    CHECK(c.links_per_agg_core == 32);
    CHECK(c.core_links == 2 * 32 * 32);
    CHECK(c.switch_links == 40 * 32 + 2 * 32 * 32);
  }
  SECTION("three pods: two cores per group, 16 cables to each") {
    const auto c = fabric_counts(three(384));
    CHECK(c.pods == 3);
    CHECK(c.cores_per_group == 2);
    CHECK(c.links_per_agg_core == 16);
    CHECK(c.cores == 64);
  }
  SECTION("five pods: three cores per group, 10 cables to each, two uplinks of each agg dark") {
    const auto c = fabric_counts(three(640));
    CHECK(c.pods == 5);
    CHECK(c.cores_per_group == 3);
    CHECK(c.links_per_agg_core == 10);
    CHECK(c.core_links == 5 * 32 * 3 * 10);
  }
  SECTION("radix 8: pods of 4 leaves hold half the rails of a node group") {
    const auto f = build_fabric(three(16, 8));
    const auto& c = f.counts;
    CHECK(c.leaves_per_tree == 32);
    CHECK(c.pods == 8);
    CHECK(c.aggs_per_pod == 4);
    CHECK(c.cores_per_group == 4);
    CHECK(c.links_per_agg_core == 1);
    CHECK(c.cores == 16);
    CHECK(c.switch_links == 32 * 4 + 32 * 4);
    CHECK(c.bisection_GBps == 64 * 50.0);
    auto vc = vertex_counts(f.graph);
    CHECK(vc[VertexKind::kLeaf] == 32);
    CHECK(vc[VertexKind::kSpine] == 32);
    CHECK(vc[VertexKind::kCore] == 16);
    CHECK(boost::num_edges(f.graph) == 2 * 3 * 128 + 2 * 32 * 4 + 2 * 32 * 4);
    CHECK_THROWS_AS(fabric_counts(three(17, 8)), std::invalid_argument);  // radix 8: at most 128 NICs
    CHECK(fabric_counts(three(16, 8, 4)).aggs_per_pod == 1);
    CHECK(fabric_counts(three(16, 8, 4)).bisection_GBps == 16 * 50.0);
  }
  SECTION("a single leaf needs no agg; a leaf without uplinks cannot join two") {
    const auto one = fabric_counts(three(4, 8, 1, 1));
    CHECK(one.leaves_per_tree == 1);
    CHECK(one.aggs_per_pod == 0);
    CHECK(one.switch_links == 0);
    CHECK(one.switches == 1);
    CHECK_THROWS_AS(fabric_counts(three(2, 4, 4)), std::invalid_argument);  // 4-port leaf at 1:4: no uplink
  }
}

}  // namespace CS_TEST_FILE
