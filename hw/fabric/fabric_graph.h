// A cluster fabric as a Boost.Graph: HGX nodes (GPUs on an NVSwitch, one NIC per GPU over PCIe)
// joined by fat-trees of InfiniBand switches: two-layer trees, either one tree per plane (DeepSeek's
// multi-plane fabric: NIC i of every node on plane i, planes never meet) or one tree whose leaves
// are rail-aligned (multi-rail: NIC i of consecutive nodes on a leaf of rail i, spines shared), or
// one three-layer tree with rail-aligned leaves (leaf, aggregation and core switches).
//
// Two-layer sizes (radix R, oversubscription o at the leaves): a leaf serves R/2 NICs and has
// U = R/(2o) uplinks; a tree of E endpoints has ceil(E / (R/2)) leaves and leaves x U / R spines
// (rounded up), and holds at most R x R/2 endpoints. Parallel links between one leaf and one spine
// are one edge of their summed bandwidth (ECMP over them is fluid in the flow model).
//
// Three-layer shape (the k-ary fat-tree of Al-Fares et al. generalised to partial sizes; N nodes of
// G GPUs, radix R, oversubscription o only at the leaves, U = R/(2o) with integer division):
//   leaves     rail-aligned as in multi-rail: node n's NIC i sits on the leaf of rail i of node
//              group n / (R/2); leaf index = group x G + rail, so the G rail leaves of a node group
//              are consecutive (all rails of a node share a pod when G divides R/2). L = G x
//              ceil(N / (R/2)) leaves; a leaf serves up to R/2 NICs.
//   pods       leaves in consecutive runs of R/2: pod of leaf l = l / (R/2); P = ceil(L / (R/2))
//              pods, the last one possibly partial.
//   aggs       U aggregation switches per pod (the spine layer of the two-layer trees, so their
//              vertices are VertexKind::kSpine and spines_per_tree counts them: P x U); agg j of
//              pod p has global index p x U + j. Each leaf has one cable to each agg of its pod.
//   cores      only when P >= 2 (one pod is a two-layer leaf/agg tree). Each agg has R/2 uplinks.
//              Core group j (U groups) serves agg j of every pod: C = ceil(P / 2) cores per group
//              (P aggs x R/2 uplinks over R ports), each agg cabled to every core of its group with
//              (R/2) / C parallel cables (integer division, as the two-layer spines: when C does not
//              divide R/2 the leftover uplinks stay dark), merged into one edge of summed
//              bandwidth. Core index = j x C + c. U x C cores in all. (A single leaf, G = 1 and
//              N <= R/2, needs no agg at all.)
//   limits     P <= R (a core needs a port for each pod), so at most R x R/2 leaves and R^3/4 NICs
//              (65,536 with R = 64, any o: oversubscription thins uplinks, not NIC ports). Larger
//              sizes, and U = 0 with more than one leaf, throw std::invalid_argument.
//   e.g. R = 64, o = 1, 8 GPUs per node: a pod is 4 node groups = 128 nodes (1,024 NICs), 32 aggs;
//   8,192 nodes = 64 pods, 2,048 leaves, 2,048 aggs, 1,024 cores (32 groups of 32), one cable per
//   agg-core pair.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace cs::hw {

enum class FabricKind : uint8_t { kMultiPlane, kMultiRail, kThreeLayer };
const char* fabric_kind_name(FabricKind k);

