#include "hw/fabric/fabric_graph.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "hw/ceil_div.h"

namespace cs::hw {

namespace {

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

// The three-layer tree (see the header): leaves, pods, aggs per pod, core groups.
struct ThreeShape {
  int per_leaf = 0;        // R/2: NICs per leaf, leaves per pod, agg uplinks
  int groups = 0;          // node groups of R/2 nodes; each has one leaf per rail
  int leaves = 0, pods = 0;
  int aggs_per_pod = 0;    // U
  int cores_per_group = 0, links_per_agg_core = 0;
};

ThreeShape three_shape(const FabricSpec& s) {
  ThreeShape t;
  t.per_leaf = s.switch_radix / 2;
  t.groups = ceil_div(s.nodes, t.per_leaf);
  t.leaves = s.gpus_per_node * t.groups;
  t.pods = ceil_div(t.leaves, t.per_leaf);
  if (t.leaves <= 1) return t;  // one leaf switches everything itself
  t.aggs_per_pod = t.per_leaf / s.oversubscription;
  if (t.aggs_per_pod == 0)
    throw std::invalid_argument(std::to_string(s.switch_radix) + "-port leaves have no uplink at oversubscription " +
                                std::to_string(s.oversubscription));
  if (t.pods > s.switch_radix)
    throw std::invalid_argument(std::to_string(t.pods) + " pods (" + std::to_string(t.leaves) +
                                " leaves) exceed a three-layer tree of " + std::to_string(s.switch_radix) +
                                "-port switches (at most " + std::to_string(s.switch_radix) + " pods)");
  if (t.pods >= 2) {
    t.cores_per_group = ceil_div(t.pods * t.per_leaf, s.switch_radix);
    t.links_per_agg_core = t.per_leaf / t.cores_per_group;
  }
  return t;
}

}  // namespace

const char* fabric_kind_name(FabricKind k) {
  switch (k) {
    case FabricKind::kMultiPlane: return "multi_plane_fat_tree";
    case FabricKind::kMultiRail: return "multi_rail_fat_tree";
    case FabricKind::kThreeLayer: return "three_layer_fat_tree";
  }
  return "unknown";
}

FabricCounts fabric_counts(const FabricSpec& s) {
  if (s.nodes < 1 || s.gpus_per_node < 1 || s.switch_radix < 4 || s.switch_radix % 2 != 0)
    throw std::invalid_argument("a fabric needs at least one node and an even switch radix of 4 or more");
  if (s.oversubscription != 1 && s.oversubscription != 2 && s.oversubscription != 4)
    throw std::invalid_argument("oversubscription must be 1, 2 or 4");
  FabricCounts c;
  c.gpus = s.nodes * s.gpus_per_node;
  c.nics = c.gpus;
  c.nvswitches = s.nodes;
  if (s.kind == FabricKind::kThreeLayer) {
    const ThreeShape t = three_shape(s);
    c.trees = 1;
    c.leaves_per_tree = t.leaves;
    c.pods = t.pods;
    c.leaves_per_pod = t.per_leaf;
    c.aggs_per_pod = t.aggs_per_pod;
    c.spines_per_tree = t.pods * t.aggs_per_pod;
    c.core_groups = t.pods >= 2 ? t.aggs_per_pod : 0;
    c.cores_per_group = t.cores_per_group;
    c.cores = c.core_groups * c.cores_per_group;
    c.links_per_agg_core = t.links_per_agg_core;
    c.core_links = static_cast<int64_t>(c.spines_per_tree) * t.cores_per_group * t.links_per_agg_core;
    c.switch_links = static_cast<int64_t>(t.leaves) * t.aggs_per_pod + c.core_links;
    c.switches = t.leaves + c.spines_per_tree + c.cores;
    if (s.nodes == 1) {
      c.bisection_GBps = c.gpus / 2 * s.nvlink_GBps;
    } else {
      // Node-aligned halves on their own leaves (and pods): half the NICs send across, through at
      // most half the leaf uplinks and, with cores, half the agg uplinks.
      double cut = c.nics / 2.0;
      if (t.leaves > 1) cut = std::min(cut, t.leaves / 2.0 * t.aggs_per_pod);
      if (t.pods >= 2) cut = std::min(cut, static_cast<double>(c.core_links) / 2.0);
      c.bisection_GBps = cut * s.nic_GBps;
    }
    return c;
  }
  const TreeShape t = shape_of(s);
  c.trees = s.kind == FabricKind::kMultiPlane ? s.gpus_per_node : 1;
  c.leaves_per_tree = t.leaves;
  c.spines_per_tree = t.spines;
  c.switch_links = static_cast<int64_t>(c.trees) * t.leaves * t.spines * t.links_per_pair;
  c.switches = c.trees * (t.leaves + t.spines);
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

namespace {

template <class Both>
void build_three_layer(BuiltFabric& f, Both&& both) {
  const FabricSpec& s = f.spec;
  const ThreeShape t = three_shape(s);
  FabricGraph& g = f.graph;
  const int G = s.gpus_per_node, U = t.aggs_per_pod, C = t.cores_per_group;
  f.leaf.assign(1, {});
  f.spine.assign(1, {});
  for (int l = 0; l < t.leaves; ++l)
    f.leaf[0].push_back(boost::add_vertex(FabricVertex{VertexKind::kLeaf, -1, l, l % G}, g));
  for (int a = 0; a < t.pods * U; ++a)
    f.spine[0].push_back(boost::add_vertex(FabricVertex{VertexKind::kSpine, -1, a, 0}, g));
  for (int k = 0; k < f.counts.cores; ++k)
    f.core.push_back(boost::add_vertex(FabricVertex{VertexKind::kCore, -1, k, 0}, g));
  const double hop = s.ib_hop_lat_ns;
  for (int l = 0; l < t.leaves; ++l)
    for (int j = 0; j < U; ++j) both(f.leaf[0][l], f.spine[0][(l / t.per_leaf) * U + j], s.nic_GBps, hop, hop);
  if (t.pods >= 2)
    for (int p = 0; p < t.pods; ++p)
      for (int j = 0; j < U; ++j)
        for (int c = 0; c < C; ++c)
          both(f.spine[0][p * U + j], f.core[j * C + c], t.links_per_agg_core * s.nic_GBps, hop, hop);
  for (int n = 0; n < s.nodes; ++n)
    for (int i = 0; i < G; ++i)
      both(f.nic[n * G + i], f.leaf[0][(n / t.per_leaf) * G + i], s.nic_GBps, s.ib_base_lat_ns + hop, 0);
}

}  // namespace

BuiltFabric build_fabric(const FabricSpec& s) {
  BuiltFabric f;
  f.spec = s;
  f.counts = fabric_counts(s);
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
  if (s.kind == FabricKind::kThreeLayer) {
    build_three_layer(f, both);
    return f;
  }
  const TreeShape t = shape_of(s);
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
