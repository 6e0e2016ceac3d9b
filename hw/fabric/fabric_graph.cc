#include "hw/fabric/fabric_graph.h"

#include <stdexcept>
#include <string>

namespace cs::hw {

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

struct TreeShape {
  int endpoints = 0;  // NICs in one tree
  int leaves = 0, spines = 0;
  int uplinks_per_leaf = 0;
  int links_per_pair = 0;  // parallel cables between one leaf and one spine
};

TreeShape tree_shape(const FabricSpec& s, int endpoints, int leaves) {
  TreeShape t;
  t.endpoints = endpoints;
  t.leaves = leaves;
  t.uplinks_per_leaf = s.switch_radix / 2 / s.oversubscription;
  if (leaves <= 1) return t;  // one leaf switches everything itself
  t.spines = ceil_div(leaves * t.uplinks_per_leaf, s.switch_radix);
  t.links_per_pair = t.uplinks_per_leaf / t.spines;
  if (t.links_per_pair == 0 || leaves > s.switch_radix)
    throw std::invalid_argument(std::to_string(leaves) + " leaves exceed a two-layer tree of " +
                                std::to_string(s.switch_radix) + "-port switches");
  return t;
}

TreeShape shape_of(const FabricSpec& s) {
  const int per_leaf = s.switch_radix / 2;
  if (s.kind == FabricKind::kMultiPlane) return tree_shape(s, s.nodes, ceil_div(s.nodes, per_leaf));
  // Multi-rail: every rail has its own leaves (rail-aligned), all under one spine layer.
  return tree_shape(s, s.nodes * s.gpus_per_node, s.gpus_per_node * ceil_div(s.nodes, per_leaf));
}

}  // namespace

const char* fabric_kind_name(FabricKind k) {
  return k == FabricKind::kMultiPlane ? "multi_plane_fat_tree" : "multi_rail_fat_tree";
}

FabricCounts fabric_counts(const FabricSpec& s) {
  if (s.nodes < 1 || s.gpus_per_node < 1 || s.switch_radix < 4 || s.switch_radix % 2 != 0)
    throw std::invalid_argument("a fabric needs at least one node and an even switch radix of 4 or more");
  if (s.oversubscription != 1 && s.oversubscription != 2 && s.oversubscription != 4)
    throw std::invalid_argument("oversubscription must be 1, 2 or 4");
  const TreeShape t = shape_of(s);
  FabricCounts c;
  c.gpus = s.nodes * s.gpus_per_node;
  c.nics = c.gpus;
  c.nvswitches = s.nodes;
  c.trees = s.kind == FabricKind::kMultiPlane ? s.gpus_per_node : 1;
  c.leaves_per_tree = t.leaves;
  c.spines_per_tree = t.spines;
  c.switch_links = static_cast<int64_t>(c.trees) * t.leaves * t.spines * t.links_per_pair;
  if (s.nodes == 1) {
    c.bisection_GBps = c.gpus / 2 * s.nvlink_GBps;  // the NVSwitch is non-blocking
  } else {
    // Node-aligned halves: half the NICs of every tree send across; a tree passes at most what
    // the leaves of one side can send up to the spines (all of it when one leaf serves the tree).
    const double nic_half = t.endpoints / 2.0;
    const double uplink_half = t.leaves <= 1 ? nic_half : t.leaves / 2.0 * t.spines * t.links_per_pair;
    c.bisection_GBps = c.trees * std::min(nic_half, uplink_half) * s.nic_GBps;
  }
  return c;
}

BuiltFabric build_fabric(const FabricSpec& s) {
  BuiltFabric f;
  f.spec = s;
  f.counts = fabric_counts(s);
  const TreeShape t = shape_of(s);
  FabricGraph& g = f.graph;
  const int G = s.gpus_per_node;
  auto both = [&](FabricVertexId a, FabricVertexId b, double bw, double lat_ab, double lat_ba) {
    boost::add_edge(a, b, FabricEdge{bw, lat_ab}, g);
    boost::add_edge(b, a, FabricEdge{bw, lat_ba}, g);
  };
  for (int n = 0; n < s.nodes; ++n) {
    const auto sw = boost::add_vertex(FabricVertex{VertexKind::kNvSwitch, n, 0, 0}, g);
    f.nvswitch.push_back(sw);
    for (int i = 0; i < G; ++i) {
      const auto gpu = boost::add_vertex(FabricVertex{VertexKind::kGpu, n, i, 0}, g);
      const auto nic = boost::add_vertex(FabricVertex{VertexKind::kNic, n, i, i}, g);
      f.gpu.push_back(gpu);
      f.nic.push_back(nic);
      both(gpu, sw, s.nvlink_GBps, s.nvlink_lat_ns, 0);  // the GPU-to-GPU latency sits on the up-link
      both(gpu, nic, s.pcie_GBps, 0, 0);
    }
  }
  const int per_leaf = s.switch_radix / 2;
  f.leaf.resize(f.counts.trees);
  f.spine.resize(f.counts.trees);
  for (int tree = 0; tree < f.counts.trees; ++tree) {
    for (int l = 0; l < t.leaves; ++l)
      f.leaf[tree].push_back(boost::add_vertex(FabricVertex{VertexKind::kLeaf, -1, l, tree}, g));
    for (int sp = 0; sp < t.spines; ++sp)
      f.spine[tree].push_back(boost::add_vertex(FabricVertex{VertexKind::kSpine, -1, sp, tree}, g));
    for (int l = 0; l < t.leaves; ++l)
      for (int sp = 0; sp < t.spines; ++sp)
        both(f.leaf[tree][l], f.spine[tree][sp], t.links_per_pair * s.nic_GBps, s.ib_hop_lat_ns, s.ib_hop_lat_ns);
  }
  const int leaves_per_rail = ceil_div(s.nodes, per_leaf);
  for (int n = 0; n < s.nodes; ++n)
    for (int i = 0; i < G; ++i) {
      // Multi-plane: NIC i is on plane i, leaf n / per_leaf. Multi-rail: rail i has its own leaves.
      const int tree = s.kind == FabricKind::kMultiPlane ? i : 0;
      const int leaf = s.kind == FabricKind::kMultiPlane ? n / per_leaf : i * leaves_per_rail + n / per_leaf;
      both(f.nic[n * G + i], f.leaf[tree][leaf], s.nic_GBps, s.ib_base_lat_ns + s.ib_hop_lat_ns, 0);
    }
  return f;
}

}  // namespace cs::hw