struct FabricSpec {
  FabricKind kind = FabricKind::kMultiPlane;
  int nodes = 1;
  int gpus_per_node = 8;
  int switch_radix = 64;
  int oversubscription = 1;      // leaf downlinks : uplinks, 1 (none), 2 or 4
  double nvlink_GBps = 0;        // per GPU and direction, to the node's NVSwitch
  double pcie_GBps = 0;          // GPU <-> NIC, per direction
  double nic_GBps = 0;           // NIC <-> leaf and every switch-to-switch port, per direction
  double hbm_GBps = 0;
  double nvlink_lat_ns = 0;      // GPU to GPU through the NVSwitch
  // InfiniBand latency as base + hops x hop: NIC to NIC through one leaf is base + hop, through a
  // spine (aggregation switch) base + 3 hops, through a core base + 5 hops. ISCA'25 Table 5 gives
  // 2.8 us (same leaf) and 3.7 us (cross leaf) for 64 B, hence hop = 0.45 us and base = 2.35 us
  // (derived).
  double ib_base_lat_ns = 0;
  double ib_hop_lat_ns = 0;
};

enum class VertexKind : uint8_t { kGpu, kNvSwitch, kNic, kLeaf, kSpine, kCore };  // kSpine: also a three-layer agg

struct FabricVertex {
  VertexKind kind = VertexKind::kGpu;
  int node = -1;   // GPUs, NVSwitches, NICs
  int index = 0;   // GPU/NIC: local index in the node; switches: index within their plane/rail set
  int plane = 0;   // leaves and spines: their plane (multi-plane) or rail (leaves of multi-rail and
                   // three-layer); 0 for three-layer aggs and cores
};

struct FabricEdge {
  double bw_GBps = 0;
  double lat_ns = 0;
};

using FabricGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, FabricVertex, FabricEdge>;
using FabricVertexId = FabricGraph::vertex_descriptor;

// Counts that follow from the spec in closed form (tests compare them with the built graph).
struct FabricCounts {
  int gpus = 0, nics = 0, nvswitches = 0;
  int trees = 0;             // separate switch networks: planes (multi-plane) or 1 (multi-rail, three-layer)
  int leaves_per_tree = 0;
  int spines_per_tree = 0;   // the layer above the leaves: spines, or all aggs of a three-layer tree
  // Leaf-spine (leaf-agg) cables plus, for three-layer, agg-core cables; a cable counts once (both
  // directions).
  int64_t switch_links = 0;
  // One direction, between the first and the second half of the nodes (all of one NVSwitch node
  // when there is one). Exact when each half sits on its own leaves (node counts a multiple of two
  // leaves' worth, as real sizes are) and, for three-layer with two or more pods, on its own pods
  // (a multiple of two pods' worth of nodes); otherwise local traffic makes the true cut larger.
  double bisection_GBps = 0;
  // Three-layer only (zero otherwise).
  int pods = 0;              // ceil(leaves / (R/2)); the last may hold fewer leaves
  int leaves_per_pod = 0;    // R/2 (the last pod may be partial)
  int aggs_per_pod = 0;      // R/(2o): one per leaf uplink
  int core_groups = 0;       // = aggs_per_pod when pods >= 2, else 0
  int cores_per_group = 0;   // ceil(pods / 2)
  int cores = 0;             // core_groups x cores_per_group
  int links_per_agg_core = 0;  // parallel cables between an agg and each core of its group
  int64_t core_links = 0;    // agg-core cables (included in switch_links)
  // Every kind: all InfiniBand switches (trees x (leaves + spines) + cores).
  int switches = 0;
};

// Validates the spec (sizes that fit the radix) and returns its counts; throws std::invalid_argument.
FabricCounts fabric_counts(const FabricSpec& spec);

// The built graph with the vertex ids the routers need.
struct BuiltFabric {
  FabricSpec spec;
  FabricCounts counts;
  FabricGraph graph;
  std::vector<FabricVertexId> gpu, nic;               // by global GPU index (node * G + local)
  std::vector<FabricVertexId> nvswitch;               // by node
  std::vector<std::vector<FabricVertexId>> leaf, spine;  // [tree][i]; three-layer aggs are spine[0]
  std::vector<FabricVertexId> core;                    // three-layer: by core index (group x C + c)
};

BuiltFabric build_fabric(const FabricSpec& spec);

}  // namespace cs::hw
